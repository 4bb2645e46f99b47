/* nng pub0 publisher with an epoch and a sequence number per event. */
#include <stdatomic.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>

#include "event-pub.h"
#include "nng-util.h"

struct EventPub {
        nng_socket sock;
        bool sock_open;
        uint64_t epoch;
        uint64_t seq;
        atomic_uint subscribers; /* written by nng's pipe callbacks */
};

static uint64_t realtime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* nng thread.  nng_close() waits for these. */
static void pipe_cb(nng_pipe pipe, nng_pipe_ev ev, void *arg) {
        EventPub *p = arg;

        (void) pipe;
        if (ev == NNG_PIPE_EV_ADD_POST)
                atomic_fetch_add(&p->subscribers, 1);
        else if (ev == NNG_PIPE_EV_REM_POST)
                atomic_fetch_sub(&p->subscribers, 1);
}

int event_pub_new(const char *url, int max_subscriber_backlog, const TlsSettings *tls, EventPub **ret) {
        EventPub *p;
        int k;

        if (isempty(url) || !ret || max_subscriber_backlog < 0)
                return -EINVAL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        atomic_init(&p->subscribers, 0);
        /* Never 0, so that 0 can mean "no epoch" to a subscriber. */
        p->epoch = MAX(realtime_usec(), 1u);

        /* pub never receives; a tiny limit makes a misbehaving peer harmless. */
        k = nng_util_open(nng_pub0_open, 1024, &p->sock);
        if (k < 0)
                goto fail;
        p->sock_open = true;
        k = nng_errno(nng_socket_set_int(p->sock, NNG_OPT_SENDBUF,
                                         max_subscriber_backlog > 0 ? max_subscriber_backlog
                                                                    : EVENT_PUB_DEFAULT_BACKLOG));
        if (k < 0)
                goto fail;
        k = nng_errno(nng_pipe_notify(p->sock, NNG_PIPE_EV_ADD_POST, pipe_cb, p));
        if (k < 0)
                goto fail;
        k = nng_errno(nng_pipe_notify(p->sock, NNG_PIPE_EV_REM_POST, pipe_cb, p));
        if (k < 0)
                goto fail;

        k = nng_util_listen(p->sock, url, tls, NULL);
        if (k < 0)
                goto fail;

        *ret = p;
        return 0;

fail:
        event_pub_free(p);
        return k;
}

EventPub *event_pub_free(EventPub *p) {
        if (!p)
                return NULL;
        if (p->sock_open)
                nng_close(p->sock);
        free(p);
        return NULL;
}

int event_pub_send(EventPub *p, Envelope *env) {
        nng_msg *m;
        int k;

        if (!p || !env)
                return -EINVAL;

        env->epoch = p->epoch;
        env->seq = p->seq + 1;
        k = nng_util_msg_from_envelope(env, &m);
        if (k < 0)
                return k;
        p->seq++;

        k = nng_errno(nng_sendmsg(p->sock, m, NNG_FLAG_NONBLOCK));
        if (k < 0)
                nng_msg_free(m);
        return k;
}

uint64_t event_pub_epoch(const EventPub *p) {
        return p ? p->epoch : 0;
}

uint64_t event_pub_seq(const EventPub *p) {
        return p ? p->seq : 0;
}

unsigned event_pub_subscribers(const EventPub *p) {
        return p ? atomic_load(&((EventPub *) p)->subscribers) : 0;
}
