/* Which of the cluster's masters to talk to (cluster.master may list
 * several, docs/ha.md): the one that leads.  A standby answers every
 * request with "standby, leader is URL"; a leader that stops answering is
 * replaced by trying the others in turn: at the first call without an
 * answer when its connection is known to be gone (its process died or
 * closed it, rpc_client_connection_lost()), else after
 * MASTER_LINK_MISSES_MAX calls in a row. */
#pragma once

#include <stdbool.h>

#include "codec.h"
#include "endpoint-list.h"

/* Calls in a row without an answer before the next master is tried, while
 * the connection to it stays up or was never made (a slow master, a
 * dropped packet, a host that does not answer: nothing says it is gone). */
#define MASTER_LINK_MISSES_MAX 2

typedef struct MasterLink {
        EndpointList urls;
        size_t current;
        unsigned misses;
        unsigned misses_max;     /* MASTER_LINK_MISSES_MAX unless the caller sets it */
        /* The master we left because it did not answer, +1 (0: none): a
         * standby may still name it as the leader until its session
         * expires, and is asked again rather than followed back to it. */
        size_t left_silent;
} MasterLink;

int master_link_init(MasterLink *l, const char *urls);
void master_link_done(MasterLink *l);
const char *master_link_url(const MasterLink *l);
/* After a call to master_link_url(): error and reply as an RpcReplyHandler
 * gets them, and whether the connection to that master is known to be
 * gone (rpc_client_connection_lost() of the client that made the call).
 * Returns true when the caller should dial master_link_url() again, which
 * changed: a standby named the leader (one of the listed masters only: a
 * URL from the network is not dialled otherwise), a standby knew none, the
 * current one did not answer with its connection gone, or it missed
 * misses_max calls in a row. */
bool master_link_update(MasterLink *l, int error, const Envelope *reply, bool connection_lost);
