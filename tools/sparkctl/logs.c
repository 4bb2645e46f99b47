/* See logs.h. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "logs.h"
#include "output.h"
#include "sparkctl.h"

#define LOGS_PAGE_LINES 1000
#define LOGS_FOLLOW_MS 1000
#define LOGS_REPLY_MAX ((size_t) 8 << 20) /* a page: 1000 lines of at most 4 KiB */
#define LOGS_HOSTS_MAX 4096

typedef struct LogSource {
        Daemon daemon;
        char host[256];
        char *cursor;         /* where the next page starts; NULL: at --since */
        Envelope *page;       /* the current page, or NULL */
        size_t next;          /* its first line not written yet */
        bool more;            /* the worker has more right now */
        bool failed;
} LogSource;

static void sources_free(LogSource *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free((char *) s[i].daemon.url);
                free(s[i].cursor);
                envelope_free(s[i].page);
        }
        free(s);
}

static const Spark__ExecutorLogReply *page_of(const LogSource *s) {
        return s->page ? s->page->executor_log_reply : NULL;
}

static bool has_line(const LogSource *s) {
        return page_of(s) && s->next < page_of(s)->n_lines;
}

/* The next page of s; false when it failed (said why). */
static bool fetch(LogSource *s, const Args *a) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__ExecutorLogRequest req = SPARK__EXECUTOR_LOG_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        const Spark__ExecutorLogReply *lr;
        int r;

        req.app_id = (char *) a->app_id;
        req.executor_id = a->executor_id;
        req.since_usec = a->since_usec;
        req.cursor = s->cursor ? s->cursor : (char *) "";
        req.max_lines = LOGS_PAGE_LINES;
        ENVELOPE_SET(&env, EXECUTOR_LOG_REQUEST, executor_log_request, &req);
        r = call_daemon_quiet(&s->daemon, &env, SPARK__ENVELOPE__BODY_EXECUTOR_LOG_REPLY, SPARKCTL_TIMEOUT_MS,
                              LOGS_REPLY_MAX, &reply);
        if (r < 0) {
                fprintf(stderr, "sparkctl: the logs of %s: ", s->host);
                fflush(stderr);
                (void) call_report_error(&s->daemon, r, reply);
                s->failed = true;
                return false;
        }
        lr = reply->executor_log_reply;
        if (!isempty(lr->cursor) && !streq_ptr(lr->cursor, s->cursor)) {
                char *c = strdup(lr->cursor);
                if (!c) {
                        s->failed = true;
                        return false;
                }
                free(s->cursor);
                s->cursor = c;
        }
        s->more = lr->more;
        envelope_free(s->page);
        s->page = TAKE_PTR(reply);
        s->next = 0;
        return true;
}

static void write_line(const LogSource *s, const Spark__ExecutorLogLine *l, FILE *out) {
        char stamp[64], host[256], message[8192];
        time_t sec = (time_t) (l->realtime_usec / 1000000);
        struct tm tm;

        if (!localtime_r(&sec, &tm) || strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(stamp, sizeof(stamp), "@%lld", (long long) sec);
        fprintf(out, "%s.%03d %s %d: %s\n", stamp, (int) (l->realtime_usec % 1000000 / 1000),
                string_sanitize(s->host, host, sizeof(host)), l->executor_id,
                string_sanitize(l->message, message, sizeof(message)));
}

/* Writes, in time order, everything the sources have now. */
static void drain(LogSource *src, size_t n, const Args *a, FILE *out) {
        for (;;) {
                LogSource *best = NULL;

                /* a source whose page ran out must refill before anything
                 * later than its next line may be written */
                for (size_t i = 0; i < n; i++)
                        if (!src[i].failed && !has_line(&src[i]) && (src[i].more || !src[i].page))
                                (void) fetch(&src[i], a);
                for (size_t i = 0; i < n; i++) {
                        if (src[i].failed || !has_line(&src[i]))
                                continue;
                        if (!best || page_of(&src[i])->lines[src[i].next]->realtime_usec <
                                             page_of(best)->lines[best->next]->realtime_usec)
                                best = &src[i];
                }
                if (!best)
                        return;
                write_line(best, page_of(best)->lines[best->next++], out);
        }
}

/* The live workers, one per host. */
static int sources_from_master(const Daemon *master, LogSource **ret, size_t *ret_n) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__ClusterStateRequest req = SPARK__CLUSTER_STATE_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        const Spark__ClusterState *cs;
        LogSource *src;
        size_t n = 0;
        int r;

        ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &req);
        r = call_daemon(master, &env, SPARK__ENVELOPE__BODY_CLUSTER_STATE, &reply);
        if (r > 0)
                return r;
        cs = reply->cluster_state;
        src = calloc(MIN(cs->n_workers, (size_t) LOGS_HOSTS_MAX) + 1, sizeof(*src));
        if (!src)
                return SPARKCTL_EXIT_FAILED;
        for (size_t i = 0; i < cs->n_workers && n < LOGS_HOSTS_MAX; i++) {
                const Spark__WorkerInfo *w = cs->workers[i];
                bool seen = false;

                if (w->state != SPARK__WORKER_STATE__WORKER_ALIVE || isempty(w->host) ||
                    config_endpoint_check(w->endpoint))
                        continue;
                for (size_t k = 0; k < n && !seen; k++)
                        seen = streq(src[k].host, w->host);
                if (seen)
                        continue;
                snprintf(src[n].host, sizeof(src[n].host), "%s", w->host);
                src[n].daemon = (Daemon) { .kind = DAEMON_WORKER, .url = strdup(w->endpoint), .tls = master->tls,
                                            .sessions = master->sessions };
                if (!src[n].daemon.url) {
                        sources_free(src, n);
                        return SPARKCTL_EXIT_FAILED;
                }
                n++;
        }
        *ret = src;
        *ret_n = n;
        return 0;
}

static bool interrupted(const sigset_t *set, int timeout_ms) {
        struct timespec ts = { .tv_sec = timeout_ms / 1000, .tv_nsec = (long) (timeout_ms % 1000) * 1000000L };
        int sig;

        do
                sig = sigtimedwait(set, NULL, &ts);
        while (sig < 0 && errno == EINTR);
        return sig > 0;
}

int run_logs(const Daemon *master, const Args *a, FILE *out) {
        LogSource *src = NULL;
        sigset_t signals, old;
        size_t n = 0;
        bool failed = false;
        int r;

        r = sources_from_master(master, &src, &n);
        if (r != 0)
                return r;
        if (n == 0) {
                fprintf(stderr, "sparkctl: the master lists no live worker to read logs from\n");
                sources_free(src, n);
                return SPARKCTL_EXIT_FAILED;
        }
        sigemptyset(&signals);
        sigaddset(&signals, SIGINT);
        sigaddset(&signals, SIGTERM);
        sigaddset(&signals, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &signals, &old);
        for (;;) {
                drain(src, n, a, out);
                if (fflush(out) != 0 || ferror(out))
                        break;
                if (!a->follow)
                        break;
                /* Ctrl-C ends --follow: that is how it is meant to end */
                if (interrupted(&signals, LOGS_FOLLOW_MS))
                        break;
                for (size_t i = 0; i < n; i++)
                        src[i].more = true;
        }
        while (interrupted(&signals, 0))
                ;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        for (size_t i = 0; i < n; i++)
                failed |= src[i].failed;
        sources_free(src, n);
        return failed ? SPARKCTL_EXIT_FAILED : SPARKCTL_EXIT_OK;
}
