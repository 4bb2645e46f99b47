/* What the master sends because of a state change: LaunchExecutor and
 * KillExecutor to workers (retried until the worker answers or is gone) and
 * events to subscribers; and the timer that finds silent workers. */
#include "log.h"
#include "master.h"

#define WORKER_CALL_TIMEOUT_MS 5000
#define MAX_WORKER_CALL_ATTEMPTS 5
/* Launches per turn of the loop: an app of 10,000 executors is placed
 * while heartbeats and registrations are served in between (each launch
 * costs tens of microseconds: a slice a few milliseconds). */
#define PLACEMENT_SLICE 128
/* Placement waits while this many calls to workers are unanswered, and
 * goes on when half of them are: each costs a few KiB until its answer is
 * in (call, context, messages), and the master's memory must not grow with
 * how far its workers lag — 10,000 launches at once were 20 MiB and more,
 * and left the heap that much larger. */
#define WORKER_CALLS_IN_FLIGHT_MAX 1024

/* One outstanding call to a worker.  Holds ids, not pointers: by the time
 * the answer comes, the worker or the executor may be gone. */
typedef struct WorkerCall {
        Master *master;
        char worker_id[WORKER_ID_MAX];
        char app_id[APP_ID_MAX];
        int executor_id;
        bool kill;
        char reason[128];
        int attempt;
} WorkerCall;

static int worker_call_send(WorkerCall *call);

static void worker_call_free(WorkerCall *call) {
        Master *m = call->master;

        free(call);
        m->worker_calls--;
        if (m->placement_waiting && m->worker_calls <= WORKER_CALLS_IN_FLIGHT_MAX / 2) {
                m->placement_waiting = false;
                (void) sd_event_source_set_enabled(m->placement, SD_EVENT_ONESHOT);
        }
}

static RpcClient *worker_link(Master *m, Worker *w) {
        RpcClientConfig cfg = { .tls = &m->tls, .queue = m->link_queue };
        RpcClient *c = w->link;
        int r;

        if (c && streq(rpc_client_url(c), w->endpoint))
                return c;
        w->link = rpc_client_free(c);
        r = rpc_client_new(m->event, w->endpoint, &cfg, &c);
        if (r < 0) {
                log_struct_errno(LOG_ERR, r, LOG_FIELDS(.worker_id = w->id),
                                 "Failed to connect to worker %s at %s: %m", w->id, w->endpoint);
                return NULL;
        }
        w->link = c;
        return c;
}

static void on_worker_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        WorkerCall *call = userdata;
        Master *m = call->master;
        ClusterExecutor *e;
        (void) c;

        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                error = reply->error->code < 0 ? reply->error->code : -EIO;

        if (error == 0 || error == -ECANCELED) {
                worker_call_free(call);
                return;
        }

        e = cluster_executor(m->cluster, call->app_id, call->executor_id);
        if (!e || !e->worker || !streq(e->worker->id, call->worker_id) ||
            (!call->kill && e->state != SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING)) {
                worker_call_free(call);  /* moot now */
                return;
        }

        if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR && !call->kill) {
                /* The worker refused: the executor never started. */
                char why[300];
                snprintf(why, sizeof(why), "launch refused by worker: %s", reply->error->message);
                cluster_executor_state_changed(m->cluster, call->worker_id, call->app_id, call->executor_id,
                                               SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, why, 0, now_mono_usec());
                worker_call_free(call);
                return;
        }

        if (++call->attempt >= MAX_WORKER_CALL_ATTEMPTS) {
                log_struct_errno(LOG_WARNING, error,
                                 LOG_FIELDS(.worker_id = call->worker_id, .app_id = call->app_id,
                                            .executor_id = call->executor_id),
                                 "Worker %s did not answer %s of executor %s/%d after %d attempts: %m",
                                 call->worker_id, call->kill ? "kill" : "launch", call->app_id, call->executor_id,
                                 call->attempt);
                worker_call_free(call);
                return;
        }
        if (worker_call_send(call) < 0)
                worker_call_free(call);
}

static int worker_call_send(WorkerCall *call) {
        Master *m = call->master;
        Worker *w = cluster_worker(m->cluster, call->worker_id);
        ClusterExecutor *e = cluster_executor(m->cluster, call->app_id, call->executor_id);
        Envelope env = ENVELOPE_INIT;
        Spark__LaunchExecutor launch = SPARK__LAUNCH_EXECUTOR__INIT;
        Spark__KillExecutor kill = SPARK__KILL_EXECUTOR__INIT;
        Spark__KeyValue *kv = NULL, **kvp = NULL;
        RpcClient *c;
        int r;

        if (!w || !e)
                return -ENOENT;
        c = worker_link(m, w);
        if (!c)
                return -ENOTCONN;

        if (call->kill) {
                kill.app_id = call->app_id;
                kill.executor_id = call->executor_id;
                kill.reason = call->reason;
                kill.master_epoch = master_ha_epoch(m->ha);
                ENVELOPE_SET(&env, KILL_EXECUTOR, kill_executor, &kill);
        } else {
                App *a = e->app;
                kv = calloc(a->n_env ? a->n_env : 1, sizeof(*kv));
                kvp = calloc(a->n_env ? a->n_env : 1, sizeof(*kvp));
                if (!kv || !kvp) {
                        free(kv);
                        free(kvp);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < a->n_env; i++) {
                        /* checked at registration: "NAME=value" */
                        const char *eq = strchr(a->env[i], '=');
                        spark__key_value__init(&kv[i]);
                        kv[i].key = strndup(a->env[i], (size_t) (eq - a->env[i]));
                        kv[i].value = (char *) eq + 1;
                        kvp[i] = &kv[i];
                        if (!kv[i].key)
                                goto oom;
                }
                launch.app_id = a->id;
                launch.executor_id = e->id;
                launch.master_epoch = master_ha_epoch(m->ha);
                launch.cores = e->cores;
                launch.memory_mb = e->memory_mb;
                launch.driver_url = a->driver_url;
                launch.driver_channel_port = a->driver_channel_port;
                launch.worker_id = w->id;
                launch.executor_key = (ProtobufCBinaryData) { .len = sizeof(a->executor_key),
                                                              .data = a->executor_key };
                launch.n_env = a->n_env;
                launch.env = kvp;
                launch.resources = e->grant_ptrs;
                launch.n_resources = e->n_grants;
                ENVELOPE_SET(&env, LAUNCH_EXECUTOR, launch_executor, &launch);
        }

        r = rpc_client_call(c, &env, WORKER_CALL_TIMEOUT_MS, on_worker_reply, call);
        goto done;
oom:
        r = -ENOMEM;
done:
        for (size_t i = 0; kv && i < e->app->n_env; i++)
                free(kv[i].key);
        free(kv);
        free(kvp);
        return r;
}

static void worker_call_start(Master *m, Worker *w, ClusterExecutor *e, bool kill, const char *reason) {
        WorkerCall *call = calloc(1, sizeof(*call));
        int r;

        if (!call) {
                log_oom();
                return;
        }
        call->master = m;
        m->worker_calls++;
        snprintf(call->worker_id, sizeof(call->worker_id), "%s", w->id);
        snprintf(call->app_id, sizeof(call->app_id), "%s", e->app->id);
        call->executor_id = e->id;
        call->kill = kill;
        snprintf(call->reason, sizeof(call->reason), "%s", reason ? reason : "");
        r = worker_call_send(call);
        if (r < 0) {
                log_struct_errno(LOG_ERR, r, LOG_FIELDS(.worker_id = w->id, .app_id = e->app->id, .executor_id = e->id),
                                 "Failed to send %s of executor %s/%d to %s: %m", kill ? "kill" : "launch",
                                 e->app->id, e->id, w->id);
                worker_call_free(call);
        }
}

static void on_launch(Cluster *c, Worker *w, ClusterExecutor *e, void *userdata) {
        Master *m = userdata;
        (void) c;
        m->metrics.launches++;
        e->launch_sent = now_mono_usec();
        master_state_changed(userdata);
        worker_call_start(userdata, w, e, false, NULL);
}

static void on_kill(Cluster *c, Worker *w, ClusterExecutor *e, const char *reason, void *userdata) {
        (void) c;
        master_state_changed(userdata);
        worker_call_start(userdata, w, e, true, reason);
}

static void publish(Master *m, Envelope *env) {
        int r = event_pub_send(m->events, env);
        if (r < 0)
                log_warning_errno(r, "Failed to publish %s event, ignoring: %m", envelope_body_name(env));
}

static void publish_executor(Master *m, ClusterExecutor *e, bool added) {
        Spark__ExecutorInfo info = SPARK__EXECUTOR_INFO__INIT;
        Spark__ExecutorAdded ea = SPARK__EXECUTOR_ADDED__INIT;
        Spark__ExecutorUpdated eu = SPARK__EXECUTOR_UPDATED__INIT;
        Envelope env = ENVELOPE_INIT;
        char unit[UNIT_NAME_MAX];

        executor_info_fill(e, &info, unit, sizeof(unit));
        if (added) {
                ea.executor = &info;
                ea.master_epoch = master_ha_epoch(m->ha);
                ENVELOPE_SET(&env, EXECUTOR_ADDED, executor_added, &ea);
        } else {
                eu.executor = &info;
                eu.master_epoch = master_ha_epoch(m->ha);
                ENVELOPE_SET(&env, EXECUTOR_UPDATED, executor_updated, &eu);
        }
        publish(m, &env);
}

static void on_executor_added(Cluster *c, ClusterExecutor *e, void *userdata) {
        (void) c;
        publish_executor(userdata, e, true);
}

static void on_executor_updated(Cluster *c, ClusterExecutor *e, void *userdata) {
        Master *m = userdata;
        (void) c;
        if (e->state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING && e->launch_sent > 0) {
                prom_histogram_observe(&m->metrics.executor_start,
                                       (double) (now_mono_usec() - e->launch_sent) / USEC_PER_SEC);
                e->launch_sent = 0;
        }
        if (executor_state_is_terminal(e->state) && e->state < (int) ELEMENTSOF(m->metrics.executor_ends))
                m->metrics.executor_ends[e->state]++;
        master_state_changed(userdata);
        publish_executor(userdata, e, false);
}

static void on_worker_lost(Cluster *c, Worker *w, const char *reason, void *userdata) {
        Spark__WorkerLost wl = SPARK__WORKER_LOST__INIT;
        Envelope env = ENVELOPE_INIT;
        (void) c;

        ((Master *) userdata)->metrics.workers_lost++;
        wl.worker_id = w->id;
        wl.reason = (char *) reason;
        wl.master_epoch = master_ha_epoch(((Master *) userdata)->ha);
        ENVELOPE_SET(&env, WORKER_LOST, worker_lost, &wl);
        publish(userdata, &env);
        master_account_worker_lost(userdata, w, reason);
}

static void on_app_removed(Cluster *c, App *a, void *userdata) {
        Spark__ApplicationRemoved ar = SPARK__APPLICATION_REMOVED__INIT;
        Envelope env = ENVELOPE_INIT;
        (void) c;

        if (a->state > 0 && a->state < (int) ELEMENTSOF(((Master *) userdata)->metrics.apps_removed))
                ((Master *) userdata)->metrics.apps_removed[a->state]++;
        ar.app_id = a->id;
        ar.reason = a->reason ? a->reason : (char *) "";
        ar.state = a->state;
        ar.master_epoch = master_ha_epoch(((Master *) userdata)->ha);
        ENVELOPE_SET(&env, APPLICATION_REMOVED, application_removed, &ar);
        publish(userdata, &env);
        master_account_app_removed(userdata, a);
        master_state_changed(userdata);
}

static void on_worker_removed(Cluster *c, Worker *w, void *userdata) {
        (void) c;
        master_state_changed(userdata);
        /* pending calls complete with -ECANCELED and free themselves */
        w->link = rpc_client_free(w->link);
}

/* With as many calls to workers unanswered as allowed, placement waits:
 * worker_call_free() goes on. */
/* Whether the workers of the state read at the election or the restart
 * are back (or the time for them is up): placement may go on. */
static bool recovery_done(Master *m) {
        if (m->recovery_until == 0)
                return true;
        /* none awaited (the state read held no worker): the whole time,
         * for those that registered after it was saved */
        if (now_mono_usec() < m->recovery_until &&
            (m->recovery_expected == 0 || hashmap_size(m->recovery_awaited) > 0))
                return false;
        log_info("Recovery after the %s done: %zu of %zu workers registered again%s", m->ha ? "election" : "restart",
                 m->recovery_expected - hashmap_size(m->recovery_awaited), m->recovery_expected,
                 now_mono_usec() >= m->recovery_until ? " (the time for the others is up)" : "");
        master_recovery_end(m);
        return true;
}

static bool placement_must_wait(Master *m) {
        /* a standby, or a leader without its ZooKeeper session, places
         * nothing: another master may lead (docs/ha.md) */
        if (master_ha_role(m->ha) != MASTER_ROLE_LEADER)
                return true;
        if (!recovery_done(m))
                return true;
        if (m->worker_calls < WORKER_CALLS_IN_FLIGHT_MAX)
                return false;
        m->placement_waiting = true;
        return true;
}

static bool launch_under_way(const ClusterExecutor *e) {
        return e && e->worker && e->state == SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING;
}

/* Sends up to max of the launches resumed after a restart (those still
 * under way); returns whether some are left, and how many it sent. */
static bool resume_some(Master *m, unsigned max, unsigned *ret_sent) {
        unsigned sent = 0;

        while (m->next_resumed < m->n_resumed && sent < max) {
                const ResumedLaunch *l = &m->resumed[m->next_resumed++];
                ClusterExecutor *e = cluster_executor(m->cluster, l->app_id, l->executor_id);

                if (launch_under_way(e)) {
                        worker_call_start(m, e->worker, e, false, NULL);
                        sent++;
                }
        }
        *ret_sent = sent;
        if (m->next_resumed < m->n_resumed)
                return true;
        free(m->resumed);
        m->resumed = NULL;
        m->n_resumed = m->next_resumed = 0;
        return false;
}

/* Returns whether there may be more to place now. */
static bool place_some(Master *m, unsigned max_launches) {
        unsigned resumed;

        if (placement_must_wait(m))
                return false;
        if (resume_some(m, MIN(WORKER_CALLS_IN_FLIGHT_MAX - m->worker_calls, max_launches), &resumed))
                return !placement_must_wait(m);
        max_launches -= resumed;
        if (!cluster_schedule_step(m->cluster, MIN(WORKER_CALLS_IN_FLIGHT_MAX - m->worker_calls, max_launches))) {
                /* A whole pass ran after every change that asked for one
                 * (none asked during it): the pass deferred for them would
                 * find nothing.  A new app's registration asks, then
                 * places at once (handle_register_application()); under
                 * fair share the deferred pass rebuilt every app's share
                 * beside that app's first launch. */
                if (m->placement && !cluster_schedule_is_pending(m->cluster))
                        (void) sd_event_source_set_enabled(m->placement, SD_EVENT_OFF);
                return false;
        }
        return !placement_must_wait(m);
}

static int on_placement(sd_event_source *s, void *userdata) {
        if (place_some(userdata, PLACEMENT_SLICE))
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

void master_place_now(Master *m, unsigned max_launches) {
        if (!m->placement_waiting && place_some(m, max_launches) && m->placement)
                (void) sd_event_source_set_enabled(m->placement, SD_EVENT_ONESHOT);
}

/* Placement runs from the loop after the request that called for it has
 * been answered (but for the first few launches of a new app, see
 * handle_register_application()): a RegisterApplication is not answered
 * after its 10,000 LaunchExecutor calls have gone out. */
static void on_schedule_needed(Cluster *c, void *userdata) {
        Master *m = userdata;
        int r;

        if (!m->placement) {
                r = sd_event_add_defer(m->event, &m->placement, on_placement, m);
                if (r < 0) {
                        unsigned resumed;
                        log_warning_errno(r, "Failed to defer placement, placing at once: %m");
                        (void) resume_some(m, UINT_MAX, &resumed);
                        cluster_schedule(c);
                        return;
                }
                (void) sd_event_source_set_description(m->placement, "placement");
        }
        if (!m->placement_waiting)
                (void) sd_event_source_set_enabled(m->placement, SD_EVENT_ONESHOT);
}

/* Whether the worker check is armed, and if so for when. */
static bool worker_check_armed(Master *m, uint64_t *armed) {
        int enabled;

        return m->worker_check && sd_event_source_get_enabled(m->worker_check, &enabled) >= 0 &&
               enabled != SD_EVENT_OFF && sd_event_source_get_time(m->worker_check, armed) >= 0;
}

/* A fair-share deadline (cluster-fair.c): the worker check, which also
 * runs the preemption check, fires no later than when. */
static void on_check_at(Cluster *c, usec_t when, void *userdata) {
        Master *m = userdata;
        uint64_t armed;
        (void) c;

        if (!m->worker_check)
                return;  /* armed at the first worker check, which looks at the apps too */
        if (worker_check_armed(m, &armed) && armed <= when)
                return;
        (void) sd_event_source_set_time(m->worker_check, when);
        (void) sd_event_source_set_enabled(m->worker_check, SD_EVENT_ONESHOT);
}

static int on_recovery_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        master_place_soon(userdata);
        return 0;
}

void master_recovery_start(Master *m) {
        usec_t until = now_mono_usec() + (usec_t) m->config.master.worker_timeout_ms * USEC_PER_MSEC;
        size_t i = 0;
        void *v;

        master_recovery_end(m);
        /* no application: no executor of the old leader's can run beside a
         * new one (a new cluster's first leader places at once) */
        if (!cluster_apps(m->cluster))
                return;
        if (hashmap_new(&m->recovery_awaited) < 0)
                return; /* no memory: place at once, as before */
        /* Only the workers of the state read are awaited: one that
         * registered after the save comes back too, but ending the wait
         * on it would place beside the executors of one still on its way,
         * which would then be killed as surplus. */
        while (hashmap_iterate(cluster_workers(m->cluster), &i, &v, NULL)) {
                const Worker *w = v;
                char *id = strdup(w->id);

                if (!id || hashmap_put(m->recovery_awaited, id, id) < 0) {
                        free(id);
                        master_recovery_end(m);
                        return; /* no memory: place at once, as before */
                }
                m->recovery_expected++;
        }
        if (sd_event_add_time(m->event, &m->recovery_timer, CLOCK_MONOTONIC, until, USEC_PER_MSEC, on_recovery_timer,
                              m) < 0) {
                master_recovery_end(m);
                return;
        }
        m->recovery_until = until;
}

void master_recovery_end(Master *m) {
        m->recovery_until = 0;
        m->recovery_expected = 0;
        if (m->recovery_awaited) {
                size_t i = 0;
                void *v;

                while (hashmap_iterate(m->recovery_awaited, &i, &v, NULL))
                        free(v);
        }
        m->recovery_awaited = hashmap_free(m->recovery_awaited);
        m->recovery_timer = sd_event_source_disable_unref(m->recovery_timer);
}

void master_worker_registered(Master *m, const char *worker_id, usec_t now) {
        uint64_t armed;

        if (m->recovery_until != 0 && worker_id) {
                free(hashmap_remove(m->recovery_awaited, worker_id));
                if (m->recovery_expected > 0 && hashmap_size(m->recovery_awaited) == 0)
                        master_place_soon(m); /* it was the last */
        }

        /* Its deadline, now + worker_timeout, is the latest of all: a check
         * armed for the earliest one stays right, and walking every worker
         * (and drain and share) per registration would cost O(workers)
         * each, which a cluster's start pays 10,000 times. */
        if (worker_check_armed(m, &armed) && armed <= now + (usec_t) m->config.master.worker_timeout_ms * USEC_PER_MSEC)
                return;
        master_schedule_worker_check(m);
}

const ClusterEffects master_effects = {
        .launch_executor = on_launch,
        .kill_executor = on_kill,
        .executor_added = on_executor_added,
        .executor_updated = on_executor_updated,
        .worker_lost = on_worker_lost,
        .app_removed = on_app_removed,
        .worker_removed = on_worker_removed,
        .schedule_needed = on_schedule_needed,
        .check_at = on_check_at,
};

void master_resume_launches(Master *m) {
        size_t n = 0;

        /* LaunchExecutor is idempotent on the worker: one it got already is
         * acknowledged, one it never got is started now. */
        for (App *a = cluster_apps(m->cluster); a; a = a->next)
                for (size_t i = 0; i < a->n_executors_allocated; i++)
                        n += launch_under_way(a->executors[i]);
        if (n == 0)
                return;
        m->resumed = calloc(n, sizeof(*m->resumed));
        if (!m->resumed) {
                log_oom();
                return;
        }
        for (App *a = cluster_apps(m->cluster); a; a = a->next)
                for (size_t i = 0; i < a->n_executors_allocated; i++) {
                        ResumedLaunch *l = &m->resumed[m->n_resumed];
                        if (!launch_under_way(a->executors[i]))
                                continue;
                        snprintf(l->app_id, sizeof(l->app_id), "%s", a->id);
                        l->executor_id = a->executors[i]->id;
                        m->n_resumed++;
                }
        m->next_resumed = 0;
        log_info("Sending %zu launches again that were under way before the restart", m->n_resumed);
}

void master_workers_recovering(Master *m) {
        usec_t now = now_mono_usec();
        size_t i = 0;
        void *v;

        while (hashmap_iterate(cluster_workers(m->cluster), &i, &v, NULL))
                (void) cluster_heartbeat(m->cluster, ((Worker *) v)->id, now);
}

void master_place_soon(Master *m) {
        on_schedule_needed(m->cluster, m);
}

static int on_worker_check(sd_event_source *s, uint64_t usec, void *userdata) {
        Master *m = userdata;
        (void) s, (void) usec;

        master_schedule_worker_check(m);
        return 0;
}

/* Checks now and arms the timer for the next worker's deadline, so a silent
 * worker is declared lost at worker_timeout_ms, not a polling period later. */
void master_schedule_worker_check(Master *m) {
        usec_t now = now_mono_usec(), next = 0;
        int r;

        /* without a session, nobody is declared lost: the leader looks
         * again when it is back */
        if (master_ha_role(m->ha) != MASTER_ROLE_LEADER)
                return;
        cluster_check_workers(m->cluster, now, &next);
        if (!m->worker_check) {
                r = sd_event_add_time(m->event, &m->worker_check, CLOCK_MONOTONIC, next, 1000, on_worker_check, m);
                if (r < 0) {
                        log_error_errno(r, "Failed to arm the worker timeout timer: %m");
                        return;
                }
                return;
        }
        (void) sd_event_source_set_time(m->worker_check, next);
        (void) sd_event_source_set_enabled(m->worker_check, SD_EVENT_ONESHOT);
}
