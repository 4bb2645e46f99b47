/* See call.h. */
#include <string.h>

#include "call.h"
#include "endpoint-list.h"
#include "rpc-client.h"
#include "sparkctl.h"

bool call_error_is_unreachable(int error) {
        switch (error) {
        case -ECONNREFUSED:
        case -ETIMEDOUT:
        case -ENOENT:
        case -ECONNRESET:
        case -ECONNABORTED:
        case -EHOSTUNREACH:
        case -ENETUNREACH:
        case -EADDRNOTAVAIL:
        case -EINVAL:
        case -EKEYREJECTED:
                return true;
        default:
                return false;
        }
}

void call_sessions_done(CallSessions *c) {
        for (size_t i = 0; i < CALL_SESSIONS_MAX; i++)
                c->sessions[i] = rpc_sync_session_free(c->sessions[i]);
}

/* The kept connection to url, made if there is none (the oldest of a full
 * set makes room); NULL if that fails: the caller calls without one. */
static RpcSyncSession *session_for(CallSessions *c, const char *url, const TlsSettings *tls) {
        size_t i;

        for (i = 0; i < CALL_SESSIONS_MAX && c->sessions[i]; i++)
                if (streq(rpc_sync_session_url(c->sessions[i]), url) && c->tls[i] == tls)
                        return c->sessions[i];
        if (i == CALL_SESSIONS_MAX) {
                rpc_sync_session_free(c->sessions[0]);
                memmove(c->sessions, c->sessions + 1, (CALL_SESSIONS_MAX - 1) * sizeof(c->sessions[0]));
                memmove(c->tls, c->tls + 1, (CALL_SESSIONS_MAX - 1) * sizeof(c->tls[0]));
                i = CALL_SESSIONS_MAX - 1;
                c->sessions[i] = NULL;
        }
        if (rpc_sync_session_new(url, tls, &c->sessions[i]) < 0)
                return NULL;
        c->tls[i] = tls;
        return c->sessions[i];
}

static int call_one(const char *url, const Daemon *d, Envelope *req, Spark__Envelope__BodyCase expect,
                    int timeout_ms, size_t max_reply, Envelope **ret) {
        _cleanup_envelope_ Envelope *reply = NULL;
        RpcSyncSession *session = d->sessions ? session_for(d->sessions, url, d->tls) : NULL;
        int r;

        *ret = NULL;
        if (session)
                r = rpc_sync_session_call(session, req, timeout_ms, max_reply, &reply);
        else
                r = rpc_call_sync_tls(url, d->tls, req, timeout_ms, max_reply, &reply);
        if (r < 0) {
                if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                        *ret = TAKE_PTR(reply);
                return r;
        }
        if (reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                /* an Error with code 0: still a refusal */
                *ret = TAKE_PTR(reply);
                return -EREMOTEIO;
        }
        if (expect != SPARK__ENVELOPE__BODY__NOT_SET && reply->body_case != expect)
                return -EBADE;
        *ret = TAKE_PTR(reply);
        return 0;
}

/* With several masters (docs/ha.md): the first that answers, or the
 * leader a standby names (if listed); d->url is the list. */
int call_daemon_quiet(const Daemon *d, Envelope *req, Spark__Envelope__BodyCase expect, int timeout_ms,
                      size_t max_reply, Envelope **ret) {
        EndpointList l = {};
        char leader[ENDPOINT_LIST_URL_MAX];
        int r = -EINVAL;

        if (d->kind != DAEMON_MASTER || !strchr(d->url, ','))
                return call_one(d->url, d, req, expect, timeout_ms, max_reply, ret);
        if (endpoint_list_parse(d->url, &l) < 0)
                return -EINVAL;
        for (size_t i = 0; i < l.n; i++) {
                int k;

                if (*ret)
                        *ret = envelope_free(*ret); /* a standby's answer, from the one before */
                r = call_one(l.urls[i], d, req, expect, timeout_ms, max_reply, ret);
                if (r >= 0)
                        break;
                k = *ret ? standby_reply_leader((*ret)->error->code, (*ret)->error->message, leader, sizeof(leader))
                         : -ENOENT;
                if (k == 0 && endpoint_list_find(&l, leader) >= 0 && !streq(leader, l.urls[i])) {
                        *ret = envelope_free(*ret);
                        r = call_one(leader, d, req, expect, timeout_ms, max_reply, ret);
                        break;
                }
                /* unreachable, or a standby that knows no leader: the next */
                if (k == -ENOENT && (!call_error_is_unreachable(r) || *ret))
                        break;
        }
        endpoint_list_done(&l);
        return r;
}

int call_report_error(const Daemon *d, int error, const Envelope *reply) {
        const char *what = daemon_kind_to_string(d->kind);

        if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                const char *m = reply->error->message;
                fprintf(stderr, "sparkctl: %s\n", isempty(m) ? strerror(-error) : m);
                return SPARKCTL_EXIT_FAILED;
        }
        if (error == -EKEYREJECTED) {
                fprintf(stderr,
                        "sparkctl: cannot reach the %s at %s: the TLS handshake failed: the %s refused our "
                        "certificate (none, or not signed by its CA), or its certificate is not signed by our CA "
                        "or not for that host name\n",
                        what, d->url, what);
                return SPARKCTL_EXIT_UNREACHABLE;
        }
        if (call_error_is_unreachable(error)) {
                /* the URL was checked before: nng's EINVAL here is a host it cannot resolve */
                fprintf(stderr, "sparkctl: cannot reach the %s at %s: %s\n", what, d->url,
                        error == -EINVAL ? "cannot resolve the address" : strerror(-error));
                return SPARKCTL_EXIT_UNREACHABLE;
        }
        if (error == -EBADE)
                fprintf(stderr, "sparkctl: the %s at %s sent an unexpected answer\n", what, d->url);
        else
                fprintf(stderr, "sparkctl: request to the %s at %s failed: %s\n", what, d->url, strerror(-error));
        return SPARKCTL_EXIT_FAILED;
}

int call_daemon(const Daemon *d, Envelope *req, Spark__Envelope__BodyCase expect, Envelope **ret) {
        _cleanup_envelope_ Envelope *reply = NULL;
        int r;

        r = call_daemon_quiet(d, req, expect, SPARKCTL_TIMEOUT_MS, 0, &reply);
        if (r < 0)
                return call_report_error(d, r, reply);
        *ret = TAKE_PTR(reply);
        return 0;
}
