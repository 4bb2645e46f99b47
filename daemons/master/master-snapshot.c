/* ClusterState: the snapshot sparkctl shows and subscribers resync from. */
#include "log.h"
#include "master.h"

void executor_info_fill(const ClusterExecutor *e, Spark__ExecutorInfo *info, char *unit_buf, size_t unit_size) {
        spark__executor_info__init(info);
        info->app_id = (char *) e->app->id;
        info->executor_id = e->id;
        info->cores = e->cores;
        info->memory_mb = e->memory_mb;
        info->state = e->state;
        info->reason = e->reason ? e->reason : (char *) "";
        info->exit_code = e->exit_code;
        if (e->worker) {
                info->worker_id = e->worker->id;
                info->host = e->worker->host;
                info->worker_events = e->worker->events_endpoint;
                /* taken back for another application: drained the same way */
                info->draining = worker_is_draining(e->worker) || e->preempting;
        }
        info->resources = e->grant_ptrs;
        info->n_resources = e->n_grants;
        if (unit_buf && executor_unit_name(unit_buf, unit_size, e->app->id, e->id) >= 0)
                info->unit = unit_buf;
}

void app_info_fill(Cluster *c, const App *a, Spark__AppInfo *ai) {
        ClusterFairView fair = cluster_app_fair_view(c, a);

        spark__app_info__init(ai);
        ai->app_id = (char *) a->id;
        ai->name = a->name;
        ai->driver_url = a->driver_url;
        ai->state = a->state;
        ai->cores_granted = a->cores_granted;
        ai->max_cores = a->max_cores;
        ai->cores_per_executor = a->cores_per_executor;
        ai->executor_memory_mb = a->executor_memory_mb;
        ai->reason = a->reason ? a->reason : (char *) "";
        ai->submitted_by = a->submitted_by ? a->submitted_by : (char *) "";
        ai->start_time_ms = a->start_time_ms;
        ai->cpu_usage_ns = a->cpu_usage_ns;
        ai->memory_peak_bytes = a->memory_peak_bytes;
        ai->ui_url = a->ui_url ? a->ui_url : (char *) "";
        ai->executors_wanted = a->executor_limit == INT32_MAX ? -1 : a->executor_limit;
        ai->executors_live = (int32_t) a->n_live_executors;
        ai->dynamic_allocation = a->dynamic_allocation;
        ai->weight = a->weight;
        ai->share = fair.dominant;
        ai->fair_share = fair.share;
        ai->executors_demand = app_executors_wanted(a) == INT32_MAX ? -1 : app_executors_wanted(a);
        ai->executors_target = fair.target;
        ai->executors_preempting = a->n_preempting;
        ai->executor_resources = a->wants_ptrs;
        ai->n_executor_resources = a->n_wants;
        ai->constraints = a->constraints;
        ai->n_constraints = a->n_constraints;
}

void master_snapshot_done(MasterSnapshot *s) {
        free(s->workers);
        free(s->worker_ptrs);
        free(s->apps);
        free(s->app_ptrs);
        free(s->executors);
        free(s->executor_ptrs);
        free(s->units);
        free(s->waiting);
        free(s->live_workers);
        history_apps_free(s->history_apps, s->n_history_apps);
        history_workers_free(s->history_workers, s->n_history_workers);
}

int master_snapshot_build(Master *m, const char *app_id, bool all, MasterSnapshot *ret) {
        _cleanup_(master_snapshot_done) MasterSnapshot s = {};
        Hashmap *workers = cluster_workers(m->cluster);
        size_t nw = hashmap_size(workers), na = 0, ne = 0, i = 0;
        usec_t now = now_mono_usec();
        void *v;

        for (App *a = cluster_apps(m->cluster); a; a = a->next)
                if (isempty(app_id) || streq(a->id, app_id)) {
                        na++;
                        ne += a->n_live_executors;
                }
        if (all && (history_unpack_apps(&m->history, &s.history_apps, &s.n_history_apps) < 0 ||
                    history_unpack_workers(&m->history, &s.history_workers, &s.n_history_workers) < 0))
                return -ENOMEM;
        na += s.n_history_apps;
        nw += s.n_history_workers;

        spark__cluster_state__init(&s.state);
        s.workers = calloc(nw + 1, sizeof(*s.workers));
        s.worker_ptrs = calloc(nw + 1, sizeof(*s.worker_ptrs));
        s.apps = calloc(na + 1, sizeof(*s.apps));
        s.app_ptrs = calloc(na + 1, sizeof(*s.app_ptrs));
        s.executors = calloc(ne + 1, sizeof(*s.executors));
        s.executor_ptrs = calloc(ne + 1, sizeof(*s.executor_ptrs));
        s.units = calloc(ne + 1, sizeof(*s.units));
        s.waiting = calloc(na + 1, sizeof(*s.waiting));
        s.live_workers = calloc(nw + 1, sizeof(*s.live_workers));
        if (!s.workers || !s.worker_ptrs || !s.apps || !s.app_ptrs || !s.executors || !s.executor_ptrs || !s.units ||
            !s.waiting || !s.live_workers)
                return -ENOMEM;

        s.state.master_id = (char *) cluster_id(m->cluster);
        s.state.scheduling = m->config.master.scheduling;
        if (m->ha) {
                s.state.master_role = (char *) master_role_to_string(master_ha_role(m->ha));
                s.state.master_epoch = master_ha_epoch(m->ha);
        }
        s.state.recovering = m->recovery_until != 0;

        while (hashmap_iterate(workers, &i, &v, NULL)) {
                Worker *w = v;
                Spark__WorkerInfo *wi = &s.workers[s.state.n_workers];

                spark__worker_info__init(wi);
                wi->worker_id = w->id;
                wi->host = w->host;
                wi->endpoint = w->endpoint;
                wi->events_endpoint = w->events_endpoint;
                wi->ui_url = w->ui_url ? w->ui_url : (char *) "";
                wi->cores = w->cores;
                wi->cores_used = w->cores_used;
                wi->memory_mb = w->memory_mb;
                wi->memory_used_mb = w->memory_used_mb;
                wi->state = w->state;
                wi->last_heartbeat_ms_ago = (int64_t) ((now - w->last_heartbeat) / USEC_PER_MSEC);
                wi->drain_timeout_ms = worker_drain_left_ms(w, now);
                wi->labels = w->labels;
                wi->n_labels = w->n_labels;
                wi->resources = w->resource_ptrs;
                wi->n_resources = w->n_resources;
                s.live_workers[s.state.n_workers] = w;
                s.worker_ptrs[s.state.n_workers++] = wi;
        }
        s.state.workers = s.worker_ptrs;

        for (App *a = cluster_apps(m->cluster); a; a = a->next) {
                Spark__AppInfo *ai;

                if (!isempty(app_id) && !streq(a->id, app_id))
                        continue;
                ai = &s.apps[s.state.n_apps];
                app_info_fill(m->cluster, a, ai);
                /* an app with no executor: why no worker takes one, if that is known */
                if (a->n_live_executors == 0) {
                        const char *why = cluster_app_waiting_reason(s.live_workers, s.state.n_workers, a,
                                                                     s.waiting[s.state.n_apps], sizeof(s.waiting[0]));
                        if (why)
                                ai->waiting_reason = (char *) why;
                }
                s.app_ptrs[s.state.n_apps++] = ai;

                for (size_t k = 0; k < a->n_executors_allocated; k++) {
                        ClusterExecutor *e = a->executors[k];
                        if (!e || executor_state_is_terminal(e->state) || s.state.n_executors >= ne)
                                continue;
                        executor_info_fill(e, &s.executors[s.state.n_executors], s.units[s.state.n_executors],
                                           UNIT_NAME_MAX);
                        s.executor_ptrs[s.state.n_executors] = &s.executors[s.state.n_executors];
                        s.state.n_executors++;
                }
        }
        /* the history after the live ones, oldest first */
        for (size_t k = 0; k < s.n_history_apps; k++)
                if (isempty(app_id) || streq(s.history_apps[k]->app_id, app_id))
                        s.app_ptrs[s.state.n_apps++] = s.history_apps[k];
        for (size_t k = 0; k < s.n_history_workers; k++)
                s.worker_ptrs[s.state.n_workers++] = s.history_workers[k];
        s.state.apps = s.app_ptrs;
        s.state.executors = s.executor_ptrs;
        *ret = s;
        s = (MasterSnapshot) {};
        return 0;
}

int master_reply_cluster_state(Master *m, RpcRequest *req, const char *app_id, bool all) {
        _cleanup_(master_snapshot_done) MasterSnapshot s = {};
        Envelope env = ENVELOPE_INIT;

        if (!isempty(app_id) && !app_id_is_valid(app_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid application id");
        if (master_snapshot_build(m, app_id, all, &s) < 0)
                return rpc_request_reply_error(req, -ENOMEM, "out of memory");

        /* A subscriber lines its event stream up with this snapshot. */
        env.epoch = event_pub_epoch(m->events);
        env.seq = event_pub_seq(m->events);
        ENVELOPE_SET(&env, CLUSTER_STATE, cluster_state, &s.state);
        return rpc_request_reply_envelope(req, &env);
}
