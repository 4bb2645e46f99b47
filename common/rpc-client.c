/* nng req0 client on the sd-event loop, plus a blocking one-shot call.
 *
 * Each call is a small state machine (SEND → RECV → DONE) on its own
 * context and aio.  nng owns a call while it is in SEND or RECV; its aio
 * callback moves it to DONE and pushes it onto the loop queue, where the
 * reply is decoded and the user's callback runs.  The list of calls is
 * touched only by the loop.
 *
 * Resending after a dropped connection is ours, not nng's: nng 1.5 resends
 * only from a per-context resend timer, and arming one puts the context on
 * nng's one global timer list, which is kept sorted by a linear walk from
 * its head — with every call's timer later than all the others, each send
 * walked every pending call of every client (the master, 100,000 launches
 * in flight: most of its time).  Without a resend timer nng fails the
 * receive with NNG_ECONNRESET when the connection drops, and the call sends
 * its request again (a copy kept for that) on the next connection. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "loop-queue.h"
#include "nng-util.h"
#include "peer-proof.h"
#include "rpc-channel-call.h"
#include "rpc-client.h"

#define RPC_CLIENT_RECONNECT_MIN_MS 100
#define RPC_CLIENT_RECONNECT_MAX_MS 2000
/* rpc_call_sync(): with no timed resend wanted, the resend timer is set
 * beyond the call's deadline (a zero or infinite value also disables nng's
 * resend after a reconnect). */
#define RESEND_BEYOND_DEADLINE_MS 60000
/* Challenges answered per call: one normally, another if the connection
 * changed in between (a nonce is good for its connection only). */
#define PROOF_ROUNDS_MAX 3

typedef enum RpcCallState {
        RPC_CALL_SEND, /* nng: waiting for a connection and sending */
        RPC_CALL_RECV, /* nng: waiting for the answer */
        RPC_CALL_DONE, /* loop: queued for completion */
        _RPC_CALL_STATE_MAX,
        _RPC_CALL_STATE_INVALID = -EINVAL,
} RpcCallState;

typedef struct RpcCall {
        RpcClient *client;
        struct RpcCall *prev, *next;
        nng_ctx ctx;
        nng_aio *aio;
        RpcCallState state;
        int nng_error;
        nng_msg *request;       /* a copy, to resend after a dropped connection
                                 * or with a proof of role */
        unsigned proof_rounds;
        nng_msg *reply;
        uint64_t deadline_ms;
        LoopQueueItem item;
        RpcReplyHandler callback;
        void *userdata;
} RpcCall;

struct RpcClient {
        char *url;
        nng_socket sock;
        bool sock_open;
        LoopQueue *queue;
        bool queue_shared;      /* the caller's (RpcClientConfig.queue) */
        RpcCall *calls;
        unsigned n_calls;
        size_t max_reply_bytes;
        int resend_ms;
        PeerSigner *signer;     /* proves our role on a TLS server */
        atomic_bool closing; /* read by nng threads */
        atomic_int link;     /* RpcLinkState: written by nng's pipe callbacks */
        bool closed;
};

/* What nng told us last about the connection.  A req0 socket with one
 * dialer has at most one pipe at a time, so the last event is the state. */
typedef enum RpcLinkState {
        RPC_LINK_NEVER, /* no connection yet */
        RPC_LINK_UP,    /* NNG_PIPE_EV_ADD_POST */
        RPC_LINK_LOST,  /* NNG_PIPE_EV_REM_POST, and no new pipe since */
} RpcLinkState;

/* nng thread.  nng_close() returns only after these have run. */
static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg) {
        RpcClient *c = arg;

        (void) p;
        if (ev == NNG_PIPE_EV_ADD_POST)
                atomic_store(&c->link, RPC_LINK_UP);
        else if (ev == NNG_PIPE_EV_REM_POST)
                atomic_store(&c->link, RPC_LINK_LOST);
}

/* Maps a decoded answer to the callback's error: an Error body carries a
 * negative errno from the server. */
static int reply_error(const Envelope *env) {
        if (env->body_case != SPARK__ENVELOPE__BODY_ERROR)
                return 0;
        if (env->error && env->error->code < 0)
                return env->error->code;
        return -EIO;
}

/* nng thread. */
static void call_aio_cb(void *arg) {
        RpcCall *call = arg;
        RpcClient *c = call->client;
        int rv = nng_aio_result(call->aio);
        int remaining;
        nng_msg *m;

        switch (call->state) {
        case RPC_CALL_SEND:
                if (rv != 0) {
                        m = nng_aio_get_msg(call->aio);
                        nng_aio_set_msg(call->aio, NULL);
                        if (m)
                                nng_msg_free(m);
                        break;
                }
                remaining = nng_util_remaining_ms(call->deadline_ms);
                if (remaining <= 0) {
                        rv = NNG_ETIMEDOUT;
                        break;
                }
                if (atomic_load(&c->closing)) {
                        rv = NNG_ECLOSED;
                        break;
                }
                /* A reply that arrives before this receive is posted is
                 * kept by the context. */
                call->state = RPC_CALL_RECV;
                nng_aio_set_timeout(call->aio, remaining);
                nng_ctx_recv(call->ctx, call->aio);
                return;

        case RPC_CALL_RECV:
                if (rv == NNG_ECONNRESET && call->request && !atomic_load(&c->closing)) {
                        remaining = nng_util_remaining_ms(call->deadline_ms);
                        if (remaining > 0 && nng_msg_dup(&m, call->request) == 0) {
                                /* Sending waits for the next connection. */
                                call->state = RPC_CALL_SEND;
                                nng_aio_set_timeout(call->aio, remaining);
                                nng_aio_set_msg(call->aio, m);
                                nng_ctx_send(call->ctx, call->aio);
                                return;
                        }
                        rv = remaining > 0 ? NNG_ENOMEM : NNG_ETIMEDOUT;
                        break;
                }
                if (rv == 0) {
                        call->reply = nng_aio_get_msg(call->aio);
                        nng_aio_set_msg(call->aio, NULL);
                }
                break;

        default:
                return;
        }

        call->nng_error = rv;
        call->state = RPC_CALL_DONE;
        loop_queue_push_item(c->queue, &call->item);
}

static void call_unlink(RpcClient *c, RpcCall *call) {
        if (call->prev)
                call->prev->next = call->next;
        else
                c->calls = call->next;
        if (call->next)
                call->next->prev = call->prev;
        call->prev = call->next = NULL;
        c->n_calls--;
}

/* Encodes req with a proof of role for challenge (a server's nonce). */
static int msg_with_proof(PeerSigner *signer, Envelope *req, const ProtobufCBinaryData *challenge, nng_msg **ret) {
        Spark__PeerProof proof = SPARK__PEER_PROOF__INIT;
        uint8_t sig[PEER_PROOF_SIGNATURE_MAX];
        Spark__PeerProof *saved = req->peer_proof;
        int k;

        k = peer_signer_sign(signer, challenge->data, challenge->len, &proof, sig);
        if (k < 0)
                return k;
        req->peer_proof = &proof;
        k = nng_util_msg_from_envelope(req, ret);
        req->peer_proof = saved;
        return k;
}

/* Whether reply is a challenge we can answer. */
static bool reply_is_challenge(const Envelope *reply, const PeerSigner *signer) {
        return signer && reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR && reply->error &&
               reply->error->code == PEER_PROOF_REQUIRED && reply->error->challenge.len == PEER_PROOF_NONCE_SIZE;
}

/* Loop thread: the server asked for a proof of our role; sends the request
 * again with one on the same context.  Returns 0 if sent, < 0 if the call
 * must complete with the server's answer. */
static int call_answer_challenge(RpcCall *call, const Envelope *reply) {
        RpcClient *c = call->client;
        _cleanup_envelope_ Envelope *req = NULL;
        nng_msg *m = NULL, *copy = NULL;
        int k, remaining;

        if (c->closed || !call->request || call->proof_rounds >= PROOF_ROUNDS_MAX)
                return -ECANCELED;
        remaining = nng_util_remaining_ms(call->deadline_ms);
        if (remaining <= 0)
                return -ETIMEDOUT;

        k = envelope_decode(nng_msg_body(call->request), nng_msg_len(call->request), SIZE_MAX, &req);
        if (k < 0)
                return k;
        k = msg_with_proof(c->signer, req, &reply->error->challenge, &m);
        if (k < 0)
                return k;
        k = nng_errno(nng_msg_dup(&copy, m));
        if (k < 0) {
                nng_msg_free(m);
                return k;
        }
        nng_msg_free(call->request);
        call->request = copy;
        call->proof_rounds++;

        call->state = RPC_CALL_SEND;
        nng_aio_set_timeout(call->aio, remaining);
        nng_aio_set_msg(call->aio, m);
        nng_ctx_send(call->ctx, call->aio);
        return 0;
}

/* Loop thread.  Frees the call; does not touch the client after the user's
 * callback, which may free it. */
static void call_complete(RpcCall *call, bool cancelled) {
        RpcClient *c = call->client;
        Envelope *env = NULL;
        int error;

        if (!cancelled && call->nng_error == 0 && c->signer &&
            envelope_decode(nng_msg_body(call->reply), nng_msg_len(call->reply), c->max_reply_bytes, &env) == 0 &&
            reply_is_challenge(env, c->signer)) {
                nng_msg *reply = call->reply;

                call->reply = NULL;
                if (call_answer_challenge(call, env) == 0) {
                        nng_msg_free(reply);
                        envelope_free(env);
                        return;
                }
                call->reply = reply;
        }
        env = envelope_free(env);

        call_unlink(c, call);

        /* Waits for the aio callback to have returned. */
        nng_aio_free(call->aio);
        call->aio = NULL;
        if (!c->closed)
                (void) nng_ctx_close(call->ctx);

        if (cancelled)
                error = -ECANCELED;
        else if (call->nng_error != 0)
                error = nng_errno(call->nng_error);
        else {
                error = envelope_decode(nng_msg_body(call->reply), nng_msg_len(call->reply), c->max_reply_bytes,
                                        &env);
                if (error == 0)
                        error = reply_error(env);
        }
        if (call->reply) {
                nng_msg_free(call->reply);
                call->reply = NULL;
        }
        if (call->request) {
                nng_msg_free(call->request);
                call->request = NULL;
        }

        call->callback(c, error, env, call->userdata);

        envelope_free(env);
        free(call);
}

static void call_dispatch(void *userdata, bool discard) {
        /* On discard the call stays on the client's list and is completed
         * by client_close(). */
        if (!discard)
                call_complete(userdata, false);
}

/* A call not handed to nng yet: its context is opened last, so it is
 * never open here. */
static RpcCall *call_free_unsent(RpcCall *call) {
        if (!call)
                return NULL;
        nng_aio_free(call->aio);
        if (call->request)
                nng_msg_free(call->request);
        free(call);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(RpcCall *, call_free_unsent);

int rpc_client_call(RpcClient *c, Envelope *req, int timeout_ms, RpcReplyHandler cb, void *userdata) {
        _cleanup_(call_free_unsentp) RpcCall *call = NULL;
        _cleanup_nng_msg_ nng_msg *m = NULL;
        int k;

        if (!c || !req || !cb || timeout_ms <= 0)
                return -EINVAL;
        if (c->closed)
                return -ESHUTDOWN;

        k = nng_util_msg_from_envelope(req, &m);
        if (k < 0)
                return k;

        call = calloc(1, sizeof(*call));
        if (!call)
                return -ENOMEM;
        call->client = c;
        call->callback = cb;
        call->userdata = userdata;
        call->deadline_ms = nng_util_now_ms() + (uint64_t) timeout_ms;
        loop_queue_item_init(&call->item, call_dispatch, call);
        call->item.owner = c;

        k = nng_errno(nng_aio_alloc(&call->aio, call_aio_cb, call));
        if (k < 0)
                return k;
        if (c->resend_ms <= 0 || c->signer) {
                k = nng_errno(nng_msg_dup(&call->request, m));
                if (k < 0)
                        return k;
        }
        k = nng_errno(nng_ctx_open(&call->ctx, c->sock));
        if (k < 0)
                return k;
        /* A timed resend is nng's (few clients want one: see above). */
        k = nng_errno(nng_ctx_set_ms(call->ctx, NNG_OPT_REQ_RESENDTIME,
                                     c->resend_ms > 0 ? c->resend_ms : NNG_DURATION_INFINITE));
        if (k < 0) {
                (void) nng_ctx_close(call->ctx);
                return k;
        }

        call->next = c->calls;
        if (c->calls)
                c->calls->prev = call;
        c->calls = call;
        c->n_calls++;

        /* Sending waits (up to the timeout) for a connection. */
        call->state = RPC_CALL_SEND;
        nng_aio_set_timeout(call->aio, timeout_ms);
        nng_aio_set_msg(call->aio, TAKE_PTR(m));
        nng_ctx_send(call->ctx, call->aio);
        TAKE_PTR(call); /* nng's now, then the loop's */
        return 0;
}

static void client_close(RpcClient *c) {
        if (c->closed)
                return;
        c->closed = true;
        atomic_store(&c->closing, true);

        if (c->sock_open)
                nng_close(c->sock); /* aborts every call's aio */
        c->sock_open = false;

        for (RpcCall *call = c->calls; call; call = call->next)
                nng_aio_stop(call->aio);

        /* Completions not run yet are dropped from the queue: the calls
         * stay on our list and are completed below. */
        if (c->queue_shared)
                loop_queue_discard_owned(c->queue, c);
        else
                loop_queue_free(c->queue);
        c->queue = NULL;

        while (c->calls)
                call_complete(c->calls, true);
}

RpcClient *rpc_client_free(RpcClient *c) {
        if (!c)
                return NULL;
        client_close(c);
        peer_signer_free(c->signer);
        free(c->url);
        free(c);
        return NULL;
}

int rpc_client_new(sd_event *e, const char *url, const RpcClientConfig *cfg, RpcClient **ret) {
        _cleanup_(rpc_client_freep) RpcClient *c = NULL;
        int k;

        if (!e || isempty(url) || !ret)
                return -EINVAL;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        atomic_init(&c->closing, false);
        atomic_init(&c->link, RPC_LINK_NEVER);
        c->max_reply_bytes = cfg && cfg->max_reply_bytes > 0 ? cfg->max_reply_bytes : SPARK_MAX_MESSAGE_BYTES;
        c->resend_ms = cfg ? cfg->resend_ms : 0;
        c->url = strdup(url);
        if (!c->url)
                return -ENOMEM;

        if (cfg && cfg->queue) {
                c->queue = cfg->queue;
                c->queue_shared = true;
        } else {
                k = loop_queue_new(e, &c->queue);
                if (k < 0)
                        return k;
        }

        k = nng_util_open(nng_req0_open, c->max_reply_bytes, &c->sock);
        if (k < 0)
                return k;
        c->sock_open = true;
        k = nng_util_set_reconnect(c->sock, cfg && cfg->reconnect_min_ms > 0 ? cfg->reconnect_min_ms
                                                                            : RPC_CLIENT_RECONNECT_MIN_MS,
                                   cfg && cfg->reconnect_max_ms > 0 ? cfg->reconnect_max_ms
                                                                    : RPC_CLIENT_RECONNECT_MAX_MS);
        if (k < 0)
                return k;
        /* Before the dial: its first connection must not go unseen. */
        k = nng_errno(nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, pipe_cb, c));
        if (k < 0)
                return k;
        k = nng_errno(nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, pipe_cb, c));
        if (k < 0)
                return k;

        /* A TLS server may ask us to prove our role with our key. */
        if (tls_url(url) && cfg && tls_settings_can_listen(cfg->tls)) {
                k = peer_signer_new(cfg->tls->cert_file, cfg->tls->key_file, &c->signer, NULL, 0);
                if (k < 0)
                        return k;
        }

        /* Non-blocking: the dialer retries in the background until the
         * server is there. */
        k = nng_util_dial(c->sock, url, cfg ? cfg->tls : NULL, NNG_FLAG_NONBLOCK, NULL);
        if (k < 0)
                return k;

        *ret = TAKE_PTR(c);
        return 0;
}

const char *rpc_client_url(const RpcClient *c) {
        return c ? c->url : NULL;
}

unsigned rpc_client_pending(const RpcClient *c) {
        return c ? c->n_calls : 0;
}

bool rpc_client_connection_lost(const RpcClient *c) {
        /* atomic_load() wants a pointer to non-const before C17's DR 459 */
        return c && atomic_load(&((RpcClient *) c)->link) == RPC_LINK_LOST;
}

/* ------------------------------------------------------------ sync call */

/* nng's blocking dial has no timeout of its own (a TCP connect to a silent
 * host takes minutes), so it runs on a helper thread; on timeout the socket
 * is closed, which aborts the dial. */
typedef struct SyncDial {
        nng_socket sock;
        const char *url;
        const TlsSettings *tls;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool done;
        int result; /* negative errno */
} SyncDial;

static void *sync_dial_thread(void *arg) {
        SyncDial *d = arg;
        int rv;

        rv = nng_util_dial(d->sock, d->url, d->tls, 0, NULL);

        pthread_mutex_lock(&d->lock);
        d->done = true;
        d->result = rv;
        pthread_cond_signal(&d->cond);
        pthread_mutex_unlock(&d->lock);
        return NULL;
}

/* The socket of a blocking call: closed once, by sync_dial() when the dial
 * times out, or when the call returns. */
typedef struct SyncSocket {
        nng_socket sock;
        bool open;
} SyncSocket;

static void sync_socket_close(SyncSocket *s) {
        if (s->open)
                nng_close(s->sock);
        s->open = false;
}

/* Returns 0 once connected, or a negative errno; on -ETIMEDOUT the socket
 * has been closed (that aborts the dial). */
static int sync_dial(SyncSocket *s, const char *url, const TlsSettings *tls, uint64_t deadline_ms) {
        pthread_condattr_t attr;
        struct timespec ts;
        SyncDial d = { .sock = s->sock, .url = url, .tls = tls };
        pthread_t thread;
        int k;

        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&d.cond, &attr);
        pthread_condattr_destroy(&attr);
        pthread_mutex_init(&d.lock, NULL);

        k = -pthread_create(&thread, NULL, sync_dial_thread, &d);
        if (k == 0) {
                ts.tv_sec = (time_t) (deadline_ms / 1000u);
                ts.tv_nsec = (long) (deadline_ms % 1000u) * 1000000L;

                pthread_mutex_lock(&d.lock);
                while (!d.done)
                        if (pthread_cond_timedwait(&d.cond, &d.lock, &ts) == ETIMEDOUT)
                                break;
                pthread_mutex_unlock(&d.lock);

                if (!d.done)
                        sync_socket_close(s);
                pthread_join(thread, NULL);
                k = s->open ? d.result : -ETIMEDOUT;
        }
        pthread_cond_destroy(&d.cond);
        pthread_mutex_destroy(&d.lock);
        return k;
}

/* Sends m (taken, sent or not) and decodes the answer into *ret, both
 * before the deadline. */
static int sync_round_trip(nng_socket sock, nng_msg *m, uint64_t deadline_ms, size_t max_reply, Envelope **ret) {
        _cleanup_nng_msg_ nng_msg *msg = m;
        int k, remaining;

        remaining = nng_util_remaining_ms(deadline_ms);
        if (remaining <= 0)
                return -ETIMEDOUT;
        (void) nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, remaining);
        k = nng_errno(nng_sendmsg(sock, msg, 0));
        if (k < 0)
                return k;
        msg = NULL; /* nng's now */

        remaining = nng_util_remaining_ms(deadline_ms);
        if (remaining <= 0)
                return -ETIMEDOUT;
        (void) nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, remaining);
        k = nng_errno(nng_recvmsg(sock, &msg, 0));
        if (k < 0)
                return k;
        return envelope_decode(nng_msg_body(msg), nng_msg_len(msg), max_reply, ret);
}

/* ------------------------------------------------------ sync session */

/* How long a session waits for its connection to the task channel before
 * it calls over nng instead. */
#define CHANNEL_CONNECT_MAX_MS 1000

struct RpcSyncSession {
        char *url;
        const TlsSettings *tls; /* the caller's; outlives the session */
        size_t max_reply;       /* the open socket's NNG_OPT_RECVMAXSZ */
        SyncSocket s;
        PeerSigner *signer;     /* made at the first challenge, kept */
        /* The server's task channel, once an answer named it (tcp:// only;
         * rpc-channel-call.h); 0 after it failed us: nng until an answer
         * names it again. */
        uint16_t channel_port;
        ChannelLink channel;
};

int rpc_sync_session_new(const char *url, const TlsSettings *tls, RpcSyncSession **ret) {
        RpcSyncSession *s;

        if (isempty(url) || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->url = strdup(url);
        if (!s->url) {
                free(s);
                return -ENOMEM;
        }
        s->tls = tls;
        s->channel = (ChannelLink) CHANNEL_LINK_INIT;
        *ret = s;
        return 0;
}

RpcSyncSession *rpc_sync_session_free(RpcSyncSession *s) {
        if (!s)
                return NULL;
        channel_link_close(&s->channel);
        sync_socket_close(&s->s);
        peer_signer_free(s->signer);
        free(s->url);
        free(s);
        return NULL;
}

const char *rpc_sync_session_url(const RpcSyncSession *s) {
        return s ? s->url : NULL;
}

bool rpc_sync_session_connected(const RpcSyncSession *s) {
        return s && (s->s.open || channel_link_is_open(&s->channel));
}

bool rpc_sync_session_on_channel(const RpcSyncSession *s) {
        return s && channel_link_is_open(&s->channel);
}

/* The call over the task channel: 1 with the answer in *ret; 0 when the
 * channel is not there (never named, or it failed: the call goes over nng
 * instead, which is safe, requests being idempotent); < 0 when the deadline
 * passed. */
static int session_channel_call(RpcSyncSession *s, Envelope *req, uint64_t deadline, size_t max_reply,
                                Envelope **ret) {
        _cleanup_free_ void *buf = NULL;
        size_t len;
        int k;

        if (s->channel_port == 0)
                return 0;
        if (!channel_link_is_open(&s->channel)) {
                /* a firewall that drops what comes to the port costs a
                 * moment, not the call */
                k = channel_link_open(&s->channel, s->url, s->channel_port,
                                      MIN(deadline, nng_util_now_ms() + CHANNEL_CONNECT_MAX_MS));
                if (k < 0) {
                        s->channel_port = 0;
                        return nng_util_remaining_ms(deadline) > 0 ? 0 : -ETIMEDOUT;
                }
        }
        k = envelope_encode(req, &buf, &len);
        if (k < 0)
                return k;
        k = channel_link_call(&s->channel, buf, len, max_reply, deadline, ret);
        if (k == -ETIMEDOUT || k == -EMSGSIZE)
                return k;
        if (k < 0) {
                /* closed by the server (a restart, or it refused what we
                 * sent there): nng, which it always takes */
                s->channel_port = 0;
                return 0;
        }
        return 1;
}

/* A socket for replies of up to max_reply bytes, dialled before the
 * deadline; closed again if that fails. */
static int session_connect(RpcSyncSession *s, size_t max_reply, uint64_t deadline) {
        int k;

        k = nng_util_open(nng_req0_open, max_reply, &s->s.sock);
        if (k < 0)
                return k;
        s->s.open = true;
        s->max_reply = max_reply;
        /* Should the connection drop after it was made, reconnect quickly
         * and resend (nng does that for us); no timed resend (each call
         * sets the resend time past its own deadline). */
        k = nng_util_set_reconnect(s->s.sock, 50, 500);
        if (k >= 0)
                k = sync_dial(&s->s, s->url, s->tls, deadline);
        /* A server that refuses our certificate closes the connection in
         * the middle of the handshake: the same refusal as one we see. */
        if (k == -ECONNRESET && tls_url(s->url))
                k = -EKEYREJECTED;
        if (k < 0)
                sync_socket_close(&s->s);
        return k;
}

/* The round trip of m (taken) and, should the server challenge us, of the
 * request with a proof of our role (docs/security.md). */
static int session_exchange(RpcSyncSession *s, Envelope *req, nng_msg *m, uint64_t deadline, size_t max_reply,
                            Envelope **ret) {
        _cleanup_envelope_ Envelope *env = NULL;
        int k;

        k = sync_round_trip(s->s.sock, m, deadline, max_reply, &env);
        if (k < 0)
                return k;
        for (unsigned round = 0; round < PROOF_ROUNDS_MAX && tls_url(s->url) && tls_settings_can_listen(s->tls);
             round++) {
                if (!s->signer && env->body_case == SPARK__ENVELOPE__BODY_ERROR &&
                    env->error->code == PEER_PROOF_REQUIRED) {
                        k = peer_signer_new(s->tls->cert_file, s->tls->key_file, &s->signer, NULL, 0);
                        if (k < 0)
                                break; /* the server's Error says what was wanted */
                }
                if (!reply_is_challenge(env, s->signer))
                        break;
                k = msg_with_proof(s->signer, req, &env->error->challenge, &m);
                if (k < 0)
                        return k;
                env = envelope_free(env);
                k = sync_round_trip(s->s.sock, m, deadline, max_reply, &env);
                if (k < 0)
                        return k;
        }
        *ret = TAKE_PTR(env);
        return 0;
}

int rpc_sync_session_call(RpcSyncSession *s, Envelope *req, int timeout_ms, size_t max_reply, Envelope **ret_reply) {
        _cleanup_envelope_ Envelope *env = NULL;
        _cleanup_nng_msg_ nng_msg *m = NULL;
        uint64_t deadline;
        int k;

        if (!s || !req || !ret_reply || timeout_ms <= 0)
                return -EINVAL;
        *ret_reply = NULL;
        if (max_reply == 0)
                max_reply = SPARK_MAX_MESSAGE_BYTES;
        deadline = nng_util_now_ms() + (uint64_t) timeout_ms;

        k = session_channel_call(s, req, deadline, max_reply, &env);
        if (k < 0)
                return k;
        if (k > 0) {
                k = reply_error(env);
                *ret_reply = TAKE_PTR(env);
                return k;
        }

        k = nng_util_msg_from_envelope(req, &m);
        if (k < 0)
                return k;

        /* nng checks a reply's size against the socket's limit, set when
         * it was opened: a call that takes more than that gets a new one */
        if (s->s.open && max_reply > s->max_reply)
                sync_socket_close(&s->s);
        if (!s->s.open) {
                k = session_connect(s, max_reply, deadline);
                if (k < 0)
                        return k;
        }
        k = nng_errno(nng_socket_set_ms(s->s.sock, NNG_OPT_REQ_RESENDTIME, timeout_ms + RESEND_BEYOND_DEADLINE_MS));
        if (k >= 0)
                k = session_exchange(s, req, TAKE_PTR(m), deadline, max_reply, &env);
        if (k < 0) {
                /* no answer: what became of the connection is unknown,
                 * so the next call starts on a new one */
                sync_socket_close(&s->s);
                return k;
        }
        /* the server's faster way, for the next calls (plain tcp:// only:
         * the channel beside TLS is for executors) */
        if (env->channel_port > 0 && env->channel_port <= UINT16_MAX && strncmp(s->url, "tcp://", 6) == 0 &&
            !channel_link_is_open(&s->channel))
                s->channel_port = (uint16_t) env->channel_port;

        k = reply_error(env);
        *ret_reply = TAKE_PTR(env);
        return k;
}

/* ------------------------------------------------------- one-shot call */

int rpc_call_sync(const char *url, Envelope *req, int timeout_ms, size_t max_reply, Envelope **ret_reply) {
        return rpc_call_sync_tls(url, NULL, req, timeout_ms, max_reply, ret_reply);
}

int rpc_call_sync_tls(const char *url, const TlsSettings *tls, Envelope *req, int timeout_ms, size_t max_reply,
                      Envelope **ret_reply) {
        _cleanup_(rpc_sync_session_freep) RpcSyncSession *s = NULL;
        int k;

        if (isempty(url) || !req || !ret_reply || timeout_ms <= 0)
                return -EINVAL;
        *ret_reply = NULL;
        k = rpc_sync_session_new(url, tls, &s);
        if (k < 0)
                return k;
        return rpc_sync_session_call(s, req, timeout_ms, max_reply, ret_reply);
}
