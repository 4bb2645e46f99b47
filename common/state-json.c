/* See state-json.h. */
#include "macro.h"
#include "state-json.h"
#include "wire-names.h"

static void json_strings(Json *j, const char *key, char *const *l, size_t n) {
        json_array_begin(j, key);
        for (size_t i = 0; i < n; i++)
                json_string(j, NULL, l[i]);
        json_array_end(j);
}

/* { "gpu": ["0", "1"], ... } */
static void json_resources(Json *j, const char *key, Spark__ResourceAddresses *const *r, size_t n) {
        json_object_begin(j, key);
        for (size_t i = 0; i < n; i++)
                json_strings(j, r[i]->name, r[i]->addresses, r[i]->n_addresses);
        json_object_end(j);
}

static void json_worker(Json *j, const Spark__WorkerInfo *w) {
        json_object_begin(j, NULL);
        json_string(j, "worker_id", w->worker_id);
        json_string(j, "host", w->host);
        json_string(j, "endpoint", w->endpoint);
        json_string(j, "events_endpoint", w->events_endpoint);
        json_string(j, "state", wire_worker_state_to_string(w->state));
        json_int(j, "cores", w->cores);
        json_int(j, "cores_used", w->cores_used);
        json_int(j, "memory_mb", w->memory_mb);
        json_int(j, "memory_used_mb", w->memory_used_mb);
        json_int(j, "last_heartbeat_ms_ago", w->last_heartbeat_ms_ago);
        json_int(j, "drain_timeout_ms", w->drain_timeout_ms);
        json_string(j, "reason", w->reason);
        json_int(j, "end_time_ms", w->end_time_ms);
        json_string(j, "ui_url", w->ui_url);
        json_strings(j, "labels", w->labels, w->n_labels);
        json_resources(j, "resources", w->resources, w->n_resources);
        json_object_end(j);
}

static void json_app(Json *j, const Spark__AppInfo *a) {
        json_object_begin(j, NULL);
        json_string(j, "app_id", a->app_id);
        json_string(j, "name", a->name);
        json_string(j, "state", wire_app_state_to_string(a->state));
        json_string(j, "driver_url", a->driver_url);
        json_int(j, "cores_granted", a->cores_granted);
        json_int(j, "max_cores", a->max_cores);
        json_int(j, "cores_per_executor", a->cores_per_executor);
        json_int(j, "executor_memory_mb", a->executor_memory_mb);
        json_string(j, "reason", a->reason);
        json_string(j, "submitted_by", a->submitted_by);
        json_int(j, "start_time_ms", a->start_time_ms);
        json_int(j, "end_time_ms", a->end_time_ms);
        json_int(j, "cpu_usage_ns", (int64_t) a->cpu_usage_ns);
        json_int(j, "memory_peak_bytes", (int64_t) a->memory_peak_bytes);
        json_string(j, "ui_url", a->ui_url);
        json_bool(j, "dynamic_allocation", a->dynamic_allocation);
        json_int(j, "executors_live", a->executors_live);
        json_int(j, "executors_wanted", a->executors_wanted);  /* -1: no total set */
        if (a->weight > 0) {
                /* the fair share, from a master that has one */
                json_int(j, "weight", a->weight);
                json_double(j, "share", a->share);
                json_double(j, "fair_share", a->fair_share);
                json_int(j, "executors_demand", a->executors_demand);
                json_int(j, "executors_target", a->executors_target);
                json_int(j, "executors_preempting", a->executors_preempting);
        }
        json_object_begin(j, "executor_resources");
        for (size_t i = 0; i < a->n_executor_resources; i++)
                json_int(j, a->executor_resources[i]->name, a->executor_resources[i]->amount);
        json_object_end(j);
        json_strings(j, "constraints", a->constraints, a->n_constraints);
        json_string(j, "waiting_reason", a->waiting_reason);
        json_object_end(j);
}

static void json_executor(Json *j, const Spark__ExecutorInfo *e) {
        json_object_begin(j, NULL);
        json_string(j, "app_id", e->app_id);
        json_int(j, "executor_id", e->executor_id);
        json_string(j, "worker_id", e->worker_id);
        json_string(j, "host", e->host);
        json_string(j, "state", wire_executor_state_to_string(e->state));
        json_int(j, "cores", e->cores);
        json_int(j, "memory_mb", e->memory_mb);
        json_string(j, "reason", e->reason);
        json_int(j, "exit_code", e->exit_code);
        json_string(j, "unit", e->unit);
        json_bool(j, "draining", e->draining);
        json_resources(j, "resources", e->resources, e->n_resources);
        json_object_end(j);
}

void cluster_state_json_parts(Json *j, const Spark__ClusterState *cs, unsigned parts) {
        json_object_begin(j, NULL);
        json_string(j, "master_id", cs->master_id);
        if (!isempty(cs->scheduling))
                json_string(j, "scheduling", cs->scheduling);  /* as sparkctl status --json */
        cluster_state_json_members(j, cs, parts);
        json_object_end(j);
}

void cluster_state_json_members(Json *j, const Spark__ClusterState *cs, unsigned parts) {
        if (parts & CLUSTER_JSON_WORKERS) {
                json_array_begin(j, "workers");
                for (size_t i = 0; i < cs->n_workers; i++)
                        json_worker(j, cs->workers[i]);
                json_array_end(j);
        }
        if (parts & CLUSTER_JSON_APPS) {
                json_array_begin(j, "apps");
                for (size_t i = 0; i < cs->n_apps; i++)
                        json_app(j, cs->apps[i]);
                json_array_end(j);
        }
        if (parts & CLUSTER_JSON_EXECUTORS) {
                json_array_begin(j, "executors");
                for (size_t i = 0; i < cs->n_executors; i++)
                        json_executor(j, cs->executors[i]);
                json_array_end(j);
        }
}

void cluster_state_json(Json *j, const Spark__ClusterState *cs) {
        cluster_state_json_parts(j, cs, CLUSTER_JSON_ALL);
}

void job_info_json(Json *j, const char *key, const Spark__JobInfo *info) {
        json_object_begin(j, key);
        json_string(j, "job_id", info->job_id);
        json_string(j, "name", info->name);
        json_string(j, "state", wire_job_state_to_string(info->state));
        json_int(j, "tasks", info->tasks);
        json_int(j, "done", info->done);
        json_int(j, "failed", info->failed);
        json_int(j, "running", info->running);
        json_int(j, "executors", info->executors);
        json_int(j, "elapsed_ms", info->elapsed_ms);
        json_string(j, "reason", info->reason);
        json_object_end(j);
}

void job_list_json(Json *j, const Spark__JobList *list) {
        json_object_begin(j, NULL);
        json_array_begin(j, "jobs");
        for (size_t i = 0; i < list->n_jobs; i++)
                job_info_json(j, NULL, list->jobs[i]);
        json_array_end(j);
        json_object_end(j);
}
