/* The driver's HTTP server (docs/observability.md): /metrics, the JSON of
 * `sparkctl jobs --json` and `sparkctl job ID --json` under /api/v1/, a
 * job's tasks with their attempts, and the web UI.  Handlers run on the
 * loop; a job's task list is capped, so a page of a million-task job stays
 * small. */
#include <string.h>

#include "daemon-http.h"
#include "driver-jobs.h"
#include "log.h"
#include "prom-writer.h"
#include "scheduler.h"
#include "state-json.h"

#define API_TASKS_MAX 1000

static const char *const loss_names[] = {
        [EXECUTOR_LOSS_DISCONNECT] = "disconnect",     [EXECUTOR_LOSS_HEARTBEAT] = "heartbeat",
        [EXECUTOR_LOSS_UNIT_STOPPED] = "unit_stopped", [EXECUTOR_LOSS_MASTER] = "master",
        [EXECUTOR_LOSS_WORKER_LOST] = "worker_lost",   [EXECUTOR_LOSS_SNAPSHOT] = "snapshot",
};

static void write_metrics(Driver *d, FILE *f) {
        RpcServer *servers[] = { d->server, d->executor_server };
        const char *names[] = { "driver", "driver_executors" };
        unsigned running = 0;

        for (Job *job = scheduler_first_job(d->scheduler); job; job = scheduler_next_job(job))
                running += scheduler_job_state(job) == JOB_RUNNING;

        daemon_http_process_metrics(f, "driver");
        prom_family(f, "spark_driver_executors", "gauge", "Executors registered with the driver and alive.");
        prom_sample_u64(f, "spark_driver_executors", NULL, d->n_live_executors);
        prom_family(f, "spark_driver_cores", "gauge", "Cores of the driver's live executors.");
        prom_sample(f, "spark_driver_cores", NULL, (double) scheduler_total_cores(d->scheduler));
        prom_family(f, "spark_jobs_running", "gauge", "Jobs running.");
        prom_sample_u64(f, "spark_jobs_running", NULL, running);
        prom_family(f, "spark_tasks_pending", "gauge", "Tasks waiting for an executor slot.");
        prom_sample_u64(f, "spark_tasks_pending", NULL, scheduler_n_pending(d->scheduler));
        prom_family(f, "spark_results_held_bytes", "gauge", "Bytes of task results held for clients to fetch.");
        prom_sample_u64(f, "spark_results_held_bytes", NULL, driver_jobs_output_bytes(d));
        prom_family(f, "spark_results_spilled_bytes", "gauge",
                    "Of the results held, bytes in the spill file (beyond driver.result_memory_mb).");
        prom_sample_u64(f, "spark_results_spilled_bytes", NULL, driver_jobs_spilled_bytes(d));

        prom_family(f, "spark_tasks_submitted_total", "counter", "Tasks of the jobs submitted.");
        prom_sample_u64(f, "spark_tasks_submitted_total", NULL, d->metrics.tasks_submitted);
        prom_family(f, "spark_tasks_succeeded_total", "counter", "Tasks that succeeded (one result each).");
        prom_sample_u64(f, "spark_tasks_succeeded_total", NULL, d->metrics.tasks_succeeded);
        prom_family(f, "spark_task_attempts_failed_total", "counter",
                    "Task attempts that failed, lost executors' included.");
        prom_sample_u64(f, "spark_task_attempts_failed_total", NULL, d->metrics.attempts_failed);
        prom_family(f, "spark_tasks_retried_total", "counter", "Failed task attempts that were tried again.");
        prom_sample_u64(f, "spark_tasks_retried_total", NULL, d->metrics.tasks_retried);
        prom_family(f, "spark_jobs_ended_total", "counter", "Jobs that ended, by final state.");
        for (JobState s = JOB_SUCCEEDED; s < _JOB_STATE_MAX; s++)
                prom_sample_u64(f, "spark_jobs_ended_total", (const char *const[]) { "state", job_state_to_string(s), NULL },
                                d->metrics.jobs_ended[s]);
        prom_family(f, "spark_driver_executors_lost_total", "counter", "Executors the driver found lost, by how.");
        for (size_t k = 0; k < ELEMENTSOF(loss_names); k++)
                prom_sample_u64(f, "spark_driver_executors_lost_total", (const char *const[]) { "cause", loss_names[k], NULL },
                                d->metrics.executors_lost[k]);
        prom_family(f, "spark_task_duration_seconds", "histogram", "Run time of succeeded task attempts, on the executor.");
        prom_histogram_write(f, "spark_task_duration_seconds", NULL, &d->metrics.task_seconds);
        prom_family(f, "spark_job_duration_seconds", "histogram", "From a job's submission to its end.");
        prom_histogram_write(f, "spark_job_duration_seconds", NULL, &d->metrics.job_seconds);
        daemon_http_rpc_metrics(f, servers, names, ELEMENTSOF(servers));
}

static void write_status(Driver *d, FILE *f) {
        Json j;

        json_init(&j, f);
        json_object_begin(&j, NULL);
        json_string(&j, "app_id", d->app_id);
        json_string(&j, "app_name", d->config.driver.app_name);
        json_string(&j, "master", d->config.cluster.master);
        json_string(&j, "driver_url", d->url);
        json_int(&j, "registered", d->registered);
        json_int(&j, "executors", d->n_live_executors);
        json_int(&j, "cores", scheduler_total_cores(d->scheduler));
        json_object_end(&j);
        fputc('\n', f);
}

static void write_job(Driver *d, const char *rest, HttpReply *reply) {
        char id[64];
        const char *slash = strchr(rest, '/');
        size_t n = slash ? (size_t) (slash - rest) : strlen(rest);
        bool tasks = false;
        Json j;

        if ((slash && !streq(slash, "/tasks")) || n == 0 || n >= sizeof(id)) {
                daemon_http_not_found(rest, reply);
                return;
        }
        tasks = slash != NULL;
        memcpy(id, rest, n);
        id[n] = '\0';
        json_init(&j, reply->body);
        reply->content_type = "application/json";
        if (driver_job_json(d, id, tasks ? API_TASKS_MAX : 0, &j) < 0) {
                daemon_http_not_found(rest, reply); /* nothing written yet */
                return;
        }
        fputc('\n', reply->body);
}

static void on_http(const char *path, HttpReply *reply, void *userdata) {
        Driver *d = userdata;
        Json j;

        /* what a page shows of jobs is on disk, as what sparkctl shows */
        if (strncmp(path, "/api/", strlen("/api/")) == 0 && driver_journal_flush(d) < 0) {
                reply->status = 500;
                fputs("cannot write the journal\n", reply->body);
                return;
        }
        if (streq(path, "/metrics")) {
                reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
                write_metrics(d, reply->body);
        } else if (streq(path, "/api/v1/status")) {
                reply->content_type = "application/json";
                write_status(d, reply->body);
        } else if (streq(path, "/api/v1/jobs")) {
                reply->content_type = "application/json";
                json_init(&j, reply->body);
                driver_jobs_json(d, &j);
                fputc('\n', reply->body);
        } else if (strncmp(path, "/api/v1/jobs/", strlen("/api/v1/jobs/")) == 0)
                write_job(d, path + strlen("/api/v1/jobs/"), reply);
        else if (!daemon_http_serve_asset(path, "/driver.html", reply))
                daemon_http_not_found(path, reply);
}

int driver_http_start(Driver *d) {
        int r;

        if (prom_histogram_init(&d->metrics.task_seconds, prom_buckets_task, prom_buckets_task_n) < 0 ||
            prom_histogram_init(&d->metrics.job_seconds, prom_buckets_task, prom_buckets_task_n) < 0)
                return log_oom();
        r = daemon_http_start(d->event, d->config.driver.http_listen, &d->tls, on_http, d, &d->http);
        if (r < 0 || !d->http)
                return r;
        d->ui_url = http_server_url(d->http, isempty(d->config.driver.advertise_host) ? NULL
                                                                                        : d->config.driver.advertise_host);
        return d->ui_url ? 0 : log_oom();
}

void driver_http_done(Driver *d) {
        d->http = http_server_free(d->http);
        free(d->ui_url);
        d->ui_url = NULL;
        prom_histogram_done(&d->metrics.task_seconds);
        prom_histogram_done(&d->metrics.job_seconds);
}
