/* nng rep0 server on the sd-event loop.
 *
 * Ownership of a context moves with its state: in RECV and SEND nng owns it
 * (its aio callback runs on an nng thread); on a successful receive the
 * callback sets WAIT_REPLY and pushes the context onto the loop queue, and
 * from then on only the loop touches it until a reply hands it back to nng
 * with nng_ctx_send().  The loop-only field `delivered` says whether the
 * handler holds the request, so the loop never reads `state` while nng may
 * write it. */
#include <stdarg.h>
#include <stdatomic.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "loop-queue.h"
#include "nng-util.h"
#include "rpc-server.h"

#define RPC_SERVER_MAX_CONTEXTS 4096u
/* Pipes whose removal was reported recently; a request from one of them
 * that was still queued is dropped instead of delivered. */
#define REMOVED_PIPES_RING 64u

typedef enum RpcContextState {
        RPC_CONTEXT_IDLE,       /* not started, or stopped by close */
        RPC_CONTEXT_RECV,       /* nng: waiting for a request */
        RPC_CONTEXT_WAIT_REPLY, /* loop: queued, in the handler, or parked */
        RPC_CONTEXT_SEND,       /* nng: sending the answer */
        _RPC_CONTEXT_STATE_MAX,
        _RPC_CONTEXT_STATE_INVALID = -EINVAL,
} RpcContextState;

struct RpcRequest {
        RpcServer *server;
        nng_ctx ctx;
        nng_aio *aio;
        RpcContextState state;
        LoopQueueItem item;

        /* Owned by the loop while in WAIT_REPLY. */
        nng_msg *msg;
        uint32_t pipe_id;
        Envelope *env;
        bool delivered;
        RpcAbandonHandler abandon;
        void *abandon_userdata;
};

typedef struct PipeEvent {
        LoopQueueItem item;
        RpcServer *server;
        uint32_t pipe_id;
        bool added;
} PipeEvent;

struct RpcServer {
        unsigned n_ref;
        char *url;
        nng_socket sock;
        bool sock_open;
        LoopQueue *queue;

        RpcRequest *requests;
        unsigned n_requests;
        size_t max_request_bytes;

        RpcHandler raw_handler;
        RpcEnvelopeHandler envelope_handler;
        void *userdata;
        RpcPipeHandler pipe_handler;
        void *pipe_userdata;

        atomic_bool closing;      /* read by nng threads */
        atomic_uint_fast64_t pipe_events_lost;
        bool closed;

        uint32_t removed_pipes[REMOVED_PIPES_RING];
        unsigned removed_next;

        RpcServerStats stats;
};

static void request_start_recv(RpcRequest *r) {
        r->state = RPC_CONTEXT_RECV;
        nng_ctx_recv(r->ctx, r->aio);
}

/* nng thread. */
static void request_aio_cb(void *arg) {
        RpcRequest *r = arg;
        RpcServer *s = r->server;
        int rv = nng_aio_result(r->aio);
        nng_msg *m;

        switch (r->state) {
        case RPC_CONTEXT_RECV:
                if (rv != 0) {
                        if (rv == NNG_ECLOSED || rv == NNG_ECANCELED || atomic_load(&s->closing)) {
                                r->state = RPC_CONTEXT_IDLE;
                                return;
                        }
                        request_start_recv(r); /* transient, e.g. NNG_ENOMEM */
                        return;
                }
                r->msg = nng_aio_get_msg(r->aio);
                nng_aio_set_msg(r->aio, NULL);
                r->pipe_id = (uint32_t) nng_pipe_id(nng_msg_get_pipe(r->msg));
                r->state = RPC_CONTEXT_WAIT_REPLY;
                loop_queue_push_item(s->queue, &r->item);
                return;

        case RPC_CONTEXT_SEND:
                if (rv != 0) {
                        /* On failure the message is still ours. */
                        m = nng_aio_get_msg(r->aio);
                        nng_aio_set_msg(r->aio, NULL);
                        if (m)
                                nng_msg_free(m);
                }
                if (atomic_load(&s->closing)) {
                        r->state = RPC_CONTEXT_IDLE;
                        return;
                }
                request_start_recv(r);
                return;

        default:
                return;
        }
}

static void server_ref(RpcServer *s) {
        s->n_ref++;
}

static void server_unref(RpcServer *s) {
        if (--s->n_ref > 0)
                return;
        free(s->requests);
        free(s->url);
        free(s);
}

/* Loop thread: the request leaves the loop's hands. */
static void request_release(RpcRequest *r) {
        if (r->delivered) {
                r->delivered = false;
                r->server->stats.waiting--;
        }
        r->env = envelope_free(r->env);
        if (r->msg) {
                nng_msg_free(r->msg);
                r->msg = NULL;
        }
        r->abandon = NULL;
        r->abandon_userdata = NULL;
}

/* Loop thread: forget the request without answering (the client resends or
 * times out) and take the next one. */
static void request_drop(RpcRequest *r) {
        request_release(r);
        r->server->stats.dropped++;
        if (!r->server->closed)
                request_start_recv(r);
}

static int request_send(RpcRequest *r, nng_msg *m) {
        request_release(r);
        r->server->stats.replies++;
        r->state = RPC_CONTEXT_SEND;
        nng_aio_set_msg(r->aio, m);
        nng_ctx_send(r->ctx, r->aio);
        return 0;
}

static int request_check(RpcRequest *r) {
        if (!r)
                return -EINVAL;
        if (r->server->closed)
                return -ESHUTDOWN;
        if (!r->delivered)
                return -ESTALE;
        return 0;
}

int rpc_request_reply(RpcRequest *r, const void *buf, size_t len) {
        nng_msg *m;
        int k;

        k = request_check(r);
        if (k < 0)
                return k;
        k = nng_util_msg_from_buf(buf, len, &m);
        if (k < 0) {
                request_drop(r);
                return k;
        }
        return request_send(r, m);
}

static int request_reply_errorv(RpcRequest *r, int code, const char *fmt, va_list ap) {
        ErrorEnvelope e;
        nng_msg *m;
        int k;

        error_envelope_init(&e, code, "%s", "");
        vsnprintf(e.message, sizeof(e.message), fmt, ap);
        k = nng_util_msg_from_envelope(&e.env, &m);
        if (k < 0) {
                request_drop(r);
                return k;
        }
        return request_send(r, m);
}

static int request_reply_error_internal(RpcRequest *r, int code, const char *fmt, ...) _printf_(3, 4);
static int request_reply_error_internal(RpcRequest *r, int code, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = request_reply_errorv(r, code, fmt, ap);
        va_end(ap);
        return k;
}

int rpc_request_reply_ack(RpcRequest *r) {
        Spark__Ack ack = SPARK__ACK__INIT;
        Envelope env = ENVELOPE_INIT;

        ENVELOPE_SET(&env, ACK, ack, &ack);
        return rpc_request_reply_envelope(r, &env);
}

int rpc_request_reply_error(RpcRequest *r, int code, const char *fmt, ...) {
        va_list ap;
        int k;

        k = request_check(r);
        if (k < 0)
                return k;
        va_start(ap, fmt);
        k = request_reply_errorv(r, code, fmt, ap);
        va_end(ap);
        return k;
}

int rpc_request_reply_envelope(RpcRequest *r, Envelope *env) {
        nng_msg *m;
        int k;

        k = request_check(r);
        if (k < 0)
                return k;
        k = nng_util_msg_from_envelope(env, &m);
        if (k == -ENOMEM) {
                request_drop(r);
                return k;
        }
        if (k < 0) {
                /* A bug on our side; the peer still deserves an answer. */
                (void) request_reply_error_internal(r, k, "server could not encode its reply");
                return k;
        }
        return request_send(r, m);
}

uint32_t rpc_request_pipe_id(const RpcRequest *r) {
        return r ? r->pipe_id : 0;
}

RpcServer *rpc_request_server(const RpcRequest *r) {
        return r ? r->server : NULL;
}

const Envelope *rpc_request_envelope(const RpcRequest *r) {
        return r ? r->env : NULL;
}

void rpc_request_set_abandon_handler(RpcRequest *r, RpcAbandonHandler handler, void *userdata) {
        if (!r)
                return;
        r->abandon = handler;
        r->abandon_userdata = userdata;
}

static bool pipe_was_removed(const RpcServer *s, uint32_t pipe_id) {
        for (unsigned i = 0; i < REMOVED_PIPES_RING; i++)
                if (s->removed_pipes[i] == pipe_id && pipe_id != 0)
                        return true;
        return false;
}

#define SPARK_PROTOCOL_VERSION_STRING "1"
_Static_assert(SPARK_PROTOCOL_VERSION == 1u, "update SPARK_PROTOCOL_VERSION_STRING");

/* What envelope_decode()'s codes mean to the peer that sent the request. */
static const char *decode_error_message(int k) {
        switch (k) {
        case -EBADMSG:
                return "not a well-formed message (malformed or truncated)";
        case -EPROTONOSUPPORT:
                return "unsupported protocol version (this daemon speaks version " SPARK_PROTOCOL_VERSION_STRING ")";
        case -ENOMSG:
                return "no message body, or a message type this daemon does not know";
        case -EMSGSIZE:
                return "message too large";
        default:
                return strerror(-k);
        }
}

/* Loop thread. */
static void request_dispatch(void *userdata, bool discard) {
        RpcRequest *r = userdata;
        RpcServer *s = r->server;
        const void *data;
        size_t len;
        int k;

        if (discard)
                return; /* server_close() frees r->msg */

        if (pipe_was_removed(s, r->pipe_id)) {
                request_drop(r);
                return;
        }

        s->stats.requests++;
        s->stats.waiting++;
        r->delivered = true;
        data = nng_msg_body(r->msg);
        len = nng_msg_len(r->msg);

        server_ref(s);
        if (s->envelope_handler) {
                k = envelope_decode(data, len, s->max_request_bytes, &r->env);
                if (k < 0) {
                        s->stats.decode_errors++;
                        (void) request_reply_error_internal(r, k, "invalid request: %s", decode_error_message(k));
                        goto out;
                }
                k = s->envelope_handler(s, r, r->env, s->userdata);
        } else
                k = s->raw_handler(s, r, data, len, s->userdata);

        /* `delivered` is loop-only, so this reads no state nng may write. */
        if (k < 0 && r->delivered && !s->closed)
                (void) request_reply_error_internal(r, k, "%s", strerror(-k));
out:
        server_unref(s);
}

static void pipe_event_dispatch(void *userdata, bool discard) {
        PipeEvent *pe = userdata;
        RpcServer *s = pe->server;

        if (!discard) {
                if (!pe->added) {
                        s->removed_pipes[s->removed_next] = pe->pipe_id;
                        s->removed_next = (s->removed_next + 1) % REMOVED_PIPES_RING;
                }
                if (s->pipe_handler) {
                        server_ref(s);
                        s->pipe_handler(s, pe->pipe_id, pe->added, s->pipe_userdata);
                        server_unref(s);
                }
        }
        free(pe);
}

/* nng thread.  nng_close() returns only after these have run. */
static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg) {
        RpcServer *s = arg;
        PipeEvent *pe;

        if (atomic_load(&s->closing))
                return;
        pe = malloc(sizeof(*pe));
        if (!pe) {
                atomic_fetch_add(&s->pipe_events_lost, 1);
                return;
        }
        *pe = (PipeEvent) {
                .server = s,
                .pipe_id = (uint32_t) nng_pipe_id(p),
                .added = ev == NNG_PIPE_EV_ADD_POST,
        };
        loop_queue_item_init(&pe->item, pipe_event_dispatch, pe);
        loop_queue_push_item(s->queue, &pe->item);
}

static void server_close(RpcServer *s) {
        if (s->closed)
                return;
        s->closed = true;
        atomic_store(&s->closing, true);

        /* Aborts every context's aio with NNG_ECLOSED and waits for the
         * pipes (and their notifications) to go. */
        if (s->sock_open)
                nng_close(s->sock);
        s->sock_open = false;

        /* Waits for callbacks still running; afterwards nothing pushes. */
        for (unsigned i = 0; i < s->n_requests; i++)
                if (s->requests[i].aio)
                        nng_aio_stop(s->requests[i].aio);

        s->queue = loop_queue_free(s->queue);

        for (unsigned i = 0; i < s->n_requests; i++) {
                RpcRequest *r = &s->requests[i];

                if (r->delivered && r->abandon)
                        r->abandon(r, r->abandon_userdata);
                request_release(r);
                if (r->aio) {
                        nng_aio_free(r->aio);
                        r->aio = NULL;
                }
                r->state = RPC_CONTEXT_IDLE;
        }
}

RpcServer *rpc_server_free(RpcServer *s) {
        if (!s)
                return NULL;
        server_close(s);
        server_unref(s);
        return NULL;
}

static int server_new(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcHandler raw,
                      RpcEnvelopeHandler envelope, void *userdata, RpcServer **ret) {
        RpcServer *s;
        unsigned n;
        int k;

        if (!e || isempty(url) || !ret || (!raw && !envelope))
                return -EINVAL;
        n = cfg && cfg->n_contexts > 0 ? cfg->n_contexts : RPC_SERVER_DEFAULT_CONTEXTS;
        if (n > RPC_SERVER_MAX_CONTEXTS)
                return -ERANGE;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->n_ref = 1;
        s->raw_handler = raw;
        s->envelope_handler = envelope;
        s->userdata = userdata;
        s->max_request_bytes = cfg && cfg->max_request_bytes > 0 ? cfg->max_request_bytes : SPARK_MAX_MESSAGE_BYTES;
        atomic_init(&s->closing, false);
        atomic_init(&s->pipe_events_lost, 0);

        s->url = strdup(url);
        s->requests = calloc(n, sizeof(RpcRequest));
        if (!s->url || !s->requests) {
                k = -ENOMEM;
                goto fail;
        }
        s->n_requests = n;

        k = loop_queue_new(e, &s->queue);
        if (k < 0)
                goto fail;

        k = nng_errno(nng_rep0_open(&s->sock));
        if (k < 0)
                goto fail;
        s->sock_open = true;

        k = nng_util_set_recv_limit(s->sock, s->max_request_bytes);
        if (k < 0)
                goto fail;
        k = nng_errno(nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_POST, pipe_cb, s));
        if (k < 0)
                goto fail;
        k = nng_errno(nng_pipe_notify(s->sock, NNG_PIPE_EV_REM_POST, pipe_cb, s));
        if (k < 0)
                goto fail;

        for (unsigned i = 0; i < n; i++) {
                RpcRequest *r = &s->requests[i];

                r->server = s;
                loop_queue_item_init(&r->item, request_dispatch, r);
                k = nng_errno(nng_aio_alloc(&r->aio, request_aio_cb, r));
                if (k < 0)
                        goto fail;
                k = nng_errno(nng_ctx_open(&r->ctx, s->sock));
                if (k < 0)
                        goto fail;
        }
        for (unsigned i = 0; i < n; i++)
                request_start_recv(&s->requests[i]);

        k = cfg && cfg->tls_no_client_cert ? nng_util_listen_no_client_cert(s->sock, url, cfg->tls, NULL)
                                           : nng_util_listen(s->sock, url, cfg ? cfg->tls : NULL, NULL);
        if (k < 0)
                goto fail;

        *ret = s;
        return 0;

fail:
        rpc_server_free(s);
        return k;
}

int rpc_server_new(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcHandler handler, void *userdata,
                   RpcServer **ret) {
        return server_new(e, url, cfg, handler, NULL, userdata, ret);
}

int rpc_server_new_envelope(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcEnvelopeHandler handler,
                            void *userdata, RpcServer **ret) {
        return server_new(e, url, cfg, NULL, handler, userdata, ret);
}

void rpc_server_set_pipe_handler(RpcServer *s, RpcPipeHandler handler, void *userdata) {
        if (!s)
                return;
        s->pipe_handler = handler;
        s->pipe_userdata = userdata;
}

void rpc_server_get_stats(const RpcServer *s, RpcServerStats *ret) {
        if (!s || !ret)
                return;
        *ret = s->stats;
        ret->pipe_events_lost = atomic_load(&((RpcServer *) s)->pipe_events_lost);
}

const char *rpc_server_url(const RpcServer *s) {
        return s ? s->url : NULL;
}
