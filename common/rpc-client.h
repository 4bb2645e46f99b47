/* Request side: an asynchronous nng req0 client bound to the sd-event loop,
 * and blocking calls for command-line tools and tests: one-shot, or over a
 * session that keeps its connection.
 *
 * The async client dials one URL without blocking and keeps reconnecting by
 * itself; each call gets its own nng context and aio, so any number of calls
 * can be in flight.  A call whose connection drops is resent on the next
 * connection (requests are idempotent by design, docs/DESIGN.md §4).
 *
 * Roles (docs/security.md): with a tls+tcp:// URL and a certificate and key
 * in the TLS settings, both clients answer a server's challenge
 * (PEER_PROOF_REQUIRED) by signing its nonce with the key and sending the
 * request again with the proof; the caller sees only the final answer.
 * Without a key the challenge reaches the caller as an Error.
 *
 * Threading: rpc_client_* must be called on the loop thread; reply
 * callbacks run there too.  rpc_call_sync() needs no loop and may be called
 * from any thread; a session, from one thread at a time. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "codec.h"
#include "loop-queue.h"
#include "macro.h"
#include "tls.h"

typedef struct RpcClient RpcClient;

typedef struct RpcClientConfig {
        size_t max_reply_bytes; /* NNG_OPT_RECVMAXSZ; 0: SPARK_MAX_MESSAGE_BYTES */
        int reconnect_min_ms;   /* 0: 100 */
        int reconnect_max_ms;   /* 0: 2000 */
        /* Resend a request that got no answer after this long even though
         * the connection stayed up.  0: never within a call (a request is
         * still resent at once when its connection drops).  Keep it above the
         * longest time the server may park the request. */
        int resend_ms;
        /* For a tls+tcp:// URL: the CA the server's certificate must be
         * signed by (else -ENOKEY), and our certificate and key to present.
         * Read when the client is created. */
        const TlsSettings *tls;
        /* Where the client's completions go to reach the loop.  NULL: a
         * queue (an eventfd) of its own.  A daemon with many clients (the
         * master's link to each worker) passes one queue for all of them,
         * so that they cost no fd each and the loop polls one eventfd, not
         * thousands.  The queue must outlive the client; the client takes
         * its own items back from it when freed. */
        LoopQueue *queue;
} RpcClientConfig;

/* Called once per call, on the loop thread:
 *   error == 0:             reply is the decoded answer;
 *   error < 0, reply set:   the server answered with an Error; error is its
 *                           code and reply->error->message says why;
 *   error < 0, reply NULL:  no answer: -ETIMEDOUT, -ECANCELED (client
 *                           freed), -EMSGSIZE/-EBADMSG/-EPROTONOSUPPORT/
 *                           -ENOMSG (an answer we cannot decode), …
 * reply is freed when the callback returns. */
typedef void (*RpcReplyHandler)(RpcClient *c, int error, const Envelope *reply, void *userdata);

/* cfg may be NULL (not for tls+tcp://).  Fails only on a bad URL, bad TLS
 * settings (nng-tls.h) or no resources: a server that is not there yet is
 * not an error, and neither is one that refuses our certificate — the
 * dialer keeps trying, calls time out, and tls-watch.h sees the refusals. */
int rpc_client_new(sd_event *e, const char *url, const RpcClientConfig *cfg, RpcClient **ret);

/* Calls still in flight complete with -ECANCELED, their callbacks run from
 * within this call.  May be called from a reply callback. */
RpcClient *rpc_client_free(RpcClient *c);

/* Encodes req (its version is set) and sends it; cb gets the answer or an
 * error within timeout_ms (> 0).  Returns 0 (cb will be called exactly once)
 * or a negative errno (cb will not be called): -EINVAL, -ENOMEM,
 * -ESHUTDOWN (client being freed). */
int rpc_client_call(RpcClient *c, Envelope *req, int timeout_ms, RpcReplyHandler cb, void *userdata);

const char *rpc_client_url(const RpcClient *c);
/* Calls in flight. */
unsigned rpc_client_pending(const RpcClient *c);
/* Whether the connection is known to be gone: there was one, nng removed
 * it (the server closed it, exited or was killed) and no new one has been
 * made since.  false before the first connection: a server that is not
 * there yet is not known to be gone.  A hint for choosing another server
 * (master-link.h), read when a call failed; the calls themselves still
 * wait for a new connection until their deadline. */
bool rpc_client_connection_lost(const RpcClient *c);

/* One blocking round trip on a fresh socket (a session of one call).  Fails
 * within about timeout_ms: -ECONNREFUSED at once when nobody listens (tcp://
 * or ipc://), -ETIMEDOUT when the peer cannot be reached or does not answer
 * in time, -EINVAL for a malformed URL or a host name that does not resolve,
 * -EOPNOTSUPP for an unknown scheme.  max_reply 0 means
 * SPARK_MAX_MESSAGE_BYTES.
 * Returns 0 and the reply.  If the server answered with an Error, returns
 * its code (< 0) and still stores the Error envelope in *ret_reply so the
 * caller can show its message; on every other failure *ret_reply is NULL. */
int rpc_call_sync(const char *url, Envelope *req, int timeout_ms, size_t max_reply, Envelope **ret_reply);

/* rpc_call_sync() with TLS settings for a tls+tcp:// URL (tls may be NULL
 * for others; rpc_call_sync() passes NULL).  A failed TLS handshake —
 * refused by the server (no certificate, or one not signed by its CA) or
 * by us (a server certificate not signed by our CA or not for the URL's
 * host) — is -EKEYREJECTED; settings that are missing -ENOKEY, that cannot
 * be loaded see nng-tls.h. */
int rpc_call_sync_tls(const char *url, const TlsSettings *tls, Envelope *req, int timeout_ms, size_t max_reply,
                      Envelope **ret_reply);

/* A connection kept for several blocking calls to one URL, as a command
 * line tool makes them (a submit's many FetchResults): dialled at the
 * first call, and its role proven at the first challenge, once.  Each call
 * behaves as rpc_call_sync_tls() does, with the same errors; a call that
 * gets no answer (unreachable, timed out, dropped) closes the connection,
 * and the next call dials again.  A call that allows a larger reply than
 * the connection was opened for opens a new one (nng bounds a reply by
 * the socket's limit; each call still checks its own max_reply).  tls
 * must stay valid as long as the session.  Not for several threads at
 * once.
 * Once an answer over a tcp:// URL names the server's task channel (a
 * driver's, docs/DESIGN.md §4), the next calls go there, each a round trip
 * on a plain TCP connection without nng's threads (rpc-channel-call.h); if
 * the channel cannot be reached or closes, the call goes over nng again,
 * and so do the later ones until an answer names a channel again (a
 * restarted driver's has a new port). */
typedef struct RpcSyncSession RpcSyncSession;

int rpc_sync_session_new(const char *url, const TlsSettings *tls, RpcSyncSession **ret);
int rpc_sync_session_call(RpcSyncSession *s, Envelope *req, int timeout_ms, size_t max_reply, Envelope **ret_reply);
RpcSyncSession *rpc_sync_session_free(RpcSyncSession *s);
const char *rpc_sync_session_url(const RpcSyncSession *s);
/* Whether a connection is open now (for tests and stats). */
bool rpc_sync_session_connected(const RpcSyncSession *s);
/* Whether the calls go over the server's task channel now. */
bool rpc_sync_session_on_channel(const RpcSyncSession *s);

DEFINE_TRIVIAL_CLEANUP_FUNC(RpcClient *, rpc_client_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(RpcSyncSession *, rpc_sync_session_free);
