/* nng rep0 server on the sd-event loop.
 *
 * Ownership of a context moves with its state: in RECV and SEND nng owns it
 * (its aio callback runs on an nng thread); on a successful receive the
 * callback sets WAIT_REPLY and pushes the context onto the loop queue, and
 * from then on only the loop touches it until a reply hands it back to nng
 * with nng_ctx_send().  The loop-only field `delivered` says whether the
 * handler holds the request, so the loop never reads `state` while nng may
 * write it. */
#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/transport/ipc/ipc.h>

#include "nng-util.h"
#include "rpc-server-internal.h"
#include "time-util.h"

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

static void pipe_key(uint32_t pipe_id, char key[static 12]) {
        snprintf(key, 12, "%" PRIu32, pipe_id);
}

static PeerRecord *peer_lookup(RpcServer *s, uint32_t pipe_id) {
        char key[12];

        if (!s->peers)
                return NULL;
        pipe_key(pipe_id, key);
        return hashmap_get(s->peers, key);
}

static void peer_forget(RpcServer *s, uint32_t pipe_id) {
        char key[12];

        if (!s->peers)
                return;
        pipe_key(pipe_id, key);
        free(hashmap_remove(s->peers, key));
}

static void peers_clear(RpcServer *s) {
        size_t i = 0;
        void *v;

        if (!s->peers)
                return;
        while (hashmap_iterate(s->peers, &i, &v, NULL))
                free(v);
        hashmap_clear(s->peers);
}

void rpc_server_ref(RpcServer *s) {
        s->n_ref++;
}

void rpc_server_unref(RpcServer *s) {
        if (--s->n_ref > 0)
                return;
        peers_clear(s);
        hashmap_free(s->peers);
        peer_verifier_free(s->verifier);
        free(s->nonces);
        free(s->ca_file);
        free(s->requests);
        prom_histogram_done(&s->handle_time);
        free(s->url);
        free(s);
}

/* Loop thread: the request leaves the loop's hands. */
void rpc_request_release(RpcRequest *r) {
        if (r->delivered) {
                r->delivered = false;
                r->server->stats.waiting--;
        }
        r->env = envelope_free(r->env);
        if (r->msg) {
                nng_msg_free(r->msg);
                r->msg = NULL;
        }
        free(r->body);
        r->body = NULL;
        r->abandon = NULL;
        r->abandon_userdata = NULL;
}

/* Loop thread: forget the request without answering (the client resends or
 * times out) and take the next one. */
static void request_drop(RpcRequest *r) {
        rpc_request_release(r);
        r->server->stats.dropped++;
        if (r->conn)
                rpc_stream_request_drop(r);
        else if (!r->server->closed)
                request_start_recv(r);
}

static int request_send(RpcRequest *r, nng_msg *m) {
        rpc_request_release(r);
        r->server->stats.replies++;
        if (r->conn) {
                rpc_stream_request_answer(r, m);
                return 0;
        }
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

        if (!r->env)
                r->server->stats.errors_by_type[0]++;
        else if (r->env->body_case > 0 && r->env->body_case < RPC_STATS_TYPES)
                r->server->stats.errors_by_type[r->env->body_case]++;
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
        /* a client on nng learns of the channel it may use instead: plain
         * beside tcp://, where it takes the same requests (rpc-server.h) */
        if (!r->conn && r->server->stream_fd >= 0 && !r->server->stream_tls)
                env->channel_port = r->server->stream_port;
        k = nng_util_msg_from_envelope(env, &m);
        env->channel_port = 0;
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

/* "kill_application" → "KillApplication", the name the docs use. */
static void body_display_name(const Envelope *env, char *buf, size_t size) {
        const char *n = envelope_body_name(env);
        bool upper = true;
        size_t o = 0;

        for (; *n && o + 1 < size; n++) {
                if (*n == '_') {
                        upper = true;
                        continue;
                }
                buf[o++] = upper ? (char) toupper((unsigned char) *n) : *n;
                upper = false;
        }
        buf[o] = '\0';
}

/* Answers with a fresh nonce to sign. */
static int request_challenge(RpcServer *s, RpcRequest *r, const char *why) {
        uint8_t nonce[PEER_PROOF_NONCE_SIZE];
        ErrorEnvelope e;
        nng_msg *m;
        int k;

        k = peer_nonces_issue(s->nonces, r->pipe_id, nng_util_now_ms(), nonce);
        if (k < 0) {
                (void) request_reply_error_internal(r, k, "cannot make a nonce for the proof of role");
                return k;
        }
        error_envelope_init(&e, PEER_PROOF_REQUIRED, "%s: sign the challenge with a certificate's key", why);
        e.error.challenge = (ProtobufCBinaryData) { sizeof(nonce), nonce };
        k = nng_util_msg_from_envelope(&e.env, &m);
        if (k < 0) {
                request_drop(r);
                return k;
        }
        (void) request_send(r, m);
        return PEER_PROOF_REQUIRED;
}

static int request_refuse(RpcServer *s, RpcRequest *r, const char *reason) {
        if (s->refused)
                s->refused(s, r, reason, s->role_userdata);
        if (r->delivered && !s->closed)
                (void) request_reply_error_internal(r, -EPERM, "%s", reason);
        return -EPERM;
}

/* A proof attached to the request: checks it and, if it holds, records the
 * connection's role.  -ESTALE: its nonce is not one we can accept. */
static int request_take_proof(RpcServer *s, RpcRequest *r, PeerRecord **ret, char *reason, size_t size) {
        const Spark__PeerProof *p = r->env->peer_proof;
        _cleanup_free_ PeerRecord *rec = NULL;
        PeerIdentity id;
        int k;

        k = peer_verifier_check(s->verifier, p, &id, reason, size);
        if (k < 0)
                return k;
        /* Checked after the signature, so that a forged proof cannot use up
         * a nonce issued to the connection. */
        k = peer_nonces_consume(s->nonces, p->nonce.data, p->nonce.len, r->pipe_id, nng_util_now_ms());
        if (k < 0)
                return k;

        rec = calloc(1, sizeof(*rec));
        if (!rec)
                return -ENOMEM;
        pipe_key(r->pipe_id, rec->key);
        rec->id = id;
        k = hashmap_put(s->peers, rec->key, rec);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(rec);
        return 0;
}

/* On a plaintext listener: the local user behind the request's connection,
 * looked up once per connection (a netlink round trip for tcp://). */
static int local_peer_lookup(RpcServer *s, const RpcRequest *r, PeerRecord **ret) {
        _cleanup_free_ PeerRecord *rec = NULL;
        nng_pipe pipe = NNG_PIPE_INITIALIZER;
        uint32_t pipe_id = r->pipe_id;
        int k;

        *ret = peer_lookup(s, pipe_id);
        if (*ret)
                return 0;
        if (!s->peers) {
                k = hashmap_new(&s->peers);
                if (k < 0)
                        return k;
        }
        rec = calloc(1, sizeof(*rec));
        if (!rec)
                return -ENOMEM;
        pipe.id = pipe_id;
        k = r->conn ? rpc_stream_request_local_peer(r, &rec->local_kind, &rec->local_uid)
                    : local_peer_of_pipe(pipe, &rec->local_kind, &rec->local_uid);
        if (k < 0)
                return k;
        pipe_key(pipe_id, rec->key);
        rec->id = (PeerIdentity) { .tls = false, .role = _PEER_ROLE_INVALID };
        k = hashmap_put(s->peers, rec->key, rec);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(rec);
        return 0;
}

/* A plaintext listener proves no role, so a request that needs one goes
 * through from anyone who can connect (docs/security.md) — except from a
 * job's task: its connection belongs to one of systemd's dynamic users. */
static int request_check_local_user(RpcServer *s, RpcRequest *r) {
        char reason[600], name[64];
        PeerRecord *p;
        int k;

        k = local_peer_lookup(s, r, &p);
        if (k == -ENOMEM) {
                request_drop(r);
                return k;
        }
        body_display_name(r->env, name, sizeof(name));
        if (k < 0) {
                snprintf(reason, sizeof(reason), "%s: cannot tell which local user sent it: %s", name,
                         strerror(-k));
                return request_refuse(s, r, reason);
        }
        if (p->local_kind == LOCAL_PEER_UID && local_peer_uid_is_dynamic(p->local_uid)) {
                snprintf(reason, sizeof(reason),
                         "%s is not for a job's tasks: uid %u is a dynamic user, as executors run", name,
                         (unsigned) p->local_uid);
                return request_refuse(s, r, reason);
        }
        return 0;
}

/* Returns 0 if the handler may see the request, else < 0 with the request
 * answered (or dropped). */
static int request_check_role(RpcServer *s, RpcRequest *r) {
        char reason[600], roles[64], name[64];
        PeerRecord *p;
        uint32_t need;
        int k;

        need = s->role_check(r->env, s->role_userdata);
        if (need == PEER_ROLES_NONE)
                return 0;
        if (r->conn && s->verifier) {
                /* beside TLS the task channel is for executors, who prove
                 * who they are with their secret, not with a role; clients
                 * prove theirs on nng */
                body_display_name(r->env, name, sizeof(name));
                snprintf(reason, sizeof(reason), "%s is not taken on the task channel", name);
                return request_refuse(s, r, reason);
        }
        if (!s->verifier)
                return request_check_local_user(s, r); /* not a TLS listener: no roles */

        p = peer_lookup(s, r->pipe_id);
        if (!p && r->env->peer_proof) {
                k = request_take_proof(s, r, &p, reason, sizeof(reason));
                if (k == -ESTALE)
                        return request_challenge(s, r, "the proof's nonce is unknown, used or expired");
                if (k == -ENOMEM) {
                        request_drop(r);
                        return k;
                }
                if (k < 0)
                        return request_refuse(s, r, reason);
        }
        if (!p)
                return request_challenge(s, r, "this request needs a proof of role");

        if (!(need & PEER_ROLE_BIT(p->id.role))) {
                body_display_name(r->env, name, sizeof(name));
                snprintf(reason, sizeof(reason), "%s needs role %s; you are %s (%s)", name,
                         peer_roles_to_string(need, roles, sizeof(roles)), peer_role_to_string(p->id.role),
                         p->id.subject);
                return request_refuse(s, r, reason);
        }
        return 0;
}

/* Loop thread. */
/* Decodes r, checks its sender's role and runs the handler; what the
 * handler failed with, once a reply is still owed. */
static int request_handle(RpcServer *s, RpcRequest *r) {
        const void *data = r->conn ? r->body : nng_msg_body(r->msg);
        size_t len = r->conn ? r->body_len : nng_msg_len(r->msg);
        usec_t t0;
        int k;

        if (!s->envelope_handler)
                return s->raw_handler(s, r, data, len, s->userdata);

        k = envelope_decode(data, len, s->max_request_bytes, &r->env);
        if (k < 0) {
                s->stats.decode_errors++;
                (void) request_reply_error_internal(r, k, "invalid request: %s", decode_error_message(k));
                return 0;
        }
        if (s->role_check && request_check_role(s, r) < 0)
                return 0; /* challenged or refused: answered */
        if (r->env->body_case > 0 && r->env->body_case < RPC_STATS_TYPES)
                s->stats.requests_by_type[r->env->body_case]++;
        t0 = now_mono_usec();
        k = s->envelope_handler(s, r, r->env, s->userdata);
        prom_histogram_observe(&s->handle_time, (double) (now_mono_usec() - t0) / USEC_PER_SEC);
        return k;
}

void rpc_request_deliver(RpcServer *s, RpcRequest *r) {
        int k;

        s->stats.requests++;
        s->stats.waiting++;
        r->delivered = true;
        r->in_handler = true;

        rpc_server_ref(s); /* a handler may free the server */
        k = request_handle(s, r);
        /* `delivered` is loop-only, so this reads no state nng may write. */
        if (k < 0 && r->delivered && !s->closed)
                (void) request_reply_error_internal(r, k, "%s", strerror(-k));
        r->in_handler = false;
        /* a stream request answered meanwhile waited for us to free it */
        if (r->conn && !r->delivered)
                rpc_stream_request_free(r);
        rpc_server_unref(s);
}

static void request_dispatch(void *userdata, bool discard) {
        RpcRequest *r = userdata;
        RpcServer *s = r->server;

        if (discard)
                return; /* server_close() frees r->msg */

        if (pipe_was_removed(s, r->pipe_id)) {
                request_drop(r);
                return;
        }
        rpc_request_deliver(s, r);
}

void rpc_server_pipe_event(RpcServer *s, uint32_t pipe_id, bool added) {
        if (!added) {
                peer_forget(s, pipe_id);
                s->removed_pipes[s->removed_next] = pipe_id;
                s->removed_next = (s->removed_next + 1) % REMOVED_PIPES_RING;
        }
        if (s->pipe_handler) {
                rpc_server_ref(s);
                s->pipe_handler(s, pipe_id, added, s->pipe_userdata);
                rpc_server_unref(s);
        }
}

static void pipe_event_dispatch(void *userdata, bool discard) {
        PipeEvent *pe = userdata;

        if (!discard)
                rpc_server_pipe_event(pe->server, pe->pipe_id, pe->added);
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
        rpc_server_stream_close(s);

        for (unsigned i = 0; i < s->n_requests; i++) {
                RpcRequest *r = &s->requests[i];

                if (r->delivered && r->abandon)
                        r->abandon(r, r->abandon_userdata);
                rpc_request_release(r);
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
        rpc_server_unref(s);
        return NULL;
}

static int server_new(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcHandler raw,
                      RpcEnvelopeHandler envelope, void *userdata, RpcServer **ret) {
        _cleanup_(rpc_server_freep) RpcServer *s = NULL;
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
        s->event = e;
        s->stream_fd = -1;
        if (prom_histogram_init(&s->handle_time, prom_buckets_rpc, prom_buckets_rpc_n) < 0) {
                free(s);
                return -ENOMEM;
        }
        s->raw_handler = raw;
        s->envelope_handler = envelope;
        s->userdata = userdata;
        s->max_request_bytes = cfg && cfg->max_request_bytes > 0 ? cfg->max_request_bytes : SPARK_MAX_MESSAGE_BYTES;
        atomic_init(&s->closing, false);
        atomic_init(&s->pipe_events_lost, 0);

        s->url = strdup(url);
        if (tls_url(url) && cfg && cfg->tls && !isempty(cfg->tls->ca_file)) {
                s->ca_file = strdup(cfg->tls->ca_file);
                if (!s->ca_file)
                        return -ENOMEM;
        }
        s->requests = calloc(n, sizeof(RpcRequest));
        if (!s->url || !s->requests)
                return -ENOMEM;
        s->n_requests = n;

        k = loop_queue_new(e, &s->queue);
        if (k < 0)
                return k;

        k = nng_util_open(nng_rep0_open, s->max_request_bytes, &s->sock);
        if (k < 0)
                return k;
        s->sock_open = true;
        k = nng_errno(nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_POST, pipe_cb, s));
        if (k < 0)
                return k;
        k = nng_errno(nng_pipe_notify(s->sock, NNG_PIPE_EV_REM_POST, pipe_cb, s));
        if (k < 0)
                return k;

        for (unsigned i = 0; i < n; i++) {
                RpcRequest *r = &s->requests[i];

                r->server = s;
                loop_queue_item_init(&r->item, request_dispatch, r);
                k = nng_errno(nng_aio_alloc(&r->aio, request_aio_cb, r));
                if (k < 0)
                        return k;
                k = nng_errno(nng_ctx_open(&r->ctx, s->sock));
                if (k < 0)
                        return k;
        }
        for (unsigned i = 0; i < n; i++)
                request_start_recv(&s->requests[i]);

        k = cfg && cfg->tls_no_client_cert ? nng_util_listen_no_client_cert(s->sock, url, cfg->tls, NULL)
                                           : nng_util_listen(s->sock, url, cfg ? cfg->tls : NULL, NULL);
        if (k < 0)
                return k;

        *ret = TAKE_PTR(s);
        return 0;
}

int rpc_server_new(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcHandler handler, void *userdata,
                   RpcServer **ret) {
        return server_new(e, url, cfg, handler, NULL, userdata, ret);
}

int rpc_server_new_envelope(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcEnvelopeHandler handler,
                            void *userdata, RpcServer **ret) {
        return server_new(e, url, cfg, NULL, handler, userdata, ret);
}

int rpc_server_set_roles(RpcServer *s, RpcRoleCheck check, RpcRefusedHandler refused, void *userdata, char *error,
                         size_t error_size) {
        int k;

        if (!s || !check || !s->envelope_handler)
                return -EINVAL;
        if (s->ca_file && !s->verifier) {
                k = peer_verifier_new(s->ca_file, &s->verifier, error, error_size);
                if (k < 0)
                        return k;
                s->nonces = calloc(1, sizeof(PeerNonces));
                k = hashmap_new(&s->peers);
                if (!s->nonces || k < 0) {
                        s->verifier = peer_verifier_free(s->verifier);
                        return -ENOMEM;
                }
        }
        s->role_check = check;
        s->refused = refused;
        s->role_userdata = userdata;
        return 0;
}

static const PeerIdentity plaintext_peer = { .tls = false, .role = _PEER_ROLE_INVALID };
static const PeerIdentity unproven_peer = { .tls = true, .role = _PEER_ROLE_INVALID };

const PeerIdentity *rpc_request_peer(const RpcRequest *r) {
        PeerRecord *p;

        if (!r)
                return &plaintext_peer;
        if (!r->server->verifier)
                return tls_url(r->server->url) ? &unproven_peer : &plaintext_peer;
        p = peer_lookup(r->server, r->pipe_id);
        return p ? &p->id : &unproven_peer;
}

/* " uid=N" when a plaintext request's local user is known (looked up for
 * a request that needed a role), for the audit trail; else "". */
static const char *local_uid_suffix(const RpcRequest *r, char *buf, size_t size) {
        const PeerRecord *p = r->server->verifier ? NULL : peer_lookup(r->server, r->pipe_id);

        if (!p || p->local_kind != LOCAL_PEER_UID)
                return "";
        snprintf(buf, size, " uid=%u", (unsigned) p->local_uid);
        return buf;
}

const char *rpc_request_peer_describe(const RpcRequest *r, char *buf, size_t size) {
        const PeerIdentity *id = rpc_request_peer(r);
        char uid_buf[24];
        nng_pipe pipe = NNG_PIPE_INITIALIZER;
        char addr[INET6_ADDRSTRLEN] = "?";
        const char *scheme = "tcp";
        nng_sockaddr sa;
        uint64_t uid;

        if (!buf || size == 0)
                return NULL;
        if (id->role >= 0) {
                snprintf(buf, size, "%s", id->subject);
                return buf;
        }
        if (!r) {
                snprintf(buf, size, "unknown");
                return buf;
        }
        if (r->conn) {
                snprintf(buf, size, "%s%s", rpc_stream_request_peer(r), local_uid_suffix(r, uid_buf, sizeof(uid_buf)));
                return buf;
        }
        pipe.id = r->pipe_id;
        if (nng_pipe_get_addr(pipe, NNG_OPT_REMADDR, &sa) != 0) {
                snprintf(buf, size, "unknown (connection gone)");
                return buf;
        }
        switch (sa.s_family) {
        case NNG_AF_INET:
                inet_ntop(AF_INET, &sa.s_in.sa_addr, addr, sizeof(addr));
                snprintf(buf, size, "%s %s:%u%s%s", id->tls ? "tls" : scheme, addr, ntohs(sa.s_in.sa_port),
                         id->tls ? " (no role proven)" : "", local_uid_suffix(r, uid_buf, sizeof(uid_buf)));
                break;
        case NNG_AF_INET6:
                inet_ntop(AF_INET6, sa.s_in6.sa_addr, addr, sizeof(addr));
                snprintf(buf, size, "%s [%s]:%u%s%s", id->tls ? "tls" : scheme, addr, ntohs(sa.s_in6.sa_port),
                         id->tls ? " (no role proven)" : "", local_uid_suffix(r, uid_buf, sizeof(uid_buf)));
                break;
        case NNG_AF_IPC:
                if (nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_UID, &uid) == 0)
                        snprintf(buf, size, "ipc uid=%" PRIu64, uid);
                else
                        snprintf(buf, size, "ipc");
                break;
        default:
                snprintf(buf, size, "unknown");
        }
        return buf;
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

const PromHistogram *rpc_server_handle_histogram(const RpcServer *s) {
        return &s->handle_time;
}

const char *rpc_server_url(const RpcServer *s) {
        return s ? s->url : NULL;
}
