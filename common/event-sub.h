/* Event endpoint, subscribing side: an nng sub0 socket (subscribed to
 * everything) dialing one publisher URL, reconnecting by itself.  Events are
 * decoded and delivered on the loop thread in the order received.
 *
 * Lining up with the publisher's (epoch, seq), for each event:
 *   - no position yet (first event), another epoch, or a gap
 *     (seq != last + 1): the resync hook runs first, with the reason, and
 *     then the event is delivered all the same;  the hook is expected to
 *     ask the publisher for a snapshot (pub/sub can drop, docs/DESIGN.md §4);
 *   - seq <= last in the same epoch (already covered by a snapshot, see
 *     event_sub_set_position()): dropped, counted as stale;
 *   - otherwise the event is delivered.
 * Malformed events (undecodable, wrong version, no epoch) are counted and
 * dropped.
 *
 * Threading: loop thread only; callbacks run on the loop thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "codec.h"
#include "macro.h"
#include "tls.h"

typedef struct EventSub EventSub;

#define EVENT_SUB_DEFAULT_RECV_BUFFER 1024

typedef struct EventSubConfig {
        size_t max_event_bytes; /* NNG_OPT_RECVMAXSZ; 0: SPARK_MAX_MESSAGE_BYTES */
        int reconnect_min_ms;   /* 0: 100 */
        int reconnect_max_ms;   /* 0: 2000 */
        int recv_buffer;        /* events queued in nng before it drops (at most 8192);
                                 * 0: EVENT_SUB_DEFAULT_RECV_BUFFER */
        const TlsSettings *tls; /* for a tls+tcp:// URL: as RpcClientConfig's */
} EventSubConfig;

/* env is freed when the handler returns. */
typedef void (*EventHandler)(EventSub *s, const Envelope *env, void *userdata);
typedef void (*EventResyncHandler)(EventSub *s, const char *reason, void *userdata);

typedef struct EventSubStats {
        uint64_t received;  /* messages taken from nng */
        uint64_t delivered; /* handed to the event handler */
        uint64_t malformed; /* dropped: could not be decoded */
        uint64_t stale;     /* dropped: seq already covered */
        uint64_t resyncs;   /* resync hook calls */
        uint64_t lost;      /* dropped for lack of memory before the loop saw them */
} EventSubStats;

/* url may list several publishers, comma-separated, each dialled: the
 * masters of a cluster, of which only the leader publishes.  cfg (not for
 * tls+tcp://) and resync may be NULL.  A publisher that is not there yet, or
 * refuses our certificate, is not an error (the dialer keeps trying); bad
 * TLS settings are (nng-tls.h). */
int event_sub_new(sd_event *e, const char *url, const EventSubConfig *cfg, EventHandler handler,
                  EventResyncHandler resync, void *userdata, EventSub **ret);

/* May be called from the handler or the resync hook.  Events already
 * received but not yet delivered are dropped.  (nng 1.5.2 can hang in
 * nng_close() if an event is arriving at that instant, see rpc-server.h.) */
EventSub *event_sub_free(EventSub *s);

/* After a snapshot that reflects the publisher at (epoch, seq): later events
 * of that epoch with a seq <= seq are dropped as stale, seq + 1 continues
 * without a resync. */
void event_sub_set_position(EventSub *s, uint64_t epoch, uint64_t seq);

/* Forget the position: the next event triggers a resync. */
void event_sub_reset_position(EventSub *s);

void event_sub_get_stats(const EventSub *s, EventSubStats *ret);
const char *event_sub_url(const EventSub *s);

DEFINE_TRIVIAL_CLEANUP_FUNC(EventSub *, event_sub_free);
