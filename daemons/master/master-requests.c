/* The master's request endpoint: one switch over the envelope's body.  Every
 * string and number from the network is checked before it reaches the
 * cluster state; a bad request gets an Error and changes nothing. */
#include "daemon.h"
#include "log.h"
#include "endpoint-list.h"
#include "master.h"
#include "utf8.h"

#define MAX_REPORTED_EXECUTORS 65536
/* A new app's first launches go out before its journal entry is synced to
 * disk and it is answered: a small app's executors do not wait for the
 * disk. */
#define LAUNCHES_BEFORE_REPLY 16
/* Executors one elastic app may ask for at registration, or give back in
 * one request (driver.max_executors' range). */
#define ELASTIC_EXECUTORS_MAX 1000000

static bool endpoint_ok(const char *s, bool allow_empty) {
        if (isempty(s))
                return allow_empty;
        return strlen(s) <= 512 && !config_endpoint_check(s);
}

/* A daemon's web UI address from the network: shown as a link on the
 * master's page, so only a plain http(s) URL of printable ASCII without
 * quotes or angle brackets, and bounded. */
static bool ui_url_ok(const char *s) {
        if (isempty(s))
                return true;
        if (strlen(s) > 256 || (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0))
                return false;
        for (; *s; s++)
                if ((unsigned char) *s <= ' ' || (unsigned char) *s >= 0x7f || strchr("\"'<>\\`", *s))
                        return false;
        return true;
}

/* Replaces *field with s ("" or NULL: none); failure to copy keeps none. */
static void set_ui_url(char **field, const char *s) {
        free(*field);
        *field = isempty(s) ? NULL : strdup(s);
}

static int handle_register_worker(Master *m, RpcRequest *req, const Spark__RegisterWorker *rw) {
        Spark__RegisterWorkerReply reply = SPARK__REGISTER_WORKER_REPLY__INIT;
        _cleanup_free_ ReportedExecutor *reported = NULL;
        _cleanup_free_ Spark__ExecutorInfo *kill_infos = NULL;
        _cleanup_free_ Spark__ExecutorInfo **kill_ptrs = NULL;
        _cleanup_free_ bool *kill = NULL;
        _cleanup_free_ ClusterResourceOffer *offers = NULL;
        WorkerRegistration reg = {
                .id = rw->worker_id, .host = rw->host, .endpoint = rw->endpoint,
                .events_endpoint = rw->events_endpoint, .cores = rw->cores, .memory_mb = rw->memory_mb,
                .labels = (const char *const *) rw->labels, .n_labels = rw->n_labels,
                .n_resources = rw->n_resources,
        };
        Envelope env = ENVELOPE_INIT;
        size_t n = rw->n_executors;
        int r;

        if (!wire_name_is_valid(rw->host, false) || !endpoint_ok(rw->endpoint, false) ||
            !endpoint_ok(rw->events_endpoint, true) || !ui_url_ok(rw->ui_url))
                return rpc_request_reply_error(req, -EINVAL, "invalid host or endpoint in worker registration");
        if (rw->cores < 1 || rw->cores > 65536 || rw->memory_mb < 1 || rw->memory_mb > (INT64_C(1) << 40))
                return rpc_request_reply_error(req, -EINVAL, "invalid cores (%d) or memory (%" PRIi64 " MiB)",
                                               rw->cores, rw->memory_mb);
        if (n > MAX_REPORTED_EXECUTORS)
                return rpc_request_reply_error(req, -E2BIG, "too many executors reported");
        /* labels and resources: counts bounded here, names and addresses
         * checked by cluster_register_worker() before anything changes */
        if (rw->n_labels > LABELS_MAX)
                return rpc_request_reply_error(req, -E2BIG, "more than %d labels", LABELS_MAX);
        r = cluster_offers_from_wire(rw->resources, rw->n_resources, &offers);
        if (r == -E2BIG)
                return rpc_request_reply_error(req, r, "more than %d resources or %d addresses of one",
                                               RESOURCE_KINDS_MAX, RESOURCE_ADDRESSES_MAX);
        if (r < 0)
                return r;
        reg.resources = offers;

        reported = calloc(n + 1, sizeof(*reported));
        kill = calloc(n + 1, sizeof(*kill));
        kill_infos = calloc(n + 1, sizeof(*kill_infos));
        kill_ptrs = calloc(n + 1, sizeof(*kill_ptrs));
        if (!reported || !kill || !kill_infos || !kill_ptrs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const Spark__ExecutorInfo *e = rw->executors[i];
                if (!app_id_is_valid(e->app_id) || e->executor_id < 1)
                        return rpc_request_reply_error(req, -EINVAL, "invalid executor in worker registration");
                reported[i] = (ReportedExecutor) { e->app_id, e->executor_id };
        }

        r = cluster_register_worker(m->cluster, &reg, reported, n, now_mono_usec(), kill, NULL);
        if (r == -EEXIST)
                return rpc_request_reply_error(req, r, "worker id %s is registered from another endpoint",
                                               rw->worker_id);
        if (r < 0)
                return rpc_request_reply_error(req, r,
                                               "invalid worker registration (cores, memory, labels or resources)");
        {
                Worker *w = cluster_worker(m->cluster, rw->worker_id);
                if (w)
                        set_ui_url(&w->ui_url, rw->ui_url);
        }

        for (size_t i = 0; i < n; i++)
                if (kill[i]) {
                        Spark__ExecutorInfo *k = &kill_infos[reply.n_kill];
                        spark__executor_info__init(k);
                        k->app_id = (char *) reported[i].app_id;
                        k->executor_id = reported[i].executor_id;
                        kill_ptrs[reply.n_kill++] = k;
                }
        reply.kill = kill_ptrs;
        reply.master_id = (char *) cluster_id(m->cluster);
        reply.master_epoch = master_ha_epoch(m->ha);
        reply.heartbeat_ms = (int32_t) MAX(m->config.master.worker_timeout_ms / 4, 100);
        master_worker_registered(m, rw->worker_id, now_mono_usec());
        master_state_changed(m);
        ENVELOPE_SET(&env, REGISTER_WORKER_REPLY, register_worker_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}

static int handle_heartbeat(Master *m, RpcRequest *req, const Spark__Heartbeat *hb) {
        Spark__HeartbeatReply reply = SPARK__HEARTBEAT_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;

        if (!worker_id_is_valid(hb->worker_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid worker id");
        reply.reregister = cluster_heartbeat(m->cluster, hb->worker_id, now_mono_usec()) < 0;
        ENVELOPE_SET(&env, HEARTBEAT_REPLY, heartbeat_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}

static int handle_executor_state_changed(Master *m, RpcRequest *req, const Spark__ExecutorStateChanged *sc) {
        int r;

        if (!worker_id_is_valid(sc->worker_id) || !app_id_is_valid(sc->app_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid worker or application id");
        r = cluster_executor_state_changed(m->cluster, sc->worker_id, sc->app_id, sc->executor_id, sc->state,
                                           sc->reason, sc->exit_code, now_mono_usec());
        if (r == -ENOENT) {
                /* an app that is gone: nothing to change, the worker may
                 * forget it; what the executor used goes to its history */
                if (executor_state_is_terminal(sc->state))
                        master_account_executor_end(m, sc);
                return rpc_request_reply_ack(req);
        }
        if (r < 0)
                return rpc_request_reply_error(req, r, "cannot apply state %d of executor %s/%d", sc->state,
                                               sc->app_id, sc->executor_id);
        if (executor_state_is_terminal(sc->state))
                master_account_executor_end(m, sc);
        if (sc->state == SPARK__EXECUTOR_STATE__EXECUTOR_FAILED && sc->exit_code == SPARK_EXIT_DRIVER_UNREACHABLE)
                master_check_driver(m, sc->app_id, sc->executor_id);
        return rpc_request_reply_ack(req);
}

static int handle_register_application(Master *m, RpcRequest *req, const Spark__RegisterApplication *ra) {
        Spark__RegisterApplicationReply reply = SPARK__REGISTER_APPLICATION_REPLY__INIT;
        _cleanup_free_ char **env_strings = NULL;
        _cleanup_free_ ClusterResourceAmount *wants = NULL;
        Envelope env = ENVELOPE_INIT;
        AppRegistration reg;
        App *a = NULL;
        int r = 0;

        if (!endpoint_ok(ra->driver_url, false) || !endpoint_ok(ra->driver_events, true) ||
            !wire_name_is_valid(ra->name, true) || !ui_url_ok(ra->ui_url))
                return rpc_request_reply_error(req, -EINVAL, "invalid driver endpoint or application name");
        if (ra->task_channel_port > UINT16_MAX)
                return rpc_request_reply_error(req, -EINVAL, "task_channel_port %u is not a port",
                                               (unsigned) ra->task_channel_port);
        if (ra->initial_executors < 0 || ra->initial_executors > ELASTIC_EXECUTORS_MAX)
                return rpc_request_reply_error(req, -EINVAL, "initial_executors %d out of range 0..%d",
                                               ra->initial_executors, ELASTIC_EXECUTORS_MAX);
        if (ra->n_executor_env > 256)
                return rpc_request_reply_error(req, -E2BIG, "too many environment variables");
        if (ra->n_constraints > LABELS_MAX)
                return rpc_request_reply_error(req, -E2BIG, "more than %d constraints", LABELS_MAX);
        r = cluster_amounts_from_wire(ra->executor_resources, ra->n_executor_resources, &wants);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return rpc_request_reply_error(req, r, "invalid executor_resources (at most %d names of %d bytes)",
                                               RESOURCE_KINDS_MAX, RESOURCE_NAME_MAX);
        r = 0;
        if (!executor_key_is_valid(ra->executor_key.len))
                return rpc_request_reply_error(req, -EINVAL, "executor_key has %zu bytes, not %u",
                                               ra->executor_key.len, EXECUTOR_KEY_SIZE);

        /* A resent registration (nng req resends) finds its app: same id;
         * so does a driver that restarted with its state directory, and
         * takes its application back, executors and all (master-drivers.c
         * kept it for driver_reconnect_ms). */
        if (!isempty(ra->app_id) && (a = cluster_app(m->cluster, ra->app_id))) {
                /* ... with the key it was registered with: a driver keeps
                 * its key for its whole life, and in its state directory
                 * across restarts; the key is what proves it is the same. */
                if (!executor_key_equal(a->executor_key, ra->executor_key.data))
                        return rpc_request_reply_error(req, -EEXIST,
                                                       "application %s is registered with another executor key",
                                                       a->id);
                r = master_bind_app_driver(m, req, a);
                if (r < 0)
                        return r;
                r = master_app_driver_moved(m, a, ra->driver_url, ra->driver_events, ra->task_channel_port);
                if (r < 0)
                        return rpc_request_reply_error(req, r, "cannot take application %s back: %s", a->id,
                                                       strerror(-r));
                goto reply;
        }

        env_strings = calloc(ra->n_executor_env + 1, sizeof(char *));
        if (!env_strings)
                return -ENOMEM;
        for (size_t i = 0; i < ra->n_executor_env; i++) {
                const Spark__KeyValue *kv = ra->executor_env[i];
                if (!config_env_name_is_valid(kv->key) || strlen(kv->value) > 4096)
                        r = -EINVAL;
                else if (asprintf(&env_strings[i], "%s=%s", kv->key, kv->value) < 0)
                        r = -ENOMEM;
                if (r < 0)
                        goto done;
        }

        reg = (AppRegistration) {
                .app_id = ra->app_id, .name = ra->name, .driver_url = ra->driver_url,
                .driver_events = ra->driver_events, .driver_channel_port = ra->task_channel_port,
                .max_cores = ra->max_cores,
                .cores_per_executor = ra->cores_per_executor, .executor_memory_mb = ra->executor_memory_mb,
                .env = (const char *const *) env_strings, .n_env = ra->n_executor_env,
                .executor_key = ra->executor_key.data, .executor_key_len = ra->executor_key.len,
                .dynamic_allocation = ra->dynamic_allocation, .initial_executors = ra->initial_executors,
                .weight = ra->weight,
                .constraints = (const char *const *) ra->constraints, .n_constraints = ra->n_constraints,
                .wants = wants, .n_wants = ra->n_executor_resources,
        };
        /* the id this app may get is on disk before anyone hears of it */
        if (isempty(ra->app_id) && master_state_reserve_app_number(m) < 0) {
                r = -EIO;
                goto done;
        }
        r = cluster_register_app(m->cluster, &reg, now_mono_usec(), &a);
done:
        for (size_t i = 0; i < ra->n_executor_env; i++)
                free(env_strings[i]);
        if (r == -EIO)
                return rpc_request_reply_error(req, r, "cannot record the application in the state directory");
        if (r < 0)
                return rpc_request_reply_error(req, r,
                                               "invalid application registration (cores, memory, driver URL, environment, "
                                               "executor_resources or constraints)");
        r = master_bind_app_driver(m, req, a);
        if (r < 0)
                return r;
        {
                char who[3 * PEER_SUBJECT_MAX];
                a->submitted_by = strdup(rpc_request_peer_describe(req, who, sizeof(who)));
                a->start_time_ms = (int64_t) (now_real_usec() / USEC_PER_MSEC);
        }
        set_ui_url(&a->ui_url, ra->ui_url);  /* recorded with it */
        /* written before anyone hears of it, on disk before it is answered
         * (a restart places its executors); its first launches go out in
         * between */
        (void) master_state_app_registered(m, a);
        master_place_now(m, LAUNCHES_BEFORE_REPLY);
        reply.app_id = a->id;
        reply.master_epoch = master_ha_epoch(m->ha);
        ENVELOPE_SET(&env, REGISTER_APPLICATION_REPLY, register_application_reply, &reply);
        return master_state_sync_then_reply(m, req, &env);
reply:
        set_ui_url(&a->ui_url, ra->ui_url);
        reply.app_id = a->id;
        reply.master_epoch = master_ha_epoch(m->ha);
        ENVELOPE_SET(&env, REGISTER_APPLICATION_REPLY, register_application_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}

static int handle_remove_application(Master *m, RpcRequest *req, const char *app_id, AppState state,
                                     const char *reason) {
        int r;

        if (!app_id_is_valid(app_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid application id");
        r = cluster_remove_app(m->cluster, app_id, state, reason);
        if (r == -ENOENT && state == SPARK__APP_STATE__APP_FINISHED)
                return rpc_request_reply_ack(req);  /* a resent unregistration */
        if (r < 0)
                return rpc_request_reply_error(req, r, "unknown application %s", app_id);
        return rpc_request_reply_ack(req);
}

static int handle_kill_executor(Master *m, RpcRequest *req, const Spark__KillExecutor *ke) {
        int r;

        if (!app_id_is_valid(ke->app_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid application id");
        r = cluster_kill_executor(m->cluster, ke->app_id, ke->executor_id,
                                  isempty(ke->reason) ? "killed on request" : ke->reason);
        if (r < 0)
                return rpc_request_reply_error(req, r, "unknown executor %s/%d", ke->app_id, ke->executor_id);
        return rpc_request_reply_ack(req);
}

static int handle_release_executors(Master *m, RpcRequest *req, const Spark__ReleaseExecutors *re) {
        int bad = 0, r;

        if (!app_id_is_valid(re->app_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid application id");
        if (re->n_executor_ids == 0 || re->n_executor_ids > ELASTIC_EXECUTORS_MAX)
                return rpc_request_reply_error(req, -EINVAL, "%zu executor ids to release, not 1..%d",
                                               re->n_executor_ids, ELASTIC_EXECUTORS_MAX);
        if (strlen(re->reason) > 200 || !utf8_text_is_valid(re->reason, false))
                return rpc_request_reply_error(req, -EINVAL, "invalid release reason");
        r = cluster_release_executors(m->cluster, re->app_id, re->executor_ids, re->n_executor_ids,
                                      isempty(re->reason) ? "released by its driver" : re->reason, &bad);
        if (r == -ENOENT && bad > 0)
                return rpc_request_reply_error(req, r, "executor %d is not one of application %s's; nothing released",
                                               bad, re->app_id);
        if (r == -ENOENT)
                return rpc_request_reply_error(req, r, "unknown application %s", re->app_id);
        if (r < 0)
                return rpc_request_reply_error(req, r, "cannot release executors of %s", re->app_id);
        if (r > 0)
                master_state_changed(m);
        return rpc_request_reply_ack(req);
}

/* A driver's running tasks per executor (cluster-load.c): what preemption
 * takes back first.  Nothing is saved: a restarted master has the next
 * report within a second. */
static int handle_executor_load(Master *m, RpcRequest *req, const Spark__ExecutorLoad *el) {
        _cleanup_free_ int32_t *ids = NULL, *counts = NULL;
        int bad = 0, r;

        if (!app_id_is_valid(el->app_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid application id");
        if (el->n_executors > ELASTIC_EXECUTORS_MAX)
                return rpc_request_reply_error(req, -EINVAL, "%zu executors in a load report, more than %d",
                                               el->n_executors, ELASTIC_EXECUTORS_MAX);
        ids = calloc(el->n_executors + 1, sizeof(*ids));
        counts = calloc(el->n_executors + 1, sizeof(*counts));
        if (!ids || !counts)
                return rpc_request_reply_error(req, -ENOMEM, "out of memory");
        for (size_t i = 0; i < el->n_executors; i++) {
                ids[i] = el->executors[i]->executor_id;
                counts[i] = el->executors[i]->running_tasks;
        }
        r = cluster_report_executor_load(m->cluster, el->app_id, ids, counts, el->n_executors, &bad);
        if (r == -ENOENT && bad > 0)
                return rpc_request_reply_error(req, r, "executor %d is not one of application %s's; load report ignored",
                                               bad, el->app_id);
        if (r == -ENOENT)
                return rpc_request_reply_error(req, r, "unknown application %s", el->app_id);
        if (r == -EINVAL && bad != 0)
                return rpc_request_reply_error(req, r, "executor %s/%d: negative running task count; load report ignored",
                                               el->app_id, bad);
        if (r < 0)
                return rpc_request_reply_error(req, r, "load report of %s: %zu entries, more than its executors; ignored",
                                               el->app_id, el->n_executors);
        return rpc_request_reply_ack(req);
}

static int handle_request_executors(Master *m, RpcRequest *req, const Spark__RequestExecutors *re) {
        int r;

        if (!app_id_is_valid(re->app_id) || re->total < 0)
                return rpc_request_reply_error(req, -EINVAL, "invalid application id or executor count");
        r = cluster_request_executors(m->cluster, re->app_id, re->total);
        if (r < 0)
                return rpc_request_reply_error(req, r, "unknown application %s", re->app_id);
        return rpc_request_reply_ack(req);
}

/* The longest drain timeout taken: a week. */
#define DRAIN_TIMEOUT_MS_MAX (7 * 24 * 3600 * 1000)

static int handle_drain_worker(Master *m, RpcRequest *req, const Spark__DrainWorker *dw) {
        int r;

        if (!worker_id_is_valid(dw->worker_id))
                return rpc_request_reply_error(req, -EINVAL, "invalid worker id");
        if (dw->timeout_ms < 0 || dw->timeout_ms > DRAIN_TIMEOUT_MS_MAX)
                return rpc_request_reply_error(req, -EINVAL, "drain timeout %d ms out of range (0-%d)",
                                               dw->timeout_ms, DRAIN_TIMEOUT_MS_MAX);
        if (dw->undrain)
                r = cluster_undrain_worker(m->cluster, dw->worker_id);
        else
                r = cluster_drain_worker(m->cluster, dw->worker_id, (usec_t) dw->timeout_ms * USEC_PER_MSEC,
                                         now_mono_usec());
        if (r == -ENOENT)
                return rpc_request_reply_error(req, r, "unknown worker %s", dw->worker_id);
        if (r < 0)
                return rpc_request_reply_error(req, r, "cannot %sdrain worker %s", dw->undrain ? "un" : "",
                                               dw->worker_id);
        master_schedule_worker_check(m);   /* the drain deadline */
        master_state_changed(m);
        return rpc_request_reply_ack(req);
}

int master_handle_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Master *m = userdata;
        int r;
        (void) s;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &m->last_request);
        master_audit(m, req, env);

        /* A standby answers every request with where the leader is; a
         * suspended leader keeps its workers (heartbeats) and answers
         * questions, but changes nothing (docs/ha.md). */
        switch (master_ha_role(m->ha)) {
        case MASTER_ROLE_LEADER:
                break;
        case MASTER_ROLE_SUSPENDED:
                if (env->body_case == SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST)
                        break;
                if (master_ha_presumed_replaced(m->ha))
                        /* the workers go on to the others (master-ha.c) */
                        return rpc_request_reply_error(req, -EREMCHG, "standby, no leader elected yet");
                if (env->body_case == SPARK__ENVELOPE__BODY_HEARTBEAT)
                        break;
                return rpc_request_reply_error(req, -EAGAIN, "leader suspended: no ZooKeeper connection, try again");
        default:
                if (master_ha_leader_url(m->ha))
                        return rpc_request_reply_error(req, -EREMCHG, STANDBY_LEADER_PREFIX "%s",
                                                       master_ha_leader_url(m->ha));
                return rpc_request_reply_error(req, -EREMCHG, "standby, no leader elected yet");
        }

        /* an app's own requests: only from the driver that registered it */
        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_UNREGISTER_APPLICATION:
                r = master_check_app_driver(m, req, env->unregister_application->app_id);
                break;
        case SPARK__ENVELOPE__BODY_REQUEST_EXECUTORS:
                r = master_check_app_driver(m, req, env->request_executors->app_id);
                break;
        case SPARK__ENVELOPE__BODY_KILL_EXECUTOR:
                r = master_check_app_driver(m, req, env->kill_executor->app_id);
                break;
        case SPARK__ENVELOPE__BODY_RELEASE_EXECUTORS:
                r = master_check_app_driver(m, req, env->release_executors->app_id);
                break;
        case SPARK__ENVELOPE__BODY_EXECUTOR_LOAD:
                r = master_check_app_driver(m, req, env->executor_load->app_id);
                break;
        default:
                r = 0;
        }
        if (r < 0)
                return r;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_REGISTER_WORKER:
                return handle_register_worker(m, req, env->register_worker);
        case SPARK__ENVELOPE__BODY_HEARTBEAT:
                return handle_heartbeat(m, req, env->heartbeat);
        case SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED:
                return handle_executor_state_changed(m, req, env->executor_state_changed);
        case SPARK__ENVELOPE__BODY_REGISTER_APPLICATION:
                return handle_register_application(m, req, env->register_application);
        case SPARK__ENVELOPE__BODY_UNREGISTER_APPLICATION:
                return handle_remove_application(m, req, env->unregister_application->app_id,
                                                 SPARK__APP_STATE__APP_FINISHED,
                                                 isempty(env->unregister_application->reason)
                                                         ? "driver unregistered"
                                                         : env->unregister_application->reason);
        case SPARK__ENVELOPE__BODY_KILL_APPLICATION:
                return handle_remove_application(m, req, env->kill_application->app_id,
                                                 SPARK__APP_STATE__APP_FAILED, "killed on request");
        case SPARK__ENVELOPE__BODY_KILL_EXECUTOR:
                return handle_kill_executor(m, req, env->kill_executor);
        case SPARK__ENVELOPE__BODY_REQUEST_EXECUTORS:
                return handle_request_executors(m, req, env->request_executors);
        case SPARK__ENVELOPE__BODY_RELEASE_EXECUTORS:
                return handle_release_executors(m, req, env->release_executors);
        case SPARK__ENVELOPE__BODY_EXECUTOR_LOAD:
                return handle_executor_load(m, req, env->executor_load);
        case SPARK__ENVELOPE__BODY_DRAIN_WORKER:
                return handle_drain_worker(m, req, env->drain_worker);
        case SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST:
                return master_reply_cluster_state(m, req, env->cluster_state_request->app_id,
                                                  env->cluster_state_request->all);
        default:
                return rpc_request_reply_error(req, -EOPNOTSUPP, "the master does not handle %s requests",
                                               envelope_body_name(env));
        }
}
