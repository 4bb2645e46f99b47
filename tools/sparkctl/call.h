/* One request to the master or the driver, and the one place that turns
 * what went wrong into a message and an exit status: unreachable (3), the
 * daemon said no (1), anything else (1). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "codec.h"
#include "rpc-client.h"
#include "tls.h"
#include "urls.h"

/* The connections one run of sparkctl keeps, one per daemon URL: a
 * submit's many FetchResults go over one connection, with one TLS
 * handshake and one proof of role, and cost the driver one connection.
 * Must be done (closed) before the TLS settings they use go. */
#define CALL_SESSIONS_MAX 4
typedef struct CallSessions {
        RpcSyncSession *sessions[CALL_SESSIONS_MAX];
        const TlsSettings *tls[CALL_SESSIONS_MAX];
} CallSessions;

void call_sessions_done(CallSessions *c);

typedef struct Daemon {
        DaemonKind kind;
        const char *url;
        const TlsSettings *tls; /* for a tls+tcp:// URL */
        CallSessions *sessions; /* NULL: a new connection for each call */
} Daemon;

/* rpc_call_sync() expecting a reply with body `expect` (0: any but Error).
 * Returns 0 and the reply; or a negative errno and *ret NULL, except that
 * when the daemon answered with an Error, *ret holds it (see
 * call_report_error()).  -EBADE: an answer of an unexpected type.
 * Prints nothing. */
int call_daemon_quiet(const Daemon *d, Envelope *req, Spark__Envelope__BodyCase expect, int timeout_ms,
                      size_t max_reply, Envelope **ret);

/* Prints why a call failed ("sparkctl: cannot reach the master at URL: …",
 * or the daemon's own message) and returns the exit status for it. */
int call_report_error(const Daemon *d, int error, const Envelope *reply);

/* call_daemon_quiet() + call_report_error(): returns 0 with the reply, or
 * the exit status (> 0) after saying why. */
int call_daemon(const Daemon *d, Envelope *req, Spark__Envelope__BodyCase expect, Envelope **ret);

/* -ECONNREFUSED, -ETIMEDOUT, -ENOENT (no ipc:// socket), -EINVAL (a host
 * that does not resolve), -EKEYREJECTED (the TLS handshake failed), …:
 * nobody answered. */
bool call_error_is_unreachable(int error);
