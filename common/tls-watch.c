/* See tls-watch.h.  nng_stats_get() takes a snapshot of every statistic of
 * the process; the tree's top level holds one scope per socket, listener,
 * dialer and pipe, named so, each with an "id" and (listeners, dialers) a
 * "url" and the "auth" counter. */
#include <string.h>

#include <nng/nng.h>

#include "alloc-util.h"
#include "nng-util.h"
#include "time-util.h"
#include "tls-watch.h"
#include "tls.h"

typedef struct WatchedEndpoint {
        bool listener;
        uint64_t id;
        char *url;
        uint64_t count;       /* the counter at the last poll */
        uint64_t pending;     /* failures not reported yet */
        usec_t last_report;   /* 0: never */
        bool seen;            /* in the current poll */
} WatchedEndpoint;

struct TlsWatch {
        sd_event_source *timer;
        usec_t poll_usec, report_usec;
        TlsRefusalHandler handler;
        void *userdata;
        WatchedEndpoint *endpoints;
        size_t n_endpoints, n_allocated;
};

static void stats_freep(nng_stat **s) {
        if (*s)
                nng_stats_free(*s);
}

static WatchedEndpoint *endpoint_find(TlsWatch *w, bool listener, uint64_t id) {
        for (size_t i = 0; i < w->n_endpoints; i++)
                if (w->endpoints[i].listener == listener && w->endpoints[i].id == id)
                        return w->endpoints + i;
        return NULL;
}

static WatchedEndpoint *endpoint_add(TlsWatch *w, bool listener, uint64_t id, const char *url) {
        WatchedEndpoint *e;
        char *copy;

        if (GREEDY_REALLOC(w->endpoints, w->n_allocated, w->n_endpoints + 1) < 0)
                return NULL;
        copy = strdup(url);
        if (!copy)
                return NULL;
        e = w->endpoints + w->n_endpoints++;
        /* Counters start at 0 when nng creates the endpoint: failures before
         * the first poll count too. */
        *e = (WatchedEndpoint) { .listener = listener, .id = id, .url = copy };
        return e;
}

/* Reports e's pending failures if it may now. */
static int endpoint_report(TlsWatch *w, WatchedEndpoint *e, usec_t now, bool force) {
        if (e->pending == 0)
                return 0;
        if (!force && e->last_report != 0 && now - e->last_report < w->report_usec)
                return 0;
        w->handler(w, e->url, e->listener, e->pending, w->userdata);
        e->pending = 0;
        e->last_report = now;
        return 1;
}

static const nng_stat *child_find(const nng_stat *scope, const char *name) {
        for (nng_stat *c = nng_stat_child((nng_stat *) scope); c; c = nng_stat_next(c))
                if (streq(nng_stat_name(c), name))
                        return c;
        return NULL;
}

static int poll_one(TlsWatch *w, const nng_stat *scope, bool listener, usec_t now) {
        const nng_stat *id = child_find(scope, "id"), *url = child_find(scope, "url"),
                       *auth = child_find(scope, "auth");
        WatchedEndpoint *e;
        uint64_t count;

        if (!id || !url || !auth || nng_stat_type((nng_stat *) url) != NNG_STAT_STRING ||
            !tls_url(nng_stat_string((nng_stat *) url)))
                return 0;
        count = nng_stat_value((nng_stat *) auth);
        e = endpoint_find(w, listener, nng_stat_value((nng_stat *) id));
        if (!e) {
                e = endpoint_add(w, listener, nng_stat_value((nng_stat *) id), nng_stat_string((nng_stat *) url));
                if (!e)
                        return -ENOMEM;
        }
        e->seen = true;
        if (count > e->count)
                e->pending += count - e->count;
        e->count = count;
        return endpoint_report(w, e, now, false);
}

int tls_watch_poll(TlsWatch *w) {
        _cleanup_(stats_freep) nng_stat *root = NULL;
        usec_t now = now_mono_usec();
        int r, reports = 0;
        size_t i;

        if (!w)
                return -EINVAL;
        r = nng_errno(nng_stats_get(&root));
        if (r < 0)
                return r;
        for (i = 0; i < w->n_endpoints; i++)
                w->endpoints[i].seen = false;
        for (nng_stat *s = nng_stat_child(root); s; s = nng_stat_next(s)) {
                const char *name = nng_stat_name(s);
                bool listener = streq(name, "listener");

                if (!listener && !streq(name, "dialer"))
                        continue;
                r = poll_one(w, s, listener, now);
                if (r < 0)
                        return r;
                reports += r;
        }

        /* Endpoints that are gone: say what they had not said yet. */
        for (i = 0; i < w->n_endpoints;) {
                WatchedEndpoint *e = w->endpoints + i;

                if (e->seen) {
                        i++;
                        continue;
                }
                reports += endpoint_report(w, e, now, true);
                free(e->url);
                *e = w->endpoints[--w->n_endpoints];
        }
        return reports;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        TlsWatch *w = userdata;

        /* Nothing to do about a failure but try again next time. */
        (void) tls_watch_poll(w);
        (void) sd_event_source_set_time(s, usec + w->poll_usec);
        return 0;
}

int tls_watch_new(sd_event *e, uint64_t poll_usec, uint64_t report_usec, TlsRefusalHandler handler, void *userdata,
                  TlsWatch **ret) {
        _cleanup_(tls_watch_freep) TlsWatch *w = NULL;
        int r;

        if (!e || !handler || !ret)
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->poll_usec = poll_usec > 0 ? poll_usec : TLS_WATCH_POLL_USEC;
        w->report_usec = report_usec > 0 ? report_usec : TLS_WATCH_REPORT_USEC;
        w->handler = handler;
        w->userdata = userdata;

        r = sd_event_add_time_relative(e, &w->timer, CLOCK_MONOTONIC, w->poll_usec, w->poll_usec / 10, on_timer, w);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(w->timer, SD_EVENT_ON);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(w);
        return 0;
}

static void watch_free_memory(TlsWatch *w) {
        for (size_t i = 0; i < w->n_endpoints; i++)
                free(w->endpoints[i].url);
        free(w->endpoints);
        free(w);
}

TlsWatch *tls_watch_free(TlsWatch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->timer);
        watch_free_memory(w);
        return NULL;
}

static void on_timer_destroyed(void *userdata) {
        watch_free_memory(userdata);
}

int tls_watch_set_floating(TlsWatch *w) {
        int r;

        if (!w)
                return -EINVAL;
        r = sd_event_source_set_destroy_callback(w->timer, on_timer_destroyed);
        if (r < 0)
                return r;
        r = sd_event_source_set_floating(w->timer, true);
        if (r < 0) {
                (void) sd_event_source_set_destroy_callback(w->timer, NULL);
                return r;
        }
        /* The loop holds the source now; w->timer stays valid as long as w. */
        sd_event_source_unref(w->timer);
        return 0;
}
