/* The worker's request endpoint: LaunchExecutor and KillExecutor from the
 * master, a snapshot of its executors for subscribers that resync, and
 * executors' logs (worker-logs.c). */
#include <inttypes.h>

#include "log.h"
#include "peer-log.h"
#include "unit-properties.h"
#include "worker.h"

#define HIDDEN_PATHS_MAX 8

static size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

/* What an executor must not see (InaccessiblePaths=): every TLS key this
 * host's configuration names (executors hold none), the master's state,
 * configured and default, and the worker's own secrets directory. */
static size_t hidden_paths(const WorkerManager *w, const char *paths[static HIDDEN_PATHS_MAX]) {
        const SparkConfig *c = &w->config;
        const char *keys[] = { c->cluster.tls.key_file, c->master.tls_key_file, c->worker.tls_key_file,
                               c->driver.tls_key_file };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (!isempty(keys[i]))
                        paths[n++] = keys[i];
        if (!isempty(c->master.state_dir))
                paths[n++] = c->master.state_dir;
        if (!streq_ptr(c->master.state_dir, "/var/lib/spark/master"))
                paths[n++] = "/var/lib/spark/master";
        if (!isempty(w->secrets_dir))
                paths[n++] = w->secrets_dir;
        return n;
}

int worker_check_master_epoch(WorkerManager *w, RpcRequest *req, uint64_t epoch) {
        if (epoch == 0)
                return 0; /* a single master: nothing to fence */
        if (epoch < w->master_epoch) {
                log_struct(LOG_WARNING, LOG_FIELDS(.worker_id = w->id),
                           "Refusing a command of a deposed master (epoch %" PRIu64 ", the leader's is %" PRIu64 ")",
                           epoch, w->master_epoch);
                rpc_request_reply_error(req, -ESTALE, "master epoch %" PRIu64 " is older than the leader's, %" PRIu64,
                                        epoch, w->master_epoch);
                return -ESTALE;
        }
        worker_raise_master_epoch(w, epoch);
        return 0;
}

static int handle_launch(WorkerManager *w, RpcRequest *req, const Spark__LaunchExecutor *le) {
        _cleanup_free_ char **env = NULL, **devices = NULL;
        char **resource_env = NULL;
        size_t n_env = 0;
        char why[256] = "", secret_file[PATH_MAX] = "";
        const char *hidden[HIDDEN_PATHS_MAX];
        ExecutorUnitSpec spec;
        LocalExecutor *e;
        int r = 0;

        if (!app_id_is_valid(le->app_id) || le->executor_id < 1)
                return rpc_request_reply_error(req, -EINVAL, "invalid application or executor id");
        if (worker_check_master_epoch(w, req, le->master_epoch) < 0)
                return 0;
        if (!streq(le->worker_id, w->id))
                return rpc_request_reply_error(req, -ESTALE, "this is worker %s, not %s", w->id, le->worker_id);
        if (le->cores < 1 || le->cores > w->cores || le->memory_mb < 1 || le->memory_mb > w->memory_mb)
                return rpc_request_reply_error(req, -EINVAL, "invalid cores (%d) or memory (%" PRIi64 " MiB)",
                                               le->cores, le->memory_mb);
        if (isempty(le->driver_url) || config_endpoint_check(le->driver_url))
                return rpc_request_reply_error(req, -EINVAL, "invalid driver URL");
        if (le->driver_channel_port > UINT16_MAX)
                return rpc_request_reply_error(req, -EINVAL, "driver_channel_port %u is not a port",
                                               (unsigned) le->driver_channel_port);
        if (le->n_env > 256)
                return rpc_request_reply_error(req, -E2BIG, "too many environment variables");
        if (!executor_key_is_valid(le->executor_key.len))
                return rpc_request_reply_error(req, -EINVAL, "executor_key has %zu bytes, not %u",
                                               le->executor_key.len, EXECUTOR_KEY_SIZE);

        /* A resent launch finds its executor.  Its state is reported again:
         * the sender may have it as launching while it runs (a new leader,
         * or a master restarted from a state saved before it ran), and a
         * running unit sends no new state of its own. */
        e = worker_executor(w, le->app_id, le->executor_id);
        if (e) {
                e->report_pending = true;
                worker_report(w, e);
                return rpc_request_reply_ack(req);
        }

        env = calloc(le->n_env + 1, sizeof(char *));
        if (!env)
                return -ENOMEM;
        for (; n_env < le->n_env && r >= 0; n_env++) {
                const Spark__KeyValue *kv = le->env[n_env];
                if (!config_env_name_is_valid(kv->key) || strpbrk(kv->value, "\n\r")) {
                        /* say which, without echoing control characters */
                        char name[65];
                        size_t k = 0;
                        for (; kv->key[k] && k < sizeof(name) - 1; k++)
                                name[k] = (unsigned char) kv->key[k] < 0x20 || kv->key[k] == 0x7f ? '?' : kv->key[k];
                        name[k] = 0;
                        snprintf(why, sizeof(why), config_env_name_is_valid(kv->key)
                                                           ? "executor_env %s has a line break in its value"
                                                           : "executor_env name \"%s\" is not a valid name",
                                 name);
                        r = -EINVAL;
                } else if (asprintf(&env[n_env], "%s=%s", kv->key, kv->value) < 0)
                        r = -ENOMEM;
        }
        if (r < 0)
                goto done;
        /* the addresses the master gave it, each one this worker offers */
        r = worker_resources_for_launch(w, le, &resource_env, &devices, why, sizeof(why));
        if (r < 0)
                goto done;

        spec = (ExecutorUnitSpec) {
                .app_id = le->app_id,
                .executor_id = le->executor_id,
                .worker_id = w->id,
                .cores = le->cores,
                .memory_mb = le->memory_mb,
                .driver_url = le->driver_url,
                .driver_channel_port = le->driver_channel_port,
                .env = (const char *const *) env,
                .n_env = n_env,
                .secret_file = "/", /* its path once written, below */
                /* the CA only: the executor verifies its driver, and holds
                 * no certificate */
                .ca_file = tls_settings_can_dial(&w->tls) ? w->tls.ca_file : NULL,
                .executor_binary = w->config.worker.executor_binary,
                .work_dir = w->config.worker.work_dir,
                .slice = w->config.worker.executor_slice,
                .user = streq(w->config.worker.systemd_bus, "system") ? w->config.worker.executor_user : NULL,
                .properties = (const char *const *) w->config.worker.executor_properties,
                .n_properties = strv_length(w->config.worker.executor_properties),
                .hidden_paths = hidden,
                .n_hidden_paths = hidden_paths(w, hidden),
                .resource_env = (const char *const *) resource_env,
                .n_resource_env = strv_length(resource_env),
                .devices = (const char *const *) devices,
                .n_devices = strv_length(devices),
        };
        /* say what is wrong: the master puts it in the executor's reason */
        r = executor_unit_spec_validate(&spec, streq(w->config.worker.systemd_bus, "system"), why, sizeof(why));
        if (r < 0)
                goto done;
        r = worker_secret_write(w, le->app_id, le->executor_id, le->executor_key.data, le->executor_key.len,
                                secret_file, sizeof(secret_file));
        if (r < 0) {
                snprintf(why, sizeof(why), "cannot write the executor secret in %.160s: %s", w->secrets_dir,
                         strerror(-r));
                goto done;
        }
        spec.secret_file = secret_file;
        r = worker_executor_add(w, le->app_id, le->executor_id, le->cores, le->memory_mb,
                                SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING, &e);
        if (r < 0) {
                worker_secret_remove(w, le->app_id, le->executor_id);
                goto done;
        }
        r = unit_manager_start(w->units, &spec);
        if (r < 0) {
                worker_secret_remove(w, le->app_id, le->executor_id);
                worker_executor_forget(w, e);
                goto done;
        }
        log_struct(LOG_INFO,
                   LOG_FIELDS(.app_id = le->app_id, .executor_id = le->executor_id, .worker_id = w->id,
                              .message_id = SPARK_MESSAGE_EXECUTOR_LAUNCHED),
                   "Launching executor %s/%d: %d cores, %" PRIi64 " MiB, driver %s", le->app_id, le->executor_id,
                   le->cores, le->memory_mb, le->driver_url);
done:
        for (size_t i = 0; i < n_env; i++)
                free(env[i]);
        for (char **s = resource_env; s && *s; s++)
                free(*s);
        free(resource_env);
        if (r < 0)
                return rpc_request_reply_error(req, r, "cannot launch executor %s/%d: %s", le->app_id,
                                               le->executor_id, why[0] ? why : strerror(-r));
        return rpc_request_reply_ack(req);
}

static int handle_kill(WorkerManager *w, RpcRequest *req, const Spark__KillExecutor *ke) {
        int r;

        if (!app_id_is_valid(ke->app_id) || ke->executor_id < 1)
                return rpc_request_reply_error(req, -EINVAL, "invalid application or executor id");
        if (worker_check_master_epoch(w, req, ke->master_epoch) < 0)
                return 0;
        r = unit_manager_stop(w->units, ke->app_id, ke->executor_id, isempty(ke->reason) ? NULL : ke->reason);
        if (r < 0)
                return rpc_request_reply_error(req, r, "cannot stop executor %s/%d", ke->app_id, ke->executor_id);
        if (r == 0) {
                /* Not watched, so no outcome will follow: say it ended, so
                 * that the master does not wait for it forever. */
                LocalExecutor *e = worker_executor(w, ke->app_id, ke->executor_id);
                if (e || worker_executor_add(w, ke->app_id, ke->executor_id, 0, 0,
                                             SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING, &e) >= 0)
                        worker_executor_set_state(w, e, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED,
                                                  "stopped on request (not running here)", 0, 0);
        }
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = ke->app_id, .executor_id = ke->executor_id, .worker_id = w->id),
                   "Stopping executor %s/%d: %s", ke->app_id, ke->executor_id,
                   isempty(ke->reason) ? "on request" : ke->reason);
        return rpc_request_reply_ack(req);
}

static int handle_state(WorkerManager *w, RpcRequest *req, const Spark__ClusterStateRequest *cs) {
        Spark__ClusterState state = SPARK__CLUSTER_STATE__INIT;
        _cleanup_free_ Spark__ExecutorInfo *infos = NULL;
        _cleanup_free_ Spark__ExecutorInfo **ptrs = NULL;
        size_t n = hashmap_size(w->executors), i = 0;
        Envelope env = ENVELOPE_INIT;
        void *v;

        infos = calloc(n + 1, sizeof(*infos));
        ptrs = calloc(n + 1, sizeof(*ptrs));
        if (!infos || !ptrs)
                return -ENOMEM;
        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;
                Spark__ExecutorInfo *info = &infos[state.n_executors];
                if (!isempty(cs->app_id) && !streq(cs->app_id, e->app_id))
                        continue;
                worker_executor_info_fill(e, info);
                info->worker_id = w->id;
                info->host = w->host;
                info->reason = e->reason;
                info->exit_code = e->exit_code;
                ptrs[state.n_executors++] = info;
        }
        state.executors = ptrs;
        state.master_id = w->id;
        env.epoch = event_pub_epoch(w->events);
        env.seq = event_pub_seq(w->events);
        ENVELOPE_SET(&env, CLUSTER_STATE, cluster_state, &state);
        return rpc_request_reply_envelope(req, &env);
}

/* Who may send the worker what (docs/security.md), on a TLS listener: only
 * the master starts and stops executors; anyone may read its state (the
 * master and the drivers resynchronise from it). */
uint32_t worker_required_roles(const Envelope *env, void *userdata) {
        (void) userdata;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR:
        case SPARK__ENVELOPE__BODY_KILL_EXECUTOR:
                return PEER_ROLE_BIT(PEER_ROLE_MASTER);
        case SPARK__ENVELOPE__BODY_EXECUTOR_LOG_REQUEST:
                /* executors' output is the application's data */
                return PEER_ROLE_BIT(PEER_ROLE_CLIENT) | PEER_ROLE_BIT(PEER_ROLE_ADMIN) |
                       PEER_ROLE_BIT(PEER_ROLE_DRIVER);
        default:
                return PEER_ROLES_ANY;
        }
}

int worker_handle_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        WorkerManager *w = userdata;
        (void) s;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR:
                daemon_audit(req, env->launch_executor->app_id);
                return handle_launch(w, req, env->launch_executor);
        case SPARK__ENVELOPE__BODY_KILL_EXECUTOR:
                daemon_audit(req, env->kill_executor->app_id);
                return handle_kill(w, req, env->kill_executor);
        case SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST:
                return handle_state(w, req, env->cluster_state_request);
        case SPARK__ENVELOPE__BODY_EXECUTOR_LOG_REQUEST:
                return worker_handle_logs(w, req, env->executor_log_request);
        default:
                return rpc_request_reply_error(req, -EOPNOTSUPP, "the worker does not handle %s requests",
                                               envelope_body_name(env));
        }
}
