/* nng sub0 subscriber on the sd-event loop.  One receive aio, re-posted from
 * its own callback on nng's thread; every message goes to the loop queue
 * and is decoded and checked against (epoch, seq) on the loop. */
#include <inttypes.h>
#include <stdatomic.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>

#include "endpoint-list.h"
#include "event-sub.h"
#include "loop-queue.h"
#include "nng-util.h"

#define EVENT_SUB_RECONNECT_MIN_MS 100
#define EVENT_SUB_RECONNECT_MAX_MS 2000

typedef struct EventMessage {
        LoopQueueItem item;
        EventSub *sub;
        nng_msg *msg;
} EventMessage;

struct EventSub {
        unsigned n_ref;
        char *url;
        nng_socket sock;
        bool sock_open;
        nng_aio *aio;
        LoopQueue *queue;
        size_t max_event_bytes;

        EventHandler handler;
        EventResyncHandler resync;
        void *userdata;

        atomic_bool closing;            /* read by nng threads */
        atomic_uint_fast64_t lost;      /* written by nng threads */
        bool closed;

        bool positioned;
        uint64_t epoch;
        uint64_t last_seq;

        EventSubStats stats;
};

static void sub_ref(EventSub *s) {
        s->n_ref++;
}

static void sub_unref(EventSub *s) {
        if (--s->n_ref > 0)
                return;
        free(s->url);
        free(s);
}

static void event_message_free(EventMessage *em) {
        if (em->msg)
                nng_msg_free(em->msg);
        free(em);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(EventMessage *, event_message_free);

/* Loop thread.  Returns the reason to resynchronise, NULL to deliver as is,
 * or "" to drop the event as stale. */
static const char *sub_check_position(EventSub *s, const Envelope *env, char *buf, size_t size) {
        if (!s->positioned)
                return "first event";
        if (env->epoch != s->epoch) {
                snprintf(buf, size, "publisher epoch changed from %" PRIu64 " to %" PRIu64, s->epoch, env->epoch);
                return buf;
        }
        if (env->seq <= s->last_seq)
                return "";
        if (env->seq != s->last_seq + 1) {
                snprintf(buf, size, "gap: expected seq %" PRIu64 ", got %" PRIu64, s->last_seq + 1, env->seq);
                return buf;
        }
        return NULL;
}

static void event_dispatch(void *userdata, bool discard) {
        _cleanup_(event_message_freep) EventMessage *em = userdata;
        _cleanup_envelope_ Envelope *env = NULL;
        EventSub *s = em->sub;
        const char *reason;
        char buf[128];
        int k;

        if (discard)
                return;

        s->stats.received++;
        k = envelope_decode(nng_msg_body(em->msg), nng_msg_len(em->msg), s->max_event_bytes, &env);
        if (k < 0 || env->epoch == 0) {
                s->stats.malformed++;
                return;
        }

        reason = sub_check_position(s, env, buf, sizeof(buf));
        if (reason && !reason[0]) {
                s->stats.stale++;
                return;
        }

        s->positioned = true;
        s->epoch = env->epoch;
        s->last_seq = env->seq;

        sub_ref(s);
        if (reason) {
                s->stats.resyncs++;
                if (s->resync)
                        s->resync(s, reason, s->userdata);
        }
        if (!s->closed) {
                s->stats.delivered++;
                s->handler(s, env, s->userdata);
        }
        sub_unref(s);
}

static void sub_start_recv(EventSub *s) {
        nng_recv_aio(s->sock, s->aio);
}

/* nng thread. */
static void sub_aio_cb(void *arg) {
        EventSub *s = arg;
        int rv = nng_aio_result(s->aio);
        EventMessage *em;
        nng_msg *m;

        if (rv != 0) {
                if (rv == NNG_ECLOSED || rv == NNG_ECANCELED || atomic_load(&s->closing))
                        return;
                sub_start_recv(s);
                return;
        }

        m = nng_aio_get_msg(s->aio);
        nng_aio_set_msg(s->aio, NULL);

        em = malloc(sizeof(*em));
        if (!em) {
                /* The loop will see a gap and resynchronise. */
                nng_msg_free(m);
                atomic_fetch_add(&s->lost, 1);
        } else {
                *em = (EventMessage) { .sub = s, .msg = m };
                loop_queue_item_init(&em->item, event_dispatch, em);
                loop_queue_push_item(s->queue, &em->item);
        }

        if (!atomic_load(&s->closing))
                sub_start_recv(s);
}

static void sub_close(EventSub *s) {
        if (s->closed)
                return;
        s->closed = true;
        atomic_store(&s->closing, true);

        if (s->sock_open)
                nng_close(s->sock);
        s->sock_open = false;
        if (s->aio)
                nng_aio_stop(s->aio);
        s->queue = loop_queue_free(s->queue); /* frees the undelivered events */
        if (s->aio) {
                nng_aio_free(s->aio);
                s->aio = NULL;
        }
}

EventSub *event_sub_free(EventSub *s) {
        if (!s)
                return NULL;
        sub_close(s);
        sub_unref(s);
        return NULL;
}

int event_sub_new(sd_event *e, const char *url, const EventSubConfig *cfg, EventHandler handler,
                  EventResyncHandler resync, void *userdata, EventSub **ret) {
        _cleanup_(event_sub_freep) EventSub *s = NULL;
        EndpointList urls = {};
        int k;

        if (!e || isempty(url) || !handler || !ret)
                return -EINVAL;
        if (cfg && cfg->recv_buffer < 0)
                return -EINVAL;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->n_ref = 1;
        s->handler = handler;
        s->resync = resync;
        s->userdata = userdata;
        s->max_event_bytes = cfg && cfg->max_event_bytes > 0 ? cfg->max_event_bytes : SPARK_MAX_MESSAGE_BYTES;
        atomic_init(&s->closing, false);
        atomic_init(&s->lost, 0);

        s->url = strdup(url);
        if (!s->url)
                return -ENOMEM;

        k = loop_queue_new(e, &s->queue);
        if (k < 0)
                return k;

        k = nng_util_open(nng_sub0_open, s->max_event_bytes, &s->sock);
        if (k < 0)
                return k;
        s->sock_open = true;
        k = nng_util_set_reconnect(s->sock, cfg && cfg->reconnect_min_ms > 0 ? cfg->reconnect_min_ms
                                                                            : EVENT_SUB_RECONNECT_MIN_MS,
                                   cfg && cfg->reconnect_max_ms > 0 ? cfg->reconnect_max_ms
                                                                    : EVENT_SUB_RECONNECT_MAX_MS);
        if (k < 0)
                return k;
        k = nng_errno(nng_socket_set_int(s->sock, NNG_OPT_RECVBUF,
                                         cfg && cfg->recv_buffer > 0 ? cfg->recv_buffer
                                                                     : EVENT_SUB_DEFAULT_RECV_BUFFER));
        if (k < 0)
                return k;
        /* The empty prefix matches every message. */
        k = nng_errno(nng_socket_set(s->sock, NNG_OPT_SUB_SUBSCRIBE, "", 0));
        if (k < 0)
                return k;

        k = nng_errno(nng_aio_alloc(&s->aio, sub_aio_cb, s));
        if (k < 0)
                return k;
        sub_start_recv(s);

        /* Several publishers, comma-separated (the masters of a cluster,
         * of which only the leader publishes): one dialer each. */
        k = endpoint_list_parse(url, &urls);
        if (k < 0)
                return k;
        for (size_t i = 0; i < urls.n; i++) {
                k = nng_util_dial(s->sock, urls.urls[i], cfg ? cfg->tls : NULL, NNG_FLAG_NONBLOCK, NULL);
                if (k < 0) {
                        endpoint_list_done(&urls);
                        return k;
                }
        }
        endpoint_list_done(&urls);

        *ret = TAKE_PTR(s);
        return 0;
}

void event_sub_set_position(EventSub *s, uint64_t epoch, uint64_t seq) {
        if (!s)
                return;
        s->positioned = true;
        s->epoch = epoch;
        s->last_seq = seq;
}

void event_sub_reset_position(EventSub *s) {
        if (s)
                s->positioned = false;
}

void event_sub_get_stats(const EventSub *s, EventSubStats *ret) {
        if (!s || !ret)
                return;
        *ret = s->stats;
        ret->lost = atomic_load(&((EventSub *) s)->lost);
}

const char *event_sub_url(const EventSub *s) {
        return s ? s->url : NULL;
}
