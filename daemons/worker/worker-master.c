/* The worker's side of the master protocol: registration (with the
 * executors it holds), heartbeats, and state reports that are retried until
 * the master acknowledges them — the master must never miss an executor's
 * end, whatever pub/sub drops. */
#include <inttypes.h>

#include "log.h"
#include "worker.h"

#define MASTER_CALL_TIMEOUT_MS 3000
#define REPORT_RETRY_USEC (500 * USEC_PER_MSEC)

typedef struct ReportCall {
        WorkerManager *w;
        char key[APP_ID_MAX + 16];
        Spark__ExecutorState state;
} ReportCall;

static void arm_retry(WorkerManager *w) {
        (void) sd_event_source_set_time_relative(w->retry_timer, REPORT_RETRY_USEC);
        (void) sd_event_source_set_enabled(w->retry_timer, SD_EVENT_ONESHOT);
}

/* After every answer (or none) from the master: a standby names the
 * leader, a silent leader is replaced by the next master of the list
 * (docs/ha.md).  The new one hears the registration, with our executors,
 * at the next heartbeat and before anything else. */
static void follow_master(WorkerManager *w, int error, const Envelope *reply) {
        RpcClient *c;
        int r;

        if (!master_link_update(&w->master_link, error, reply, rpc_client_connection_lost(w->master)))
                return;
        r = rpc_client_new(w->event, master_link_url(&w->master_link), &(RpcClientConfig) { .tls = &w->tls }, &c);
        if (r < 0) {
                log_error_errno(r, "Failed to set up the connection to the master at %s: %m",
                                master_link_url(&w->master_link));
                return;
        }
        /* the calls in flight end with -ECANCELED: reports are sent again
         * after the registration */
        rpc_client_free(w->master);
        w->master = c;
        w->registered = false;
        w->registering = false;
        w->heartbeat_in_flight = false;
        /* Sent to a standby's leader, the registration goes with the next
         * heartbeat, not now: while every master answers as a standby (a
         * lost quorum), the worker asks them in turn once a heartbeat, not
         * in a tight loop.  Away from a master that did not answer, it goes
         * now: the next may lead already (a stopped leader ends its
         * session at once), and a move after silence comes at most once a
         * call's timeout. */
        if (!reply)
                worker_register(w);
}

static void on_report_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        ReportCall *call = userdata;
        WorkerManager *w = call->w;
        LocalExecutor *e = hashmap_get(w->executors, call->key);
        (void) c;

        if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR &&
            standby_reply_leader(reply->error->code, reply->error->message, (char[ENDPOINT_LIST_URL_MAX]) {},
                                 ENDPOINT_LIST_URL_MAX) != -ENOENT)
                error = -EREMCHG; /* not a refusal: sent again to the leader */
        else if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR && reply->error->code == -EAGAIN)
                error = -EAGAIN;  /* a leader without ZooKeeper: again later */
        else if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                log_struct(LOG_WARNING, LOG_FIELDS(.worker_id = w->id),
                           "Master refused the state of executor %s: %s, ignoring", call->key,
                           reply->error->message);
                error = 0;  /* a refusal will not change by resending */
        }
        if (e) {
                e->report_in_flight = false;
                if (error < 0) {
                        if (error != -ECANCELED)
                                arm_retry(w);
                        follow_master(w, error, reply);
                } else if (e->state == call->state) {
                        e->report_pending = false;
                        if (e->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING &&
                            e->state != SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING)
                                worker_executor_forget(w, e);
                } else
                        worker_report(w, e);
        }
        free(call);
}

void worker_report(WorkerManager *w, LocalExecutor *e) {
        Spark__ExecutorStateChanged sc = SPARK__EXECUTOR_STATE_CHANGED__INIT;
        Envelope env = ENVELOPE_INIT;
        char unit[UNIT_NAME_MAX] = "";
        ReportCall *call;
        int r;

        if (!e->report_pending || e->report_in_flight || !w->registered)
                return;
        call = calloc(1, sizeof(*call));
        if (!call) {
                arm_retry(w);
                return;
        }
        call->w = w;
        snprintf(call->key, sizeof(call->key), "%s", e->key);
        call->state = e->state;

        worker_executor_state_fill(w, e, unit, &sc);
        ENVELOPE_SET(&env, EXECUTOR_STATE_CHANGED, executor_state_changed, &sc);
        r = rpc_client_call(w->master, &env, MASTER_CALL_TIMEOUT_MS, on_report_reply, call);
        if (r < 0) {
                free(call);
                arm_retry(w);
                return;
        }
        e->report_in_flight = true;
}

static void report_all_pending(WorkerManager *w) {
        LocalExecutor *pending[256];
        size_t n = 0, i = 0;
        void *v;

        /* reports may remove entries: collect first, a bounded batch per round */
        while (hashmap_iterate(w->executors, &i, &v, NULL) && n < ELEMENTSOF(pending)) {
                LocalExecutor *e = v;
                if (e->report_pending && !e->report_in_flight)
                        pending[n++] = e;
        }
        for (size_t k = 0; k < n; k++)
                worker_report(w, pending[k]);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        report_all_pending(userdata);
        return 0;
}

static void on_register_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        WorkerManager *w = userdata;
        const Spark__RegisterWorkerReply *rr;
        (void) c;

        w->registering = false;
        if (error == -ECANCELED)
                return;
        if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR &&
            standby_reply_leader(reply->error->code, reply->error->message, (char[ENDPOINT_LIST_URL_MAX]) {},
                                 ENDPOINT_LIST_URL_MAX) != -ENOENT) {
                follow_master(w, error, reply);
                return;
        }
        if (error < 0 && !reply) {
                log_warning_errno(error, "Registration with the master at %s failed, retrying: %m",
                                  rpc_client_url(w->master));
                follow_master(w, error, reply);
                return;
        }
        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                log_error("Master at %s refused registration: %s", rpc_client_url(w->master), reply->error->message);
                return;  /* the heartbeat timer tries again */
        }
        if (error < 0 || reply->body_case != SPARK__ENVELOPE__BODY_REGISTER_WORKER_REPLY) {
                log_warning_errno(error, "Registration with the master at %s failed, retrying: %m",
                                  rpc_client_url(w->master));
                return;
        }
        rr = reply->register_worker_reply;
        if (rr->master_epoch != 0 && rr->master_epoch < w->master_epoch) {
                log_warning("Master at %s has epoch %" PRIu64 ", older than the leader's (%" PRIu64 "), ignoring it",
                            rpc_client_url(w->master), rr->master_epoch, w->master_epoch);
                return;
        }
        worker_raise_master_epoch(w, rr->master_epoch);
        snprintf(w->master_id, sizeof(w->master_id), "%s", rr->master_id);
        w->registered = true;
        log_struct(LOG_INFO, LOG_FIELDS(.worker_id = w->id, .message_id = SPARK_MESSAGE_WORKER_REGISTERED),
                   "Registered with master %s at %s as %s (%d cores, %" PRIi64 " MiB)", w->master_id,
                   rpc_client_url(w->master), w->id, w->cores, w->memory_mb);

        for (size_t i = 0; i < rr->n_kill; i++) {
                const Spark__ExecutorInfo *k = rr->kill[i];
                if (!app_id_is_valid(k->app_id))
                        continue;
                log_struct(LOG_NOTICE, LOG_FIELDS(.app_id = k->app_id, .executor_id = k->executor_id, .worker_id = w->id),
                           "Stopping executor %s/%d: unknown to the master", k->app_id, k->executor_id);
                (void) unit_manager_stop(w->units, k->app_id, k->executor_id, "unknown to the master");
        }
        report_all_pending(w);
}

void worker_register(WorkerManager *w) {
        Spark__RegisterWorker rw = SPARK__REGISTER_WORKER__INIT;
        _cleanup_free_ Spark__ExecutorInfo *infos = NULL;
        _cleanup_free_ Spark__ExecutorInfo **ptrs = NULL;
        Envelope env = ENVELOPE_INIT;
        size_t n = hashmap_size(w->executors), i = 0;
        void *v;
        int r;

        if (w->registering || !w->adopted)
                return;
        infos = calloc(n + 1, sizeof(*infos));
        ptrs = calloc(n + 1, sizeof(*ptrs));
        if (!infos || !ptrs) {
                log_oom();
                return;
        }
        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;
                Spark__ExecutorInfo *info = &infos[rw.n_executors];
                if (e->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING &&
                    e->state != SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING)
                        continue;
                worker_executor_info_fill(e, info);
                ptrs[rw.n_executors++] = info;
        }
        rw.ui_url = w->ui_url ? w->ui_url : (char *) "";
        rw.executors = ptrs;
        rw.worker_id = w->id;
        rw.host = w->host;
        rw.endpoint = w->endpoint;
        rw.events_endpoint = w->events_endpoint;
        rw.cores = w->cores;
        rw.memory_mb = w->memory_mb;
        rw.labels = w->config.worker.labels;
        for (char **l = w->config.worker.labels; l && *l; l++)
                rw.n_labels++;
        rw.resources = w->resources_wire_ptrs;
        rw.n_resources = w->n_resources;
        ENVELOPE_SET(&env, REGISTER_WORKER, register_worker, &rw);

        r = rpc_client_call(w->master, &env, MASTER_CALL_TIMEOUT_MS, on_register_reply, w);
        if (r < 0) {
                log_error_errno(r, "Failed to send the registration: %m");
                return;
        }
        w->registering = true;
}

static void on_heartbeat_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        WorkerManager *w = userdata;
        (void) c;

        w->heartbeat_in_flight = false;
        if (error < 0 || reply->body_case != SPARK__ENVELOPE__BODY_HEARTBEAT_REPLY) {
                follow_master(w, error, reply);
                return;  /* the next beat tries again */
        }
        if (reply->heartbeat_reply->reregister) {
                log_notice("Master %s asks this worker to register again (it restarted, or timed the worker out)",
                           w->master_id);
                w->registered = false;
                worker_register(w);
        }
}

static int on_heartbeat(sd_event_source *s, uint64_t usec, void *userdata) {
        WorkerManager *w = userdata;
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env = ENVELOPE_INIT;

        (void) sd_event_source_set_time(s, usec + (usec_t) w->config.worker.heartbeat_ms * USEC_PER_MSEC);
        if (!w->registered) {
                worker_register(w);
                return 0;
        }
        if (w->heartbeat_in_flight)
                return 0;
        hb.worker_id = w->id;
        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);
        if (rpc_client_call(w->master, &env, (int) w->config.worker.heartbeat_ms * 2, on_heartbeat_reply, w) >= 0)
                w->heartbeat_in_flight = true;
        return 0;
}

int worker_start_heartbeats(WorkerManager *w) {
        int r;

        r = sd_event_add_time_relative(w->event, &w->retry_timer, CLOCK_MONOTONIC, REPORT_RETRY_USEC, 0, on_retry, w);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(w->retry_timer, SD_EVENT_OFF);
        r = sd_event_add_time_relative(w->event, &w->heartbeat_timer, CLOCK_MONOTONIC,
                                       (usec_t) w->config.worker.heartbeat_ms * USEC_PER_MSEC, 0, on_heartbeat, w);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(w->heartbeat_timer, SD_EVENT_ON);
}
