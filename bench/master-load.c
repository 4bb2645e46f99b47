/* master-load: the master at scale (docs/DESIGN.md §10), over its real sockets.
 *
 *   master-load MASTER_URL EVENTS_URL HOST FIRST_PORT PORTS MASTER_PID WORKERS CORES APPS EXECUTORS_PER_APP
 *               [SMALL_APPS [METRICS_HOST:PORT LATE_WORKERS [IDLE_SCRAPES]]]
 *
 * 1. Serves the simulated workers' request endpoint: one nng rep socket with
 *    many contexts, listening on tcp://HOST:FIRST_PORT .. FIRST_PORT+PORTS-1;
 *    worker i advertises port FIRST_PORT + i % PORTS (the master keys
 *    workers by id, not by endpoint, so they may share one; several
 *    listeners spread the master's connection storm — one tcp connection
 *    per worker — over several accept backlogs, as separate hosts would).
 *    It answers LaunchExecutor/KillExecutor with an Ack, noting when each
 *    executor's launch arrived.
 * 2. Subscribes to the master's events and counts each app's executors
 *    announced by ExecutorAdded.  Like every subscriber (docs/DESIGN.md §4),
 *    it follows the publisher's (epoch, seq): on its first event, a new
 *    epoch or a gap it asks the master for a snapshot (ClusterState) of
 *    each app not yet fully announced on a socket of its own, counts the
 *    executors listed there that no event had announced ("by resync"),
 *    and takes the snapshot's position, so that later events it already
 *    covered are dropped as stale.
 * 3. Registers WORKERS workers of CORES cores one at a time
 *    (RegisterWorker round trip = registration latency), then sends one
 *    heartbeat for each with 64 in flight.
 * 4. Registers APPS applications one after another, each asking for
 *    EXECUTORS_PER_APP executors of one core, and waits until every one of
 *    them has been launched (LaunchExecutor arrived here) and announced
 *    (ExecutorAdded).  Placement latency of an executor = its app's
 *    RegisterApplication sent → its LaunchExecutor arrived.  The master's
 *    own cost per executor is the app's launch interval: first to last
 *    launch of the app / (executors - 1), and the gaps between consecutive
 *    launches.
 * 5. With the cluster so loaded, registers SMALL_APPS (default 0) apps of
 *    one one-core executor one after another, each when the previous one's
 *    launch has arrived: RegisterApplication sent → its LaunchExecutor
 *    arrived is the placement latency of one executor on a loaded master
 *    (the figure for docs/DESIGN.md §10's "place ≤ 1 ms each").  The cluster must
 *    have that many cores free: WORKERS × CORES ≥ APPS × EXECUTORS_PER_APP
 *    + SMALL_APPS.
 * 6. Reads the master's VmRSS/VmHWM and CPU time after each phase.
 * 7. With METRICS_HOST:PORT, registers LATE_WORKERS more workers, one
 *    every 2.5 ms, then each of them again LATE_ROUNDS - 1 times (as a
 *    worker that restarted with nothing running), in 100 ms windows that
 *    alternate between a scraper GETting the master's /metrics every
 *    100 ms and none (RegisterWorker with and without scraping, same
 *    master, same minutes); then scrapes the master at rest IDLE_SCRAPES
 *    times, 100 ms apart, while our endpoints are still up.
 *
 * Prints "key value" lines; exits 1 if a phase could not finish. */
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>

#include <nng/nng.h>
#include <nng/supplemental/util/platform.h>
#include <nng/protocol/pubsub0/sub.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "bench-util.h"
#include "http-get.h"
#include "codec.h"
#include "macro.h"

#define SERVER_CONTEXTS 256
#define HEARTBEAT_CONTEXTS 64
#define MAX_APPS 64
#define MAX_SMALL_APPS 1000
#define APP_WAIT_USEC (60 * 1000000ull)     /* an app not placed by then: give up */
#define APP_STALL_USEC (2 * 1000000ull)     /* ... or when no launch came for this long */
#define EVENTS_GRACE_USEC (500 * 1000ull)   /* ExecutorAdded may be dropped by pub/sub */

typedef struct AppTrack {
        char id[64];
        uint64_t registered_at;
        _Atomic uint64_t *launch_at;  /* by executor id, 1..per_app */
        atomic_uint launches, duplicates, added;
        atomic_uint added_by_resync;     /* of added: first seen in a snapshot */
        atomic_uchar *announced;         /* by executor id, 1..per_app: in an event or a snapshot */
        atomic_int size;                 /* executors asked for (0: not registered yet) */
        _Atomic uint64_t last_launch;
} AppTrack;

typedef struct Load {
        const char *master_url, *events_url, *host;
        int first_port, n_ports;
        int master_pid, n_workers, cores, n_apps, per_app;
        pthread_mutex_t lock;
        AppTrack apps[MAX_APPS + MAX_SMALL_APPS];
        int n_small;
        int n_apps_seen;
        _Atomic uint64_t current_registered_at;
        atomic_uint kills, other_requests, unknown_executors;
        atomic_bool stop;
        void *ack;
        size_t ack_len;
} Load;

static Load L = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* With $MASTER_LOAD_TRACE, each late registration's and small app's start
 * (CLOCK_MONOTONIC, µs) and latency, a line each: to line a slow one up
 * with what else ran then (perf record -k CLOCK_MONOTONIC). */
static FILE *Trace;

/* The small-app phase waits for each launch without spinning (two cores:
 * a spinning waiter would take one from the master). */
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t launch_cond = PTHREAD_COND_INITIALIZER;
static atomic_bool launch_waiter;

/* ------------------------------------------------------------ helpers */

static void master_usage(long *ret_rss_kb, long *ret_hwm_kb, double *ret_cpu_s) {
        char path[64], l[512];
        FILE *f;

        *ret_rss_kb = *ret_hwm_kb = -1;
        *ret_cpu_s = -1;
        snprintf(path, sizeof(path), "/proc/%d/status", L.master_pid);
        f = fopen(path, "re");
        if (f) {
                while (fgets(l, sizeof(l), f)) {
                        if (strncmp(l, "VmRSS:", 6) == 0)
                                *ret_rss_kb = atol(l + 6);
                        else if (strncmp(l, "VmHWM:", 6) == 0)
                                *ret_hwm_kb = atol(l + 6);
                }
                fclose(f);
        }
        snprintf(path, sizeof(path), "/proc/%d/stat", L.master_pid);
        f = fopen(path, "re");
        if (f) {
                if (fgets(l, sizeof(l), f)) {
                        const char *p = strrchr(l, ')');
                        unsigned long utime, stime;
                        /* after ") ": state is field 3; utime and stime are 14 and 15 */
                        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                                        &stime) == 2)
                                *ret_cpu_s = (double) (utime + stime) / (double) sysconf(_SC_CLK_TCK);
                }
                fclose(f);
        }
}

/* Open fds of the master: one socket per worker link, and whatever else each
 * link costs. */
static long master_fds(void) {
        char path[64];
        struct dirent *de;
        long n = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/fd", L.master_pid);
        d = opendir(path);
        if (!d)
                return -1;
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

static void report_master(const char *phase) {
        long rss, hwm;
        double cpu;

        master_usage(&rss, &hwm, &cpu);
        printf("%s_rss_kB %ld\n%s_hwm_kB %ld\n%s_cpu_s %.2f\n%s_fds %ld\n", phase, rss, phase, hwm, phase, cpu, phase,
               master_fds());
        fflush(stdout);
}

static void print_latencies(const char *key, uint64_t *v, size_t n) {
        bench_sort_u64(v, n);
        printf("%s_us_p50 %" PRIu64 "\n%s_us_p99 %" PRIu64 "\n%s_us_max %" PRIu64 "\n%s_us_mean %.0f\n", key,
               bench_percentile_u64(v, n, 50), key, bench_percentile_u64(v, n, 99), key, n ? v[n - 1] : 0, key,
               bench_mean_u64(v, n));
        fflush(stdout);
}

/* The track of app_id, created on first sight: a launch may arrive before
 * the RegisterApplication reply that names the app. */
static AppTrack *app_track(const char *app_id, bool create) {
        AppTrack *t = NULL;

        pthread_mutex_lock(&L.lock);
        for (int i = 0; i < L.n_apps_seen && !t; i++)
                if (streq(L.apps[i].id, app_id))
                        t = &L.apps[i];
        if (!t && create && L.n_apps_seen < MAX_APPS + MAX_SMALL_APPS) {
                t = &L.apps[L.n_apps_seen];
                t->launch_at = calloc((size_t) L.per_app + 1, sizeof(*t->launch_at));
                t->announced = calloc((size_t) L.per_app + 1, sizeof(*t->announced));
                if (t->launch_at && t->announced) {
                        snprintf(t->id, sizeof(t->id), "%s", app_id);
                        t->registered_at = atomic_load(&L.current_registered_at);
                        L.n_apps_seen++;
                } else {
                        free(t->launch_at);
                        free(t->announced);
                        t->launch_at = NULL;
                        t->announced = NULL;
                        t = NULL;
                }
        }
        pthread_mutex_unlock(&L.lock);
        return t;
}

/* Executor id of app t announced (by an event, or by a snapshot when
 * by_resync): counted once, whichever came first. */
static void app_announce(AppTrack *t, int32_t executor_id, bool by_resync) {
        if (executor_id < 1 || executor_id > L.per_app)
                return;
        if (atomic_exchange(&t->announced[executor_id], 1))
                return;
        atomic_fetch_add(&t->added, 1);
        if (by_resync)
                atomic_fetch_add(&t->added_by_resync, 1);
}

/* ------------------------------------------------- the workers' endpoint */

typedef enum CtxState { CTX_RECV, CTX_SEND } CtxState;

typedef struct ServerCtx {
        nng_ctx ctx;
        nng_aio *aio;
        CtxState state;
} ServerCtx;

static void note_request(const void *buf, size_t len) {
        _cleanup_envelope_ Envelope *env = NULL;
        uint64_t now = bench_now_usec();

        if (envelope_decode(buf, len, SIZE_MAX, &env) < 0) {
                atomic_fetch_add(&L.other_requests, 1);
                return;
        }
        if (env->body_case == SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR) {
                const Spark__LaunchExecutor *le = env->launch_executor;
                AppTrack *t = app_track(le->app_id, true);
                uint64_t zero = 0;

                if (!t || le->executor_id < 1 || le->executor_id > L.per_app) {
                        atomic_fetch_add(&L.unknown_executors, 1);
                        return;
                }
                if (atomic_compare_exchange_strong(&t->launch_at[le->executor_id], &zero, now)) {
                        atomic_fetch_add(&t->launches, 1);
                        atomic_store(&t->last_launch, now);
                        if (atomic_load(&launch_waiter)) {
                                pthread_mutex_lock(&launch_lock);
                                pthread_cond_broadcast(&launch_cond);
                                pthread_mutex_unlock(&launch_lock);
                        }
                } else
                        atomic_fetch_add(&t->duplicates, 1);
        } else if (env->body_case == SPARK__ENVELOPE__BODY_KILL_EXECUTOR)
                atomic_fetch_add(&L.kills, 1);
        else
                atomic_fetch_add(&L.other_requests, 1);
}

static void server_cb(void *arg) {
        ServerCtx *c = arg;
        int rv = nng_aio_result(c->aio);
        nng_msg *m;

        if (rv != 0) {
                if (c->state == CTX_SEND)
                        nng_msg_free(nng_aio_get_msg(c->aio));
                if (rv == NNG_ECLOSED)
                        return;
                c->state = CTX_RECV;
                nng_ctx_recv(c->ctx, c->aio);
                return;
        }
        if (c->state == CTX_SEND) {
                c->state = CTX_RECV;
                nng_ctx_recv(c->ctx, c->aio);
                return;
        }
        m = nng_aio_get_msg(c->aio);
        note_request(nng_msg_body(m), nng_msg_len(m));
        nng_msg_clear(m);
        (void) nng_msg_append(m, L.ack, L.ack_len);
        nng_aio_set_msg(c->aio, m);
        c->state = CTX_SEND;
        nng_ctx_send(c->ctx, c->aio);
}

static int serve_workers(void) {
        static ServerCtx ctxs[SERVER_CONTEXTS];
        Spark__Ack ack = SPARK__ACK__INIT;
        Envelope env = ENVELOPE_INIT;
        nng_socket s;
        int rv;

        ENVELOPE_SET(&env, ACK, ack, &ack);
        if (envelope_encode(&env, &L.ack, &L.ack_len) < 0)
                return -ENOMEM;
        rv = nng_rep0_open(&s);
        if (rv != 0)
                return -EIO;
        (void) nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, 0);
        for (int i = 0; i < L.n_ports; i++) {
                char url[128];

                snprintf(url, sizeof(url), "tcp://%s:%d", L.host, L.first_port + i);
                rv = nng_listen(s, url, NULL, 0);
                if (rv != 0) {
                        fprintf(stderr, "master-load: cannot listen on %s: %s\n", url, nng_strerror(rv));
                        return -EIO;
                }
        }
        for (int i = 0; i < SERVER_CONTEXTS; i++) {
                if (nng_ctx_open(&ctxs[i].ctx, s) != 0 || nng_aio_alloc(&ctxs[i].aio, server_cb, &ctxs[i]) != 0)
                        return -ENOMEM;
                ctxs[i].state = CTX_RECV;
                nng_ctx_recv(ctxs[i].ctx, ctxs[i].aio);
        }
        return 0;
}

/* --------------------------------------------------------------- events */

static struct {
        atomic_uint events, stale, resyncs, resync_failures;
} E;

/* A snapshot of each app not yet fully announced, on the subscriber's own
 * req socket; returns the position it reflects in *ret_epoch, *ret_seq
 * (that of the last app's reply: every reply is at or after the earlier
 * ones, and each app's listing is complete at its own). */
static int resync(nng_socket req, uint64_t *ret_epoch, uint64_t *ret_seq) {
        AppTrack *todo[MAX_APPS + MAX_SMALL_APPS];
        int n = 0, r = 0;

        pthread_mutex_lock(&L.lock);
        for (int i = 0; i < L.n_apps_seen; i++) {
                int size = atomic_load(&L.apps[i].size);
                if (size > 0 && (int) atomic_load(&L.apps[i].added) < size)
                        todo[n++] = &L.apps[i];
        }
        pthread_mutex_unlock(&L.lock);
        atomic_fetch_add(&E.resyncs, 1);

        for (int i = 0; i < n; i++) {
                Spark__ClusterStateRequest csr = SPARK__CLUSTER_STATE_REQUEST__INIT;
                Envelope env = ENVELOPE_INIT;
                _cleanup_free_ void *buf = NULL;
                _cleanup_envelope_ Envelope *reply = NULL;
                void *in = NULL;
                size_t len, in_len = 0;

                csr.app_id = todo[i]->id;
                ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &csr);
                r = envelope_encode(&env, &buf, &len);
                if (r < 0)
                        break;
                r = nng_send(req, buf, len, 0);
                if (r == 0)
                        r = nng_recv(req, &in, &in_len, NNG_FLAG_ALLOC);
                if (r != 0) {
                        r = -EIO;
                        break;
                }
                r = envelope_decode(in, in_len, SIZE_MAX, &reply);
                nng_free(in, in_len);
                if (r < 0)
                        break;
                if (reply->body_case != SPARK__ENVELOPE__BODY_CLUSTER_STATE) {
                        r = -EBADMSG;
                        break;
                }
                for (size_t k = 0; k < reply->cluster_state->n_executors; k++) {
                        const Spark__ExecutorInfo *x = reply->cluster_state->executors[k];
                        if (streq(x->app_id, todo[i]->id))
                                app_announce(todo[i], x->executor_id, true);
                }
                *ret_epoch = reply->epoch;
                *ret_seq = reply->seq;
        }
        if (r < 0)
                atomic_fetch_add(&E.resync_failures, 1);
        return r;
}

static void *events_thread(void *arg) {
        nng_socket s, req;
        uint64_t epoch = 0, seq = 0;
        bool positioned = false;
        (void) arg;

        if (nng_sub0_open(&s) != 0 || nng_req0_open(&req) != 0)
                return NULL;
        (void) nng_socket_set(s, NNG_OPT_SUB_SUBSCRIBE, "", 0);
        (void) nng_socket_set_int(s, NNG_OPT_RECVBUF, 8192);
        (void) nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 100);
        (void) nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, 0);
        (void) nng_socket_set_size(req, NNG_OPT_RECVMAXSZ, 0);
        (void) nng_socket_set_ms(req, NNG_OPT_RECVTIMEO, 30000);
        if (nng_dial(s, L.events_url, NULL, NNG_FLAG_NONBLOCK) != 0 ||
            nng_dial(req, L.master_url, NULL, NNG_FLAG_NONBLOCK) != 0) {
                fprintf(stderr, "master-load: cannot subscribe to %s\n", L.events_url);
                return NULL;
        }
        while (!atomic_load(&L.stop)) {
                _cleanup_envelope_ Envelope *env = NULL;
                nng_msg *m;

                if (nng_recvmsg(s, &m, 0) != 0)
                        continue;
                if (envelope_decode(nng_msg_body(m), nng_msg_len(m), SIZE_MAX, &env) < 0) {
                        nng_msg_free(m);
                        continue;
                }
                nng_msg_free(m);
                atomic_fetch_add(&E.events, 1);
                if (positioned && env->epoch == epoch && env->seq <= seq) {
                        atomic_fetch_add(&E.stale, 1);  /* covered by a snapshot */
                        continue;
                }
                if (!positioned || env->epoch != epoch || env->seq != seq + 1) {
                        uint64_t e = env->epoch, q = env->seq;

                        /* this event is delivered all the same; a failed
                         * snapshot is retried at the next event */
                        positioned = resync(req, &e, &q) >= 0;
                        epoch = e;
                        seq = MAX(q, env->epoch == e ? env->seq : 0);
                } else
                        seq = env->seq;
                if (env->body_case == SPARK__ENVELOPE__BODY_EXECUTOR_ADDED && env->executor_added->executor) {
                        AppTrack *t = app_track(env->executor_added->executor->app_id, true);
                        if (t)
                                app_announce(t, env->executor_added->executor->executor_id, false);
                }
        }
        return NULL;
}

/* ----------------------------------------------------- calls to the master */

static int call(nng_socket s, Envelope *req, Spark__Envelope__BodyCase expect, Envelope **ret) {
        _cleanup_free_ void *buf = NULL;
        void *in = NULL;
        size_t len, in_len = 0;
        Envelope *reply = NULL;
        int r;

        r = envelope_encode(req, &buf, &len);
        if (r < 0)
                return r;
        r = nng_send(s, buf, len, 0);
        if (r == 0)
                r = nng_recv(s, &in, &in_len, NNG_FLAG_ALLOC);
        if (r != 0) {
                fprintf(stderr, "master-load: %s: %s\n", envelope_body_name(req), nng_strerror(r));
                return -EIO;
        }
        r = envelope_decode(in, in_len, SIZE_MAX, &reply);
        nng_free(in, in_len);
        if (r < 0)
                return r;
        if (reply->body_case != expect) {
                fprintf(stderr, "master-load: %s answered with %s: %s\n", envelope_body_name(req),
                        envelope_body_name(reply),
                        reply->body_case == SPARK__ENVELOPE__BODY_ERROR ? reply->error->message : "");
                envelope_free(reply);
                return -EBADMSG;
        }
        if (ret)
                *ret = reply;
        else
                envelope_free(reply);
        return 0;
}

static void worker_id(int i, char *buf, size_t size) {
        snprintf(buf, size, "worker-bench-sim%05d", i);
}

/* Registers worker id (host hostNNNNN, endpoint on one of our ports) of
 * L.cores cores; *ret_usec: the round trip. */
static int register_worker(nng_socket s, const char *id, int i, uint64_t *ret_usec) {
        Spark__RegisterWorker rw = SPARK__REGISTER_WORKER__INIT;
        Envelope env = ENVELOPE_INIT;
        char host[64], endpoint[128];
        uint64_t t;
        int r;

        snprintf(host, sizeof(host), "simhost%05d", i);
        snprintf(endpoint, sizeof(endpoint), "tcp://%s:%d", L.host, L.first_port + i % L.n_ports);
        rw.worker_id = (char *) id;
        rw.host = host;
        rw.endpoint = endpoint;
        rw.events_endpoint = (char *) "";
        rw.cores = L.cores;
        rw.memory_mb = (int64_t) L.cores * 1024;
        ENVELOPE_SET(&env, REGISTER_WORKER, register_worker, &rw);
        t = bench_now_usec();
        r = call(s, &env, SPARK__ENVELOPE__BODY_REGISTER_WORKER_REPLY, NULL);
        if (r < 0)
                return r;
        *ret_usec = bench_now_usec() - t;
        return 0;
}

static int register_workers(nng_socket s) {
        _cleanup_free_ uint64_t *lat = calloc((size_t) L.n_workers, sizeof(uint64_t));
        uint64_t t0 = bench_now_usec();

        if (!lat)
                return -ENOMEM;
        for (int i = 0; i < L.n_workers; i++) {
                char id[64];
                int r;

                worker_id(i, id, sizeof(id));
                r = register_worker(s, id, i, &lat[i]);
                if (r < 0)
                        return r;
        }
        printf("workers %d\nregister_total_s %.2f\n", L.n_workers, (double) (bench_now_usec() - t0) / 1e6);
        print_latencies("register", lat, (size_t) L.n_workers);
        return 0;
}

/* One heartbeat for every worker, HEARTBEAT_CONTEXTS of them in flight. */
typedef struct HbCtx {
        nng_ctx ctx;
        nng_aio *aio;
        CtxState state;
        int item;
        uint64_t sent;
} HbCtx;

static atomic_int hb_next, hb_done, hb_failed;
static uint64_t *hb_lat;

static void hb_send(HbCtx *c) {
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env = ENVELOPE_INIT;
        char id[64];
        nng_msg *m;
        void *buf;
        size_t len;

        c->item = atomic_fetch_add(&hb_next, 1);
        if (c->item >= L.n_workers)
                return;
        worker_id(c->item, id, sizeof(id));
        hb.worker_id = id;
        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);
        if (envelope_encode(&env, &buf, &len) < 0 || nng_msg_alloc(&m, 0) != 0) {
                atomic_fetch_add(&hb_failed, 1);
                atomic_fetch_add(&hb_done, 1);
                return;
        }
        (void) nng_msg_append(m, buf, len);
        free(buf);
        nng_aio_set_msg(c->aio, m);
        c->state = CTX_SEND;
        c->sent = bench_now_usec();
        nng_ctx_send(c->ctx, c->aio);
}

static void hb_cb(void *arg) {
        HbCtx *c = arg;
        int rv = nng_aio_result(c->aio);

        if (rv != 0) {
                if (c->state == CTX_SEND)
                        nng_msg_free(nng_aio_get_msg(c->aio));
                atomic_fetch_add(&hb_failed, 1);
                atomic_fetch_add(&hb_done, 1);
                if (rv != NNG_ECLOSED)
                        hb_send(c);
                return;
        }
        if (c->state == CTX_SEND) {
                c->state = CTX_RECV;
                nng_ctx_recv(c->ctx, c->aio);
                return;
        }
        nng_msg_free(nng_aio_get_msg(c->aio));
        hb_lat[c->item] = bench_now_usec() - c->sent;
        atomic_fetch_add(&hb_done, 1);
        hb_send(c);
}

static int heartbeat_all(nng_socket s) {
        static HbCtx ctxs[HEARTBEAT_CONTEXTS];
        uint64_t t0, deadline;

        hb_lat = calloc((size_t) L.n_workers, sizeof(uint64_t));
        if (!hb_lat)
                return -ENOMEM;
        t0 = bench_now_usec();
        for (int i = 0; i < HEARTBEAT_CONTEXTS; i++) {
                if (nng_ctx_open(&ctxs[i].ctx, s) != 0 || nng_aio_alloc(&ctxs[i].aio, hb_cb, &ctxs[i]) != 0)
                        return -ENOMEM;
                nng_aio_set_timeout(ctxs[i].aio, 10000);
                hb_send(&ctxs[i]);
        }
        deadline = t0 + 60 * 1000000ull;
        while (atomic_load(&hb_done) < L.n_workers && bench_now_usec() < deadline)
                nng_msleep(5);
        printf("heartbeat_rate_per_s %.0f\nheartbeat_failed %d\n",
               (double) L.n_workers * 1e6 / (double) (bench_now_usec() - t0), atomic_load(&hb_failed));
        print_latencies("heartbeat", hb_lat, (size_t) L.n_workers);
        for (int i = 0; i < HEARTBEAT_CONTEXTS; i++)
                nng_aio_stop(ctxs[i].aio);
        return atomic_load(&hb_done) >= L.n_workers ? 0 : -ETIMEDOUT;
}

/* Registers an application of max_cores one-core executors of 1 MiB (its
 * driver URL is never dialled by the master) and starts tracking it.  The
 * registration's start is *ret_t0, its reply's latency *ret_reply_usec. */
static int register_app(nng_socket s, const char *name, int max_cores, uint64_t *ret_t0, uint64_t *ret_reply_usec,
                        AppTrack **ret_track) {
        Spark__RegisterApplication ra = SPARK__REGISTER_APPLICATION__INIT;
        Envelope env = ENVELOPE_INIT, *reply = NULL;
        static uint8_t key[32] = { 0x5a };
        AppTrack *t;
        uint64_t t0;
        int r;

        ra.name = (char *) name;
        ra.driver_url = (char *) "tcp://127.0.0.1:9";
        ra.driver_events = (char *) "";
        ra.max_cores = max_cores;
        ra.cores_per_executor = 1;
        ra.executor_memory_mb = 1;
        /* the key its executors' secrets are made with: a driver sends
         * one, and the master refuses an app without it */
        ra.executor_key = (ProtobufCBinaryData) { .len = sizeof(key), .data = key };
        ENVELOPE_SET(&env, REGISTER_APPLICATION, register_application, &ra);
        t0 = bench_now_usec();
        atomic_store(&L.current_registered_at, t0);
        r = call(s, &env, SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY, &reply);
        if (r < 0)
                return r;
        *ret_reply_usec = bench_now_usec() - t0;
        t = app_track(reply->register_application_reply->app_id, true);
        envelope_free(reply);
        if (!t)
                return -ENOMEM;
        atomic_store(&t->size, max_cores);
        *ret_t0 = t0;
        *ret_track = t;
        return 0;
}

static int place_apps(nng_socket s) {
        size_t n_all = (size_t) L.n_apps * (size_t) L.per_app, n = 0;
        _cleanup_free_ uint64_t *place = calloc(n_all + 1, sizeof(uint64_t));
        _cleanup_free_ uint64_t *app_all = calloc((size_t) L.n_apps + 1, sizeof(uint64_t));
        _cleanup_free_ uint64_t *app_reply = calloc((size_t) L.n_apps + 1, sizeof(uint64_t));
        _cleanup_free_ uint64_t *interval = calloc((size_t) L.n_apps + 1, sizeof(uint64_t));
        _cleanup_free_ uint64_t *gaps = calloc(n_all + 1, sizeof(uint64_t));
        size_t n_interval = 0, n_gaps = 0;
        unsigned events_seen = 0, by_resync = 0, launches = 0, duplicates = 0, missing = 0;
        int apps_done = 0, r = 0;

        if (!place || !app_all || !app_reply || !interval || !gaps)
                return -ENOMEM;
        for (int a = 0; a < L.n_apps; a++) {
                AppTrack *t;
                uint64_t t0, deadline, grace = 0, last_progress;
                char name[32];

                snprintf(name, sizeof(name), "bench-load-%d", a);
                r = register_app(s, name, L.per_app, &t0, &app_reply[a], &t);
                if (r < 0)
                        return r;
                t->registered_at = t0; /* also if a launch created the track first */
                last_progress = bench_now_usec();

                deadline = t0 + APP_WAIT_USEC;
                for (unsigned seen = 0;;) {
                        uint64_t now = bench_now_usec();
                        unsigned n_launched = atomic_load(&t->launches);
                        bool launched = (int) n_launched >= L.per_app;

                        if (launched && (int) atomic_load(&t->added) >= L.per_app)
                                break;
                        if (grace == 0 && (launched || (n_launched == seen && now > last_progress + APP_STALL_USEC)))
                                grace = now + EVENTS_GRACE_USEC;
                        if (n_launched != seen) {
                                seen = n_launched;
                                last_progress = now;
                        }
                        if ((grace && now > grace) || now > deadline)
                                break;
                        nng_msleep(1);
                }
                launches += atomic_load(&t->launches);
                duplicates += atomic_load(&t->duplicates);
                events_seen += atomic_load(&t->added);
                by_resync += atomic_load(&t->added_by_resync);
                if ((int) atomic_load(&t->launches) < L.per_app) {
                        fprintf(stderr, "master-load: app %s: %u of %d executors launched after %.1f s\n", t->id,
                                atomic_load(&t->launches), L.per_app, (double) (bench_now_usec() - t0) / 1e6);
                        missing += (unsigned) L.per_app - atomic_load(&t->launches);
                }
                app_all[a] = atomic_load(&t->last_launch) - t0;
                {
                        size_t first = n;
                        for (int i = 1; i <= L.per_app; i++) {
                                uint64_t at = atomic_load(&t->launch_at[i]);
                                if (at)
                                        place[n++] = at > t0 ? at - t0 : 0;
                        }
                        /* the master's pace: launch interval and gaps, in arrival order */
                        bench_sort_u64(place + first, n - first);
                        if (n - first >= 2) {
                                interval[n_interval++] = (place[n - 1] - place[first]) * 1000 / (n - first - 1);
                                for (size_t k = first + 1; k < n; k++)
                                        gaps[n_gaps++] = place[k] - place[k - 1];
                        }
                }
                apps_done++;
                fprintf(stderr, "master-load: app %d/%d: %u executors placed in %.1f ms\n", a + 1, L.n_apps,
                        atomic_load(&t->launches), (double) app_all[a] / 1000.0);
                /* the time budget: with launches lost, each app would wait out the stall */
                if (missing > (unsigned) L.per_app) {
                        fprintf(stderr, "master-load: %u launches lost, stopping after %d apps\n", missing, apps_done);
                        break;
                }
        }
        printf("apps %d\nexecutors_per_app %d\nexecutors_launched %u\nlaunches_missing %u\nlaunch_duplicates %u\n"
               "executor_added_seen %u\nexecutor_added_by_resync %u\nevents_received %u\nevents_stale %u\n"
               "events_resyncs %u\nevents_resync_failures %u\n",
               apps_done, L.per_app, launches, missing, duplicates, events_seen, by_resync, atomic_load(&E.events),
               atomic_load(&E.stale), atomic_load(&E.resyncs), atomic_load(&E.resync_failures));
        print_latencies("app_register_reply", app_reply, (size_t) apps_done);
        print_latencies("app_all_placed", app_all, (size_t) apps_done);
        print_latencies("place", place, n);
        /* ns per executor: the interval is a fraction of a microsecond's
         * worth of resolution otherwise */
        bench_sort_u64(interval, n_interval);
        printf("launch_interval_ns_p50 %" PRIu64 "\nlaunch_interval_ns_max %" PRIu64 "\n",
               bench_percentile_u64(interval, n_interval, 50), n_interval ? interval[n_interval - 1] : 0);
        print_latencies("launch_gap", gaps, n_gaps);
        return r;
}

/* One-executor apps, one after another, on the loaded cluster. */
static int place_small_apps(nng_socket s) {
        _cleanup_free_ uint64_t *place = calloc((size_t) L.n_small + 1, sizeof(uint64_t));
        _cleanup_free_ uint64_t *reply_lat = calloc((size_t) L.n_small + 1, sizeof(uint64_t));
        int n = 0, missing = 0;

        if (!place || !reply_lat)
                return -ENOMEM;
        atomic_store(&launch_waiter, true);
        for (int a = 0; a < L.n_small; a++) {
                AppTrack *t;
                uint64_t t0, deadline;
                char name[32];
                int r;

                snprintf(name, sizeof(name), "bench-small-%d", a);
                r = register_app(s, name, 1, &t0, &reply_lat[a], &t);
                if (r < 0)
                        return r;
                deadline = t0 + 5 * 1000000ull;
                pthread_mutex_lock(&launch_lock);
                while (atomic_load(&t->launches) < 1 && bench_now_usec() < deadline) {
                        struct timespec ts;
                        clock_gettime(CLOCK_REALTIME, &ts);
                        ts.tv_nsec += 10 * 1000 * 1000;
                        if (ts.tv_nsec >= 1000000000L) {
                                ts.tv_sec++;
                                ts.tv_nsec -= 1000000000L;
                        }
                        (void) pthread_cond_timedwait(&launch_cond, &launch_lock, &ts);
                }
                pthread_mutex_unlock(&launch_lock);
                if (atomic_load(&t->launches) < 1) {
                        missing++;
                        continue;
                }
                place[n++] = atomic_load(&t->launch_at[1]) - t0;
                if (Trace)
                        fprintf(Trace, "small %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", t0, place[n - 1], reply_lat[a]);
        }
        printf("small_apps %d\nsmall_launches_missing %d\n", L.n_small, missing);
        print_latencies("small_register_reply", reply_lat, (size_t) L.n_small);
        print_latencies("small_place", place, (size_t) n);
        return missing > 0 ? -ETIMEDOUT : 0;
}

/* ------------------------------------- registrations beside a /metrics scraper */

#define SCRAPE_PERIOD_USEC (100 * 1000ull) /* as a Prometheus with scrape_interval 100ms */
/* Scraped and quiet windows alternate, each as long as a scrape period: a
 * window with the scraper has one scrape.  Short windows spread what else
 * the master and the machine do (a state save's child, another process
 * waking) evenly over both kinds; with half-second windows, one such spell
 * set the p99 of one kind alone, and the row's verdict with it. */
#define SCRAPE_WINDOW_USEC SCRAPE_PERIOD_USEC
/* One registration every 2.5 ms.  Spells that slow every request for a few
 * milliseconds, whatever the scraper does (a state save's fork and the
 * copy-on-write faults after it; on a host whose kernel runs DAMON, its
 * sampling of memory every 500 ms), came to more than 1% of the
 * registrations at one every 5 ms: both p99s were set by them, and their
 * ratio by chance.  At 2.5 ms they are about half of 1%. */
#define LATE_PACE_USEC 2500ull
/* Those spells, not the registrations, set both p99s: about 1.3% of the
 * registrations of either kind fall in one, a spell takes a few
 * registrations in a row, and so the p99 of 4,000 registrations rests on
 * some twenty spells, and the ratio of two such p99s swung from 0.7 to
 * 1.5 between runs of the same build.  Each late worker therefore
 * registers LATE_ROUNDS times: the phase lasts five times as long, holds
 * five times as many spells of each kind, and the master keeps the same
 * size (a worker that registers again is the path of a restarted one). */
#define LATE_ROUNDS 5
#define MAX_SCRAPES 100000

static struct {
        char host[64];
        int port;
        atomic_bool on;      /* the main thread's window: scrape or not */
        atomic_bool busy;    /* a scrape is in flight */
        uint64_t *usec;      /* each scrape's time */
        atomic_uint n, failed;
        _Atomic size_t bytes;
} Scrape;

static void *scrape_thread(void *arg) {
        uint64_t next = 0;

        (void) arg;
        while (!atomic_load(&L.stop)) {
                uint64_t now = bench_now_usec(), usec;
                unsigned status;
                size_t bytes;

                if (!atomic_load(&Scrape.on) || now < next) {
                        usleep(1000);
                        continue;
                }
                atomic_store(&Scrape.busy, true);
                if (!atomic_load(&Scrape.on)) { /* the window closed meanwhile */
                        atomic_store(&Scrape.busy, false);
                        continue;
                }
                next = now + SCRAPE_PERIOD_USEC;
                if (bench_http_get(Scrape.host, Scrape.port, "/metrics", 5, &bytes, &status, &usec) < 0 || status != 200)
                        atomic_fetch_add(&Scrape.failed, 1);
                else {
                        unsigned k = atomic_load(&Scrape.n);
                        if (k < MAX_SCRAPES) {
                                Scrape.usec[k] = usec;
                                atomic_store(&Scrape.n, k + 1);
                        }
                        atomic_store(&Scrape.bytes, bytes);
                }
                if (Trace)
                        fprintf(Trace, "scrape %" PRIu64 " %" PRIu64 "\n", now, usec);
                atomic_store(&Scrape.busy, false);
        }
        return NULL;
}

/* LATE more workers registered one every LATE_PACE_USEC on the loaded
 * master, in windows of SCRAPE_WINDOW_USEC that alternate between a
 * scraper GETting /metrics every SCRAPE_PERIOD_USEC and none: the
 * RegisterWorker round trips of both kinds come from the same minutes of
 * the same master.  A quiet window starts only once the last scrape has
 * ended, so none of it lands there. */
static int register_beside_scrapes(nng_socket s, int late, int idle_scrapes) {
        int n_registrations = late * LATE_ROUNDS;
        _cleanup_free_ uint64_t *quiet = calloc((size_t) n_registrations + 1, sizeof(uint64_t));
        _cleanup_free_ uint64_t *scraped = calloc((size_t) n_registrations + 1, sizeof(uint64_t));
        size_t n_quiet = 0, n_scraped = 0;
        uint64_t t0, window_start;
        pthread_t th;
        bool on = false;

        Scrape.usec = calloc(MAX_SCRAPES, sizeof(uint64_t));
        if (!quiet || !scraped || !Scrape.usec)
                return -ENOMEM;
        if (pthread_create(&th, NULL, scrape_thread, NULL) != 0)
                return -EAGAIN;
        pthread_detach(th);
        t0 = window_start = bench_now_usec();
        for (int i = 0; i < n_registrations; i++) {
                uint64_t now = bench_now_usec(), due = t0 + (uint64_t) i * LATE_PACE_USEC, lat;
                char id[64];
                int r;

                if (now < due) {
                        usleep((useconds_t) (due - now));
                        now = bench_now_usec();
                }
                if (now - window_start >= SCRAPE_WINDOW_USEC) {
                        on = !on;
                        atomic_store(&Scrape.on, on);
                        while (!on && atomic_load(&Scrape.busy))
                                usleep(200);
                        window_start = bench_now_usec();
                }
                snprintf(id, sizeof(id), "worker-bench-late%05d", i % late);
                r = register_worker(s, id, L.n_workers + i % late, &lat);
                if (r < 0)
                        return r;
                if (Trace)
                        fprintf(Trace, "late %" PRIu64 " %" PRIu64 " %d\n", now, lat, on);
                if (on)
                        scraped[n_scraped++] = lat;
                else
                        quiet[n_quiet++] = lat;
        }
        atomic_store(&Scrape.on, false);
        while (atomic_load(&Scrape.busy))
                usleep(200);
        printf("late_workers %d\nlate_registrations %d\nlate_pace_us %llu\nlate_register_total_s %.2f\nload_scrapes %u\nload_scrapes_failed %u\nload_scrape_bytes %zu\n", late, n_registrations,
               (unsigned long long) LATE_PACE_USEC, (double) (bench_now_usec() - t0) / 1e6, atomic_load(&Scrape.n), atomic_load(&Scrape.failed),
               atomic_load(&Scrape.bytes));
        print_latencies("late_register_quiet", quiet, n_quiet);
        print_latencies("late_register_scraped", scraped, n_scraped);
        print_latencies("load_scrape", Scrape.usec, atomic_load(&Scrape.n));

        /* then the loaded master at rest, our endpoints still up: once they
         * are gone, the master's nng redials 10,000 workers and its timer
         * thread takes a core from the loop (not what a live cluster does) */
        if (idle_scrapes > 0) {
                uint64_t deadline = bench_now_usec() + (uint64_t) idle_scrapes * SCRAPE_PERIOD_USEC * 3;

                atomic_store(&Scrape.n, 0);
                atomic_store(&Scrape.failed, 0);
                atomic_store(&Scrape.on, true);
                while (atomic_load(&Scrape.n) + atomic_load(&Scrape.failed) < (unsigned) idle_scrapes &&
                       bench_now_usec() < deadline)
                        usleep(10000);
                atomic_store(&Scrape.on, false);
                while (atomic_load(&Scrape.busy))
                        usleep(200);
                printf("idle_scrapes %u\nidle_scrapes_failed %u\nidle_scrape_bytes %zu\n", atomic_load(&Scrape.n),
                       atomic_load(&Scrape.failed), atomic_load(&Scrape.bytes));
                print_latencies("idle_scrape", Scrape.usec, atomic_load(&Scrape.n));
        }
        return 0;
}

int main(int argc, char **argv) {
        const char *trace_path;
        nng_socket s;
        pthread_t events;
        int r, late = 0, idle_scrapes = 0;

        if (argc < 11 || argc > 15) {
                fprintf(stderr, "usage: master-load MASTER_URL EVENTS_URL HOST FIRST_PORT PORTS MASTER_PID WORKERS "
                                "CORES APPS EXECUTORS_PER_APP [SMALL_APPS [METRICS_HOST:PORT LATE_WORKERS [IDLE_SCRAPES]]]\n");
                return 2;
        }
        L.master_url = argv[1];
        L.events_url = argv[2];
        L.host = argv[3];
        L.first_port = atoi(argv[4]);
        L.n_ports = atoi(argv[5]);
        L.master_pid = atoi(argv[6]);
        L.n_workers = atoi(argv[7]);
        L.cores = atoi(argv[8]);
        L.n_apps = atoi(argv[9]);
        L.per_app = atoi(argv[10]);
        L.n_small = argc > 11 ? atoi(argv[11]) : 0;
        if (argc == 13)
                return 2;
        if (argc >= 14) {
                const char *colon = strrchr(argv[12], ':');

                late = atoi(argv[13]);
                idle_scrapes = argc > 14 ? atoi(argv[14]) : 0;
                if (!colon || (size_t) (colon - argv[12]) >= sizeof(Scrape.host) || late < 0 || late > 100000 ||
                    idle_scrapes < 0 || idle_scrapes > MAX_SCRAPES)
                        return 2;
                memcpy(Scrape.host, argv[12], (size_t) (colon - argv[12]));
                Scrape.port = atoi(colon + 1);
        }
        if (L.n_small < 0 || L.n_small > MAX_SMALL_APPS || L.n_workers < 1 || L.cores < 1 || L.n_apps < 0 || L.n_apps > MAX_APPS || L.per_app < 1 ||
            L.first_port < 1 || L.n_ports < 1 || L.first_port + L.n_ports > 65536)
                return 2;

        trace_path = getenv("MASTER_LOAD_TRACE");
        if (trace_path) {
                Trace = fopen(trace_path, "we");
                if (!Trace) {
                        fprintf(stderr, "master-load: cannot open %s: %m\n", trace_path);
                        return 1;
                }
        }
        r = serve_workers();
        if (r < 0)
                return 1;
        if (pthread_create(&events, NULL, events_thread, NULL) != 0)
                return 1;
        r = nng_req0_open(&s);
        if (r == 0)
                r = nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, 0);
        if (r == 0)
                r = nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 120000);
        if (r == 0)
                r = nng_dial(s, L.master_url, NULL, 0);
        if (r != 0) {
                fprintf(stderr, "master-load: cannot reach the master at %s: %s\n", L.master_url, nng_strerror(r));
                return 1;
        }
        report_master("master_start");
        r = register_workers(s);
        report_master("master_workers");
        if (r >= 0)
                r = heartbeat_all(s);
        if (r >= 0)
                r = place_apps(s);
        report_master("master_apps");
        if (r >= 0 && L.n_small > 0) {
                r = place_small_apps(s);
                report_master("master_small");
        }
        if (r >= 0 && (late > 0 || idle_scrapes > 0))
                r = register_beside_scrapes(s, late, idle_scrapes);
        printf("kills_seen %u\nother_requests %u\nunknown_executors %u\n", atomic_load(&L.kills),
               atomic_load(&L.other_requests), atomic_load(&L.unknown_executors));
        fflush(stdout);
        if (Trace)
                fflush(Trace);
        atomic_store(&L.stop, true);
        _exit(r < 0 ? 1 : 0); /* no nng_close(): see common/rpc-server.h on nng 1.5.2 */
}
