/* A request endpoint: an nng rep0 socket with a fixed pool of contexts, each
 * an explicit state machine (RECV → WAIT_REPLY → SEND → RECV) driven by its
 * own aio.  Requests are handed to the sd-event loop; the handler runs on the
 * loop thread and may answer at once or keep the RpcRequest ("park" it) and
 * answer later — from a timer, another request, anything on the loop.  A
 * context takes no new request until its current one is answered, so up to
 * n_contexts requests can be parked at once.
 *
 * Every delivered request must be answered exactly once, also when its
 * peer is gone (the answer is then dropped by nng): until it is, its context
 * takes no new request.  An RpcRequest pointer is only valid until it is
 * answered — the context reuses it for its next request.
 *
 * Threading: every function here must be called on the loop thread.  nng's
 * threads only ever touch a context that is in RECV or SEND and the queue.
 *
 * Known limitation of nng 1.5.2 (see nanomsg/nng#1543 and #1636, fixed later):
 * nng_close() of a socket that is receiving data at that very moment can
 * hang forever in nng's reaper.  rpc_server_free() closes the socket, so a
 * daemon should free its server at shutdown, not while busy serving. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "codec.h"
#include "macro.h"
#include "peer-role.h"
#include "prom-writer.h"
#include "tls.h"

#define RPC_SERVER_DEFAULT_CONTEXTS 64u

typedef struct RpcServer RpcServer;
typedef struct RpcRequest RpcRequest;

typedef struct RpcServerConfig {
        unsigned n_contexts;      /* 0: RPC_SERVER_DEFAULT_CONTEXTS */
        size_t max_request_bytes; /* NNG_OPT_RECVMAXSZ; 0: SPARK_MAX_MESSAGE_BYTES */
        /* For a tls+tcp:// URL: the CA, certificate and key (required, else
         * -ENOKEY); peers must present a certificate signed by the CA.  Read
         * when the server is created. */
        const TlsSettings *tls;
        /* ... but with this set, tls+tcp:// asks peers for no certificate. */
        bool tls_no_client_cert;
} RpcServerConfig;

/* Both handlers follow one rule: return < 0 and, if the request has not been
 * answered, the server answers it with an Error carrying that code; return
 * >= 0 having answered it, or to park it (keep req, answer it later).
 *
 * Raw handler: data/len stay valid until the request is answered. */
typedef int (*RpcHandler)(RpcServer *s, RpcRequest *req, const void *data, size_t len, void *userdata);

/* Envelope handler: the request is already decoded and checked by
 * envelope_decode(); what fails there (malformed, wrong version, unknown
 * body) is answered with an Error by the server and never reaches the
 * handler.  env stays valid until the request is answered (see also
 * rpc_request_envelope()). */
typedef int (*RpcEnvelopeHandler)(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata);

/* A peer's connection (nng pipe) came or went.  Removal is reported after
 * every request from that pipe that reached the handler, and no request from
 * the pipe is delivered afterwards.  An "added" event may come after the
 * first request on that pipe. */
typedef void (*RpcPipeHandler)(RpcServer *s, uint32_t pipe_id, bool added, void *userdata);

/* Called for a parked request when the server is freed without answering it,
 * so the owner can drop its pointer.  req must not be answered from here. */
typedef void (*RpcAbandonHandler)(RpcRequest *req, void *userdata);

/* Requests and error replies are also counted by the request's envelope
 * body case (the field number of its oneof, below this bound; 0: one that
 * could not be decoded) for /metrics. */
#define RPC_STATS_TYPES 128

typedef struct RpcServerStats {
        uint64_t requests;      /* received and handed to the loop */
        uint64_t requests_by_type[RPC_STATS_TYPES];
        uint64_t errors_by_type[RPC_STATS_TYPES];
        uint64_t replies;       /* answers sent (including errors) */
        uint64_t decode_errors; /* envelope mode: answered with an Error */
        uint64_t dropped;       /* from a pipe already gone, or no memory */
        uint64_t pipe_events_lost; /* pipe notifications lost to ENOMEM */
        unsigned waiting;       /* delivered, not yet answered (parked) */
} RpcServerStats;

/* Listens on url (tcp://, ipc://, tls+tcp://).  cfg may be NULL (not for
 * tls+tcp://).  Errors of the TLS settings: see nng-tls.h. */
int rpc_server_new(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcHandler handler, void *userdata,
                   RpcServer **ret);
int rpc_server_new_envelope(sd_event *e, const char *url, const RpcServerConfig *cfg, RpcEnvelopeHandler handler,
                            void *userdata, RpcServer **ret);

/* Closes the socket, waits for nng's callbacks to finish, abandons the
 * parked requests (their RpcRequest pointers become invalid) and frees.
 * May be called from a handler. */
RpcServer *rpc_server_free(RpcServer *s);

/* Roles (docs/security.md).  check says which roles may send env:
 * PEER_ROLES_NONE lets anyone (no proof asked).  On a tls+tcp:// listener a
 * request from a connection whose role is not proven yet is answered
 * Error{PEER_PROOF_REQUIRED, challenge} (peer-proof.h); a proof attached to
 * the resent request is checked against the CA of the server's TLS
 * settings, and the role it proves is kept for the connection.  A request
 * from a role not in check's set, or with a proof that fails, is answered
 * -EPERM with the reason, after refused (may be NULL) was called with it —
 * the daemon logs there.  The handler sees only allowed requests.  On other
 * listeners every request is allowed: there is no role to check.
 * Returns 0, or an error loading the CA (with the reason in error). */
typedef uint32_t (*RpcRoleCheck)(const Envelope *env, void *userdata);
typedef void (*RpcRefusedHandler)(RpcServer *s, RpcRequest *req, const char *reason, void *userdata);
int rpc_server_set_roles(RpcServer *s, RpcRoleCheck check, RpcRefusedHandler refused, void *userdata, char *error,
                         size_t error_size);

/* The task channel (rpc-server-stream.c, docs/DESIGN.md §4): also listen
 * for TCP connections on the host of the server's URL, on a port the
 * kernel picks (*ret_port), and take requests framed as stream-frame.h
 * says on them, read and answered by the loop itself (no nng thread on the
 * way).  For a tls+tcp:// URL the connections are TLS with tls's
 * certificate and key, asking the peer for no certificate
 * (tls-session.h); for tcp:// they are plain.  Each connection is a pipe
 * of its own for the pipe handler, with an id above 2^31.  Beside tcp://
 * its clients use it too: every answer to an nng request names the port
 * (Envelope.channel_port, rpc-channel-call.h), and a request that needs a
 * role is checked there as on nng, by the local user behind the
 * connection.  Beside tls+tcp:// such a request is refused there
 * (executors prove themselves with their secret, clients stay on nng).
 * -EOPNOTSUPP for ipc:// URLs: there, nng it is.  Errors of the
 * certificate or key: *ret_failed names the file (tls-session.h). */
int rpc_server_listen_stream(RpcServer *s, const TlsSettings *tls, uint16_t *ret_port, const char **ret_failed);

void rpc_server_set_pipe_handler(RpcServer *s, RpcPipeHandler handler, void *userdata);
void rpc_server_get_stats(const RpcServer *s, RpcServerStats *ret);
/* The time the loop spent in the handler of each envelope request. */
const PromHistogram *rpc_server_handle_histogram(const RpcServer *s);
const char *rpc_server_url(const RpcServer *s);

/* The nng pipe id the request came on (an executor is tied to it). */
uint32_t rpc_request_pipe_id(const RpcRequest *req);
RpcServer *rpc_request_server(const RpcRequest *req);
/* Who sent the request: the role and subject its connection proved (on a
 * TLS listener with roles), else an identity with tls false, or tls true
 * and role _PEER_ROLE_INVALID (a TLS peer that proved nothing). */
const PeerIdentity *rpc_request_peer(const RpcRequest *req);
/* Who sent it, for the audit trail (SPARK_PEER=): the subject of a proven
 * certificate, else the transport and peer address ("tcp 10.0.0.5:41234",
 * "ipc uid=1000", "tls 10.0.0.5:41234 (no role proven)"). */
const char *rpc_request_peer_describe(const RpcRequest *req, char *buf, size_t size);
/* The decoded request (envelope mode), NULL in raw mode. */
const Envelope *rpc_request_envelope(const RpcRequest *req);
void rpc_request_set_abandon_handler(RpcRequest *req, RpcAbandonHandler handler, void *userdata);

/* Each answers req once; afterwards req is invalid (its context takes the
 * next request).  A second answer returns -ESTALE.  If the answer cannot be
 * built (no memory) the request is dropped without an answer — the client
 * times out — and the error is returned; req is invalid then too.
 * rpc_request_reply_envelope() answers with an Error instead if env cannot
 * be encoded. */
int rpc_request_reply(RpcRequest *req, const void *buf, size_t len);
int rpc_request_reply_envelope(RpcRequest *req, Envelope *env);
int rpc_request_reply_error(RpcRequest *req, int code, const char *fmt, ...) _printf_(3, 4);
/* An Ack: done, nothing to say. */
int rpc_request_reply_ack(RpcRequest *req);

DEFINE_TRIVIAL_CLEANUP_FUNC(RpcServer *, rpc_server_free);
