/* The master's HTTP server (docs/observability.md): /metrics, the JSON of
 * `sparkctl status --json` under /api/v1/, and the web UI.  Handlers run on
 * the loop and read the cluster state directly.  A /metrics walks nothing
 * that grows with the cluster but the applications: the workers' counts and
 * capacity and the executors' counts are the cluster's own, kept as they
 * change (a walk over 10,000 workers held the loop for a millisecond). */
#include "daemon-http.h"
#include "log.h"
#include "master.h"
#include "prom-writer.h"
#include "state-json.h"
#include "wire-names.h"

#define N_WORKER_STATES CLUSTER_WORKER_STATES
#define N_APP_STATES 5
#define N_EXECUTOR_STATES CLUSTER_EXECUTOR_STATES

static void write_by_state(FILE *f, const char *name, const char *help, const uint64_t *counts, size_t n,
                           const char *(*to_string)(int)) {
        prom_family(f, name, "gauge", help);
        for (size_t s = 1; s < n; s++)
                prom_sample_u64(f, name, (const char *const[]) { "state", to_string((int) s), NULL }, counts[s]);
}

static const char *worker_state(int s) {
        return wire_worker_state_to_string(s);
}
static const char *app_state(int s) {
        return wire_app_state_to_string(s);
}
static const char *executor_state(int s) {
        return wire_executor_state_to_string(s);
}

static void write_metrics(Master *m, FILE *f) {
        uint64_t workers[N_WORKER_STATES] = {}, apps[N_APP_STATES] = {}, executors[N_EXECUTOR_STATES] = {};
        /* over the alive workers */
        const ClusterPool *pool = cluster_pool(m->cluster);
        int64_t cores = pool->cores, cores_used = pool->cores_used, mem = pool->memory_mb,
                mem_used = pool->memory_used_mb;
        size_t by_state[CLUSTER_EXECUTOR_STATES];
        RpcServer *servers[] = { m->server };
        const char *names[] = { "master" };

        for (size_t s = 1; s < N_WORKER_STATES; s++)
                workers[s] = pool->workers_by_state[s];
        for (App *a = cluster_apps(m->cluster); a; a = a->next)
                if (a->state > 0 && a->state < N_APP_STATES)
                        apps[a->state]++;
        /* kept by the cluster as executors change: 100,000 of them are not
         * walked per scrape */
        cluster_executor_counts(m->cluster, by_state);
        for (size_t s = 1; s < N_EXECUTOR_STATES; s++)
                executors[s] = by_state[s];

        daemon_http_process_metrics(f, "master");
        write_by_state(f, "spark_workers", "Workers known to the master, by state.", workers, N_WORKER_STATES,
                       worker_state);
        write_by_state(f, "spark_applications", "Applications the master holds, by state.", apps, N_APP_STATES,
                       app_state);
        write_by_state(f, "spark_executors", "Executors of the applications held, by state.", executors,
                       N_EXECUTOR_STATES, executor_state);

        prom_family(f, "spark_cores", "gauge", "Cores of the alive workers, used by executors or free.");
        prom_sample(f, "spark_cores", (const char *const[]) { "state", "used", NULL }, (double) cores_used);
        prom_sample(f, "spark_cores", (const char *const[]) { "state", "free", NULL }, (double) (cores - cores_used));
        prom_family(f, "spark_memory_bytes", "gauge", "Memory of the alive workers, used by executors or free.");
        prom_sample(f, "spark_memory_bytes", (const char *const[]) { "state", "used", NULL },
                    (double) mem_used * 1048576.0);
        prom_sample(f, "spark_memory_bytes", (const char *const[]) { "state", "free", NULL },
                    (double) (mem - mem_used) * 1048576.0);

        prom_family(f, "spark_executor_ends_total", "counter", "Executors that ended, by their final state.");
        for (size_t s = SPARK__EXECUTOR_STATE__EXECUTOR_EXITED; s < N_EXECUTOR_STATES; s++)
                prom_sample_u64(f, "spark_executor_ends_total",
                                (const char *const[]) { "state", executor_state((int) s), NULL },
                                m->metrics.executor_ends[s]);
        prom_family(f, "spark_executor_launches_total", "counter", "Executor launches sent to workers.");
        prom_sample_u64(f, "spark_executor_launches_total", NULL, m->metrics.launches);
        prom_family(f, "spark_workers_lost_total", "counter", "Workers declared lost.");
        prom_sample_u64(f, "spark_workers_lost_total", NULL, m->metrics.workers_lost);
        prom_family(f, "spark_applications_removed_total", "counter", "Applications that ended, by final state.");
        for (size_t s = SPARK__APP_STATE__APP_FINISHED; s < N_APP_STATES; s++)
                prom_sample_u64(f, "spark_applications_removed_total",
                                (const char *const[]) { "state", app_state((int) s), NULL }, m->metrics.apps_removed[s]);
        prom_family(f, "spark_master_state_saves_total", "counter",
                    "Snapshots of the state written to state_dir (or ZooKeeper), by result.");
        prom_sample_u64(f, "spark_master_state_saves_total", (const char *const[]) { "result", "ok", NULL },
                        m->metrics.state_saves[1]);
        prom_sample_u64(f, "spark_master_state_saves_total", (const char *const[]) { "result", "failed", NULL },
                        m->metrics.state_saves[0]);
        prom_family(f, "spark_master_state_save_seconds", "gauge",
                    "How long the last snapshot on disk took to write, sync and rename.");
        prom_sample(f, "spark_master_state_save_seconds", NULL, (double) m->metrics.state_save_duration / USEC_PER_SEC);
        prom_family(f, "spark_executor_start_seconds", "histogram",
                    "From the launch sent to a worker to the executor reported running.");
        prom_histogram_write(f, "spark_executor_start_seconds", NULL, &m->metrics.executor_start);
        daemon_http_rpc_metrics(f, servers, names, ELEMENTSOF(servers));
}

static void write_state(Master *m, HttpReply *reply, unsigned parts) {
        _cleanup_(master_snapshot_done) MasterSnapshot s = {};
        Json j;

        if (master_snapshot_build(m, NULL, false, &s) < 0) {
                reply->status = 500;
                fputs("out of memory\n", reply->body);
                return;
        }
        reply->content_type = "application/json";
        json_init(&j, reply->body);
        cluster_state_json_parts(&j, &s.state, parts);
        fputc('\n', reply->body);
}

static void on_http(const char *path, HttpReply *reply, void *userdata) {
        Master *m = userdata;

        if (streq(path, "/metrics")) {
                reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
                write_metrics(m, reply->body);
        } else if (streq(path, "/api/v1/status"))
                write_state(m, reply, CLUSTER_JSON_ALL);
        else if (streq(path, "/api/v1/workers"))
                write_state(m, reply, CLUSTER_JSON_WORKERS);
        else if (streq(path, "/api/v1/applications"))
                write_state(m, reply, CLUSTER_JSON_APPS);
        else if (streq(path, "/api/v1/executors"))
                write_state(m, reply, CLUSTER_JSON_EXECUTORS);
        else if (!daemon_http_serve_asset(path, "/master.html", reply))
                daemon_http_not_found(path, reply);
}

int master_http_start(Master *m) {
        int r;

        r = prom_histogram_init(&m->metrics.executor_start, prom_buckets_start, prom_buckets_start_n);
        if (r < 0)
                return log_oom();
        return daemon_http_start(m->event, m->config.master.http_listen, &m->tls, on_http, m, &m->http);
}

void master_http_done(Master *m) {
        m->http = http_server_free(m->http);
        prom_histogram_done(&m->metrics.executor_start);
}
