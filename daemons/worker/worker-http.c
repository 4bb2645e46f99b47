/* The worker's HTTP server (docs/observability.md): /metrics with the
 * executors it holds and each executor unit's CPU time and memory, the
 * worker's own state as JSON under /api/v1/, and the web UI.
 *
 * CPU and memory come from systemd (CPUUsageNSec, MemoryCurrent of the
 * unit; the sandbox turns CPUAccounting and MemoryAccounting on), read
 * asynchronously once a second on the loop by worker-usage.c, so a scrape
 * answers from the last figures and never waits for the bus.  A unit that is
 * gone has no properties any more: its executor leaves /metrics with it. */
#include <inttypes.h>
#include <string.h>

#include "daemon-http.h"
#include "ids.h"
#include "log.h"
#include "prom-writer.h"
#include "state-json.h"
#include "wire-names.h"
#include "worker.h"

static void write_metrics(WorkerManager *w, FILE *f) {
        uint64_t states[8] = {};
        int cores_used = 0;
        int64_t mem_used = 0;
        size_t i = 0;
        void *v;
        RpcServer *servers[] = { w->server };
        const char *names[] = { "worker" };

        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;

                if (e->state > 0 && e->state < (int) ELEMENTSOF(states))
                        states[e->state]++;
                if (e->state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING ||
                    e->state == SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING) {
                        cores_used += e->cores;
                        mem_used += e->memory_mb;
                }
        }
        daemon_http_process_metrics(f, "worker");
        prom_family(f, "spark_worker_executors", "gauge", "Executors this worker holds, by state.");
        for (int s = SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING; s <= SPARK__EXECUTOR_STATE__EXECUTOR_LOST; s++)
                prom_sample_u64(f, "spark_worker_executors",
                                (const char *const[]) { "state", wire_executor_state_to_string(s), NULL }, states[s]);
        prom_family(f, "spark_worker_cores", "gauge", "Cores this worker offers, used by its executors or free.");
        prom_sample(f, "spark_worker_cores", (const char *const[]) { "state", "used", NULL }, cores_used);
        prom_sample(f, "spark_worker_cores", (const char *const[]) { "state", "free", NULL }, w->cores - cores_used);
        prom_family(f, "spark_worker_memory_bytes", "gauge", "Memory this worker offers, used by its executors or free.");
        prom_sample(f, "spark_worker_memory_bytes", (const char *const[]) { "state", "used", NULL },
                    (double) mem_used * 1048576.0);
        prom_sample(f, "spark_worker_memory_bytes", (const char *const[]) { "state", "free", NULL },
                    (double) (w->memory_mb - mem_used) * 1048576.0);
        prom_family(f, "spark_worker_registered", "gauge", "1 while the master knows this worker.");
        prom_sample(f, "spark_worker_registered", NULL, w->registered);

        prom_family(f, "spark_executor_cpu_seconds_total", "counter",
                    "CPU time of a running executor's unit (systemd's CPUUsageNSec).");
        i = 0;
        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;
                char id[16];

                if (e->cpu_nsec == UINT64_MAX || e->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING)
                        continue;
                snprintf(id, sizeof(id), "%d", e->executor_id);
                prom_sample(f, "spark_executor_cpu_seconds_total",
                            (const char *const[]) { "app_id", e->app_id, "executor_id", id, NULL },
                            (double) e->cpu_nsec / 1e9);
        }
        prom_family(f, "spark_executor_memory_bytes", "gauge",
                    "Memory of a running executor's unit (systemd's MemoryCurrent).");
        i = 0;
        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;
                char id[16];

                if (e->memory_bytes == UINT64_MAX || e->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING)
                        continue;
                snprintf(id, sizeof(id), "%d", e->executor_id);
                prom_sample_u64(f, "spark_executor_memory_bytes",
                                (const char *const[]) { "app_id", e->app_id, "executor_id", id, NULL },
                                e->memory_bytes);
        }
        daemon_http_rpc_metrics(f, servers, names, ELEMENTSOF(servers));
}

static void write_status(WorkerManager *w, FILE *f) {
        char unit[UNIT_NAME_MAX];
        size_t i = 0;
        void *v;
        Json j;

        json_init(&j, f);
        json_object_begin(&j, NULL);
        json_string(&j, "worker_id", w->id);
        json_string(&j, "host", w->host);
        json_string(&j, "master", w->config.cluster.master);
        json_int(&j, "registered", w->registered);
        json_int(&j, "cores", w->cores);
        json_int(&j, "memory_mb", w->memory_mb);
        json_array_begin(&j, "executors");
        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;

                json_object_begin(&j, NULL);
                json_string(&j, "app_id", e->app_id);
                json_int(&j, "executor_id", e->executor_id);
                json_string(&j, "state", wire_executor_state_to_string(e->state));
                json_int(&j, "cores", e->cores);
                json_int(&j, "memory_mb", e->memory_mb);
                if (executor_unit_name(unit, sizeof(unit), e->app_id, e->executor_id) >= 0)
                        json_string(&j, "unit", unit);
                if (e->cpu_nsec != UINT64_MAX)
                        json_int(&j, "cpu_usec", (int64_t) (e->cpu_nsec / 1000));
                if (e->memory_bytes != UINT64_MAX)
                        json_int(&j, "memory_bytes", (int64_t) MIN(e->memory_bytes, (uint64_t) INT64_MAX));
                json_object_end(&j);
        }
        json_array_end(&j);
        json_object_end(&j);
        fputc('\n', f);
}

static void on_http(const char *path, HttpReply *reply, void *userdata) {
        WorkerManager *w = userdata;

        if (streq(path, "/metrics")) {
                reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
                write_metrics(w, reply->body);
        } else if (streq(path, "/api/v1/status")) {
                reply->content_type = "application/json";
                write_status(w, reply->body);
        } else if (!daemon_http_serve_asset(path, "/worker.html", reply))
                daemon_http_not_found(path, reply);
}

int worker_http_start(WorkerManager *w) {
        int r;

        r = daemon_http_start(w->event, w->config.worker.http_listen, &w->tls, on_http, w, &w->http);
        if (r < 0 || !w->http)
                return r;
        w->ui_url = http_server_url(w->http, w->host);
        if (!w->ui_url)
                return log_oom();
        return 0;
}

void worker_http_done(WorkerManager *w) {
        w->http = http_server_free(w->http);
        free(w->ui_url);
        w->ui_url = NULL;
}
