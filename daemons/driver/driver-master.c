/* The driver's side of the master: registering the application, and the
 * event streams that tell it of lost executors — the master's (executor and
 * worker state) and each worker's (the unit-stop signal).  A gap or a new
 * epoch in any stream is answered with a snapshot from the master, which is
 * the authority on which executors are alive and which of them may register
 * (driver-announced.c). */
#include "daemon.h"
#include "driver-executors.h"
#include "driver-journal.h"
#include "driver-master.h"
#include "epoch-file.h"
#include "log.h"

/* After an answer (or none) from the master: a standby names the leader, a
 * silent one is replaced by the next of the list (docs/ha.md). */
static void follow_master(Driver *d, int error, const Envelope *reply) {
        RpcClient *c;
        int r;

        if (!master_link_update(&d->master_link, error, reply, rpc_client_connection_lost(d->master)))
                return;
        r = rpc_client_new(d->event, master_link_url(&d->master_link), &(RpcClientConfig) { .tls = &d->tls }, &c);
        if (r < 0) {
                log_error_errno(r, "Failed to set up the connection to the master at %s: %m",
                                master_link_url(&d->master_link));
                return;
        }
        rpc_client_free(d->master); /* calls in flight: -ECANCELED */
        d->master = c;
        d->registering = false;
        d->resync_in_flight = false;
        /* Not at once: while every master answers as a standby (a lost
         * quorum) that would go round them in a tight loop.  The register
         * timer registers, and the new leader's events (a new publisher
         * epoch) make us ask it for a snapshot. */
}

static bool is_standby_reply(const Envelope *reply) {
        char leader[ENDPOINT_LIST_URL_MAX];

        return reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR &&
               standby_reply_leader(reply->error->code, reply->error->message, leader, sizeof(leader)) != -ENOENT;
}

static void on_register_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        Driver *d = userdata;
        (void) c;

        d->registering = false;
        if (error == -ECANCELED)
                return;
        if (is_standby_reply(reply) || (error < 0 && !reply)) {
                follow_master(d, error, reply);
                if (!reply)
                        log_warning_errno(error, "Registration with the master at %s failed, retrying: %m",
                                          rpc_client_url(d->master));
                return;
        }
        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                log_error("The master refused application %s: %s", d->config.driver.app_name, reply->error->message);
                return;  /* retried by the timer */
        }
        if (error < 0 || reply->body_case != SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY ||
            !app_id_is_valid(reply->register_application_reply->app_id)) {
                log_warning_errno(error, "Registration with the master at %s failed, retrying: %m",
                                  rpc_client_url(d->master));
                return;
        }
        if (!leader_epoch_accept(&d->master_epoch, reply->register_application_reply->master_epoch)) {
                log_warning("Master at %s has epoch %" PRIu64 ", older than the leader's (%" PRIu64 "), ignoring it",
                            rpc_client_url(d->master), reply->register_application_reply->master_epoch,
                            d->master_epoch);
                return;  /* the register timer asks again; a snapshot does not follow a deposed leader */
        }
        if (!streq(d->app_id, reply->register_application_reply->app_id)) {
                snprintf(d->app_id, sizeof(d->app_id), "%s", reply->register_application_reply->app_id);
                /* a restart comes back as this application */
                (void) driver_journal_app(d);
        }
        d->registered = true;
        (void) sd_event_source_set_enabled(d->register_timer, SD_EVENT_OFF);
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id, .message_id = SPARK_MESSAGE_APP_REGISTERED),
                   "Application %s (%s) registered with the master at %s", d->app_id, d->config.driver.app_name,
                   rpc_client_url(d->master));
        snprintf(d->status, sizeof(d->status), "application %s", d->app_id);
        /* a new registration starts at initial_executors: tell it ours */
        d->elastic_synced = false;
        driver_elastic_kick(d);
        d->load_sent = 0;  /* and our executors' load, at the next tick */
        /* Events about our executors may have come before we knew our id:
         * a snapshot subscribes to the workers that host them. */
        driver_request_snapshot(d);
}

void driver_register_app(Driver *d) {
        Spark__RegisterApplication ra = SPARK__REGISTER_APPLICATION__INIT;
        _cleanup_free_ Spark__KeyValue *kv = NULL;
        _cleanup_free_ Spark__KeyValue **kvp = NULL;
        _cleanup_free_ char *keys = NULL;
        _cleanup_free_ Spark__ResourceAmount *amounts = NULL;
        _cleanup_free_ Spark__ResourceAmount **amount_ptrs = NULL;
        _cleanup_free_ char *names = NULL;
        Envelope env = ENVELOPE_INIT;
        size_t n = 0, n_amounts = 0;

        if (d->registering)
                return;
        /* executor_resources: "name=N", checked when the configuration was loaded */
        for (char **e = d->config.driver.executor_resources; e && *e; e++)
                n_amounts++;
        amounts = calloc(n_amounts + 1, sizeof(*amounts));
        amount_ptrs = calloc(n_amounts + 1, sizeof(*amount_ptrs));
        names = calloc(n_amounts + 1, 64);
        if (!amounts || !amount_ptrs || !names) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < n_amounts; i++) {
                const char *s = d->config.driver.executor_resources[i], *eq = strchr(s, '=');
                char *name = names + i * 64;

                spark__resource_amount__init(&amounts[i]);
                snprintf(name, 64, "%.*s", eq ? (int) (eq - s) : 0, s);
                amounts[i].name = name;
                amounts[i].amount = eq ? atoi(eq + 1) : 0;
                amount_ptrs[i] = &amounts[i];
        }
        for (char **e = d->config.driver.executor_env; e && *e; e++)
                n++;
        kv = calloc(n + 1, sizeof(*kv));
        kvp = calloc(n + 1, sizeof(*kvp));
        keys = calloc(n + 1, 256);
        if (!kv || !kvp || !keys) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const char *s = d->config.driver.executor_env[i], *eq = strchr(s, '=');
                char *key = keys + i * 256;
                spark__key_value__init(&kv[i]);
                snprintf(key, 256, "%.*s", eq ? (int) (eq - s) : (int) strlen(s), s);
                kv[i].key = key;
                kv[i].value = (char *) (eq ? eq + 1 : "");
                kvp[i] = &kv[i];
        }
        ra.name = d->config.driver.app_name;
        ra.driver_url = d->url;
        ra.ui_url = d->ui_url ? d->ui_url : (char *) "";
        /* its executors register there, without opening nng (executor-channel.c) */
        ra.task_channel_port = d->task_channel_port;
        ra.driver_events = (char *) "";
        ra.max_cores = (int32_t) d->config.driver.max_cores;
        ra.cores_per_executor = (int32_t) d->config.driver.cores_per_executor;
        ra.executor_memory_mb = d->config.driver.executor_memory_mb;
        ra.weight = (int32_t) d->config.driver.weight;
        ra.executor_env = kvp;
        ra.n_executor_env = n;
        ra.executor_key = (ProtobufCBinaryData) { .len = sizeof(d->executor_key), .data = d->executor_key };
        ra.app_id = d->app_id;   /* "" the first time; ours again after a master restart */
        /* Elastic: the executors come as the backlog asks (driver-elastic.c). */
        ra.dynamic_allocation = d->config.driver.dynamic_allocation;
        ra.initial_executors = ra.dynamic_allocation ? (int32_t) d->config.driver.min_executors : 0;
        ra.executor_resources = amount_ptrs;
        ra.n_executor_resources = n_amounts;
        ra.constraints = d->config.driver.constraints;
        for (char **c = d->config.driver.constraints; c && *c; c++)
                ra.n_constraints++;
        ENVELOPE_SET(&env, REGISTER_APPLICATION, register_application, &ra);
        if (rpc_client_call(d->master, &env, 5000, on_register_reply, d) >= 0)
                d->registering = true;
}

/* ----------------------------------------------------------------- resync */

/* A worker's unit-stop events speak of executors that registered: one that
 * has not has nothing to lose yet.  So the subscription waits for the first
 * of its executors to register (driver-executors.c): over TLS it costs a
 * handshake on either side, which would otherwise compete for the CPU with
 * the very executors being started (docs/DESIGN.md §4, worker events). */
static void watch_worker_of(Driver *d, const Spark__ExecutorInfo *info) {
        const DriverExecutor *ex;

        if (isempty(info->worker_events))
                return;
        ex = driver_executor(d, info->executor_id);
        if (ex && !ex->lost)
                driver_subscribe_worker(d, info->worker_events);
        else
                (void) driver_announce_worker_events(d, info->executor_id, info->worker_events);
}

/* The master removed our application: nothing to unregister, nothing to
 * come back to; stop. */
static void driver_app_removed(Driver *d, const char *reason, bool failed) {
        log_struct(LOG_ERR, LOG_FIELDS(.app_id = d->app_id, .message_id = SPARK_MESSAGE_APP_REMOVED),
                   "The master removed application %s: %s; stopping", d->app_id, reason);
        d->registered = false;
        driver_journal_remove(d);
        /* Failed for good (killed, or executors failing): a restart would
         * start it again as a new application. */
        d->exit_status = failed ? SPARK_EXIT_APP_FAILED : EXIT_FAILURE;
        (void) sd_event_exit(d->event, 1);
}

static void on_snapshot(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        Driver *d = userdata;
        const Spark__ClusterState *cs;
        bool app_known = false;
        (void) c;

        d->resync_in_flight = false;
        if (error == -ECANCELED)
                return;
        if (error < 0 || reply->body_case != SPARK__ENVELOPE__BODY_CLUSTER_STATE) {
                follow_master(d, error, reply);
                return;  /* the next gap or event retries */
        }
        cs = reply->cluster_state;
        if (!leader_epoch_accept(&d->master_epoch, cs->master_epoch)) {
                log_warning("Ignoring the snapshot of a deposed master at %s (epoch %" PRIu64 ", the leader's is %" PRIu64 ")",
                            rpc_client_url(d->master), cs->master_epoch, d->master_epoch);
                return;
        }
        if (d->master_events)
                event_sub_set_position(d->master_events, reply->epoch, reply->seq);

        for (size_t i = 0; i < cs->n_apps; i++)
                app_known |= streq(cs->apps[i]->app_id, d->app_id);
        if (app_known)
                d->app_listed_epoch = reply->epoch;
        else if (d->registered && reply->epoch != 0 && reply->epoch == d->app_listed_epoch) {
                /* The same master, which listed our app before, no longer
                 * does: it removed it (kill-app).  Its ApplicationRemoved
                 * event is covered by this snapshot, and dropped as stale
                 * when it comes: stop as it would have us. */
                driver_app_removed(d, "no longer listed by the master", true);
                return;
        }
        if (d->registered && !app_known) {
                /* A master restarted without our app: register it again. */
                log_notice("The master does not know application %s, registering again", d->app_id);
                d->registered = false;
                driver_register_app(d);
                return;
        }

        /* A snapshot follows a gap or a new leader, which may know none
         * of our executors' load (it is not saved): report it again. */
        d->load_sent = 0;

        /* Executors we hold that the master no longer lists are gone —
         * but a new leader still waiting for its workers lists only those
         * of the state it read, which may lag the old leader's: the rest
         * may be taken back as their workers report them.  The status
         * timer asks again. */
        d->resync_after_recovery = cs->recovering;
        for (size_t i = 0; i < d->n_executors_allocated && !cs->recovering; i++) {
                DriverExecutor *ex = d->executors[i];
                bool listed = false;
                if (!ex || ex->lost)
                        continue;
                for (size_t k = 0; k < cs->n_executors && !listed; k++)
                        listed = cs->executors[k]->executor_id == ex->id && streq(cs->executors[k]->app_id, d->app_id);
                if (!listed)
                        driver_executor_lost(d, ex, EXECUTOR_LOSS_SNAPSHOT, "not alive in the master's snapshot");
        }

        /* The executors the master lists are the ones that may register;
         * their workers' unit-stop events are the ones to hear. */
        driver_forget_all_announced(d);
        for (size_t k = 0; k < cs->n_executors; k++) {
                const Spark__ExecutorInfo *info = cs->executors[k];
                if (!streq(info->app_id, d->app_id))
                        continue;
                (void) driver_announce_executor(d, info->executor_id, info->worker_id);
                driver_executor_set_draining(d, info->executor_id, info->draining);
                watch_worker_of(d, info);
        }
}

void driver_request_snapshot(Driver *d) {
        Spark__ClusterStateRequest csr = SPARK__CLUSTER_STATE_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;

        if (d->resync_in_flight || !d->registered)
                return;
        csr.app_id = d->app_id;
        ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &csr);
        if (rpc_client_call(d->master, &env, 5000, on_snapshot, d) >= 0)
                d->resync_in_flight = true;
}

static void on_resync(EventSub *s, const char *reason, void *userdata) {
        Driver *d = userdata;

        log_debug("Resynchronising with the master (%s: %s)", event_sub_url(s), reason);
        driver_request_snapshot(d);
}

/* --------------------------------------------------------------- events */

static bool executor_state_is_end(Spark__ExecutorState s) {
        return s == SPARK__EXECUTOR_STATE__EXECUTOR_EXITED || s == SPARK__EXECUTOR_STATE__EXECUTOR_FAILED ||
               s == SPARK__EXECUTOR_STATE__EXECUTOR_KILLED || s == SPARK__EXECUTOR_STATE__EXECUTOR_LOST;
}

/* The leader epoch an event of the master carries; 0: none (not one of
 * the master's commands, or a single master). */
static uint64_t master_event_epoch(const Envelope *env) {
        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_EXECUTOR_ADDED:
                return env->executor_added->master_epoch;
        case SPARK__ENVELOPE__BODY_EXECUTOR_UPDATED:
                return env->executor_updated->master_epoch;
        case SPARK__ENVELOPE__BODY_WORKER_LOST:
                return env->worker_lost->master_epoch;
        case SPARK__ENVELOPE__BODY_APPLICATION_REMOVED:
                return env->application_removed->master_epoch;
        default:
                return 0;
        }
}

static void on_master_event(EventSub *s, const Envelope *env, void *userdata) {
        Driver *d = userdata;
        const Spark__ExecutorInfo *info = NULL;
        uint64_t epoch = master_event_epoch(env);

        /* A deposed leader that still publishes (cut off from ZooKeeper,
         * not from us) neither adds, drains nor removes anything here. */
        if (!leader_epoch_accept(&d->master_epoch, epoch)) {
                log_struct(LOG_WARNING, LOG_FIELDS(.app_id = d->app_id),
                           "Ignoring %s of a deposed master at %s (epoch %" PRIu64 ", the leader's is %" PRIu64 ")",
                           envelope_body_name(env), event_sub_url(s), epoch, d->master_epoch);
                return;
        }

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_EXECUTOR_ADDED:
                info = env->executor_added->executor;
                if (!info || !streq(info->app_id, d->app_id))
                        break;
                (void) driver_announce_executor(d, info->executor_id, info->worker_id);
                driver_executor_set_draining(d, info->executor_id, info->draining);
                watch_worker_of(d, info);
                break;
        case SPARK__ENVELOPE__BODY_EXECUTOR_UPDATED:
                info = env->executor_updated->executor;
                if (!info || !streq(info->app_id, d->app_id))
                        break;
                if (!executor_state_is_end(info->state)) {
                        /* an ExecutorAdded missed, or a worker re-adopting it */
                        (void) driver_announce_executor(d, info->executor_id, info->worker_id);
                        driver_executor_set_draining(d, info->executor_id, info->draining);
                } else {
                        char why[320];
                        driver_forget_announced(d, info->executor_id);
                        snprintf(why, sizeof(why), "master reports it %s: %s",
                                 info->state == SPARK__EXECUTOR_STATE__EXECUTOR_LOST ? "lost" : "ended",
                                 strempty(info->reason));
                        driver_executor_lost(d, driver_executor(d, info->executor_id), EXECUTOR_LOSS_MASTER, why);
                }
                break;
        case SPARK__ENVELOPE__BODY_WORKER_LOST:
                for (size_t i = 0; i < d->n_executors_allocated; i++) {
                        DriverExecutor *ex = d->executors[i];
                        if (ex && !ex->lost && streq(ex->worker_id, strempty(env->worker_lost->worker_id))) {
                                char why[320];
                                snprintf(why, sizeof(why), "worker %s lost: %s", ex->worker_id,
                                         strempty(env->worker_lost->reason));
                                driver_executor_lost(d, ex, EXECUTOR_LOSS_WORKER_LOST, why);
                        }
                }
                break;
        case SPARK__ENVELOPE__BODY_APPLICATION_REMOVED:
                if (streq(strempty(env->application_removed->app_id), d->app_id))
                        driver_app_removed(d, strempty(env->application_removed->reason),
                                           env->application_removed->state == SPARK__APP_STATE__APP_FAILED);
                break;
        default:
                break;
        }
}

static void on_worker_event(EventSub *s, const Envelope *env, void *userdata) {
        Driver *d = userdata;
        const Spark__ExecutorStateChanged *sc;
        (void) s;

        if (env->body_case != SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED)
                return;
        sc = env->executor_state_changed;
        if (!streq(strempty(sc->app_id), d->app_id) || !executor_state_is_end(sc->state))
                return;
        {
                char why[320];
                snprintf(why, sizeof(why), "unit %s stopped: %s", strempty(sc->unit), strempty(sc->reason));
                driver_executor_lost(d, driver_executor(d, sc->executor_id), EXECUTOR_LOSS_UNIT_STOPPED, why);
        }
}

void driver_subscribe_worker(Driver *d, const char *events_url) {
        EventSub *s;
        int r;

        if (hashmap_get(d->worker_events, events_url) || config_endpoint_check(events_url))
                return;
        r = event_sub_new(d->event, events_url, &(EventSubConfig) { .tls = &d->tls }, on_worker_event,
                          on_resync, d, &s);
        if (r < 0) {
                log_warning_errno(r, "Failed to subscribe to worker events at %s, ignoring: %m", events_url);
                return;
        }
        if (hashmap_put(d->worker_events, event_sub_url(s), s) < 0)
                event_sub_free(s);
}

int driver_subscribe_master(Driver *d) {
        return event_sub_new(d->event, d->config.cluster.master_events,
                             &(EventSubConfig) { .tls = &d->tls }, on_master_event, on_resync, d,
                             &d->master_events);
}
