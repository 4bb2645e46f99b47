/* Standby masters on ZooKeeper (master.recovery_mode = "zookeeper",
 * docs/ha.md): the session, the election of one leader with ephemeral
 * sequential znodes, and the fencing of a leader that loses its session.
 *
 * The ZooKeeper client's own threads call our watcher; it only hands the
 * event to the loop (a LoopQueue, as nng's callbacks do).  Everything else
 * runs on the loop thread, with the client's synchronous calls. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* libzookeeper_mt: the synchronous calls exist only with THREADED */
#ifndef THREADED
#define THREADED 1
#endif
#include <errno.h>
#include <zookeeper/zookeeper.h>

#include "macro.h"

typedef struct Master Master;
typedef struct MasterHa MasterHa;

typedef enum MasterRole {
        MASTER_ROLE_STANDBY,     /* connecting, or another master leads */
        MASTER_ROLE_LEADER,
        MASTER_ROLE_SUSPENDED,   /* leader without a ZooKeeper connection: changes nothing */
        MASTER_ROLE_REFUSING,    /* elected, but the state in ZooKeeper cannot be read */
        _MASTER_ROLE_MAX,
        _MASTER_ROLE_INVALID = -EINVAL,
} MasterRole;

const char *master_role_to_string(MasterRole r);

/* Connects and stands for election; the master leads once
 * master_ha_became_leader() is called from the loop. */
int master_ha_start(Master *m, MasterHa **ret);
MasterHa *master_ha_free(MasterHa *h);

MasterRole master_ha_role(const MasterHa *h);
/* A suspended leader that has been without ZooKeeper for longer than its
 * session timeout may have been replaced: it sends its workers and drivers
 * on (answers as a standby) until the connection is back. */
bool master_ha_presumed_replaced(const MasterHa *h);
/* The leader's request URL as its election znode says, NULL if unknown. */
const char *master_ha_leader_url(const MasterHa *h);
/* The leader's epoch: its election znode's sequence number, higher for each
 * newer leader.  0 unless leading. */
uint64_t master_ha_epoch(const MasterHa *h);
/* The ZooKeeper handle and the leader's election znode, for the state writes
 * (master-zk-state.c), which check that znode in each batch. */
zhandle_t *master_ha_handle(const MasterHa *h);
const char *master_ha_election_node(const MasterHa *h);
const char *master_ha_dir(const MasterHa *h);

/* ZooKeeper's errors as negative errno, for logs and returns. */
int zk_errno(int zrc);

/* master.c: called by master-ha.c on the loop when this master has won the
 * election (load the state, start placing); a negative return means the
 * state could not be read: the master gives up its candidacy for a while. */
int master_became_leader(Master *m);
/* ... and when the state is no longer ours to change: exits the loop so
 * that systemd starts the master again, as a standby. */
void master_deposed(Master *m, const char *why);

DEFINE_TRIVIAL_CLEANUP_FUNC(MasterHa *, master_ha_free);
