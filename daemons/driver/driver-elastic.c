/* Elastic executors, the driver's I/O (docs/elastic.md): it feeds the
 * policy (driver-allocation.c) the backlog and its executors' idleness,
 * tells the master the total it wants (RequestExecutors), and gives back
 * executors idle for executor_idle_timeout_ms (ReleaseExecutors).  An
 * executor given back is offered no task from then on, as a drained one:
 * it holds none, and its unit's end costs no attempt. */
#include <inttypes.h>

#include "daemon.h"
#include "driver-executors.h"
#include "log.h"

/* Decided again at least this often: a lost reply, a lowered target. */
#define ELASTIC_TICK_MAX_USEC USEC_PER_SEC
/* Executors given back in one request at most; more go at the next tick. */
#define RELEASE_BATCH_MAX 64

static void allocation_config_from(const SparkConfig *c, AllocationConfig *ret) {
        *ret = (AllocationConfig) {
                .min_executors = (unsigned) c->driver.min_executors,
                .max_executors = c->driver.max_executors > 0 ? MAX((unsigned) c->driver.max_executors,
                                                                   (unsigned) c->driver.min_executors)
                                                             : 0,
                .cores_per_executor = (unsigned) c->driver.cores_per_executor,
                .idle_timeout = (usec_t) c->driver.executor_idle_timeout_ms * USEC_PER_MSEC,
                .backlog_timeout = (usec_t) c->driver.backlog_timeout_ms * USEC_PER_MSEC,
        };
}

static void arm(Driver *d, usec_t when) {
        (void) sd_event_source_set_time(d->elastic_timer, when);
        (void) sd_event_source_set_enabled(d->elastic_timer, SD_EVENT_ONESHOT);
}

void driver_elastic_kick(Driver *d) {
        if (d->elastic_timer)
                arm(d, 0);  /* in the past: at the next loop iteration */
}

static void on_request_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        Driver *d = userdata;
        (void) c;

        d->elastic_in_flight = false;
        if (error == -ECANCELED)
                return;
        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ACK) {
                d->elastic_synced = true;
                if (d->elastic_sent != d->allocation.target)
                        driver_elastic_kick(d);
                return;
        }
        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                log_warning("The master refused %u executors for application %s, retrying: %s", d->elastic_sent,
                            d->app_id, reply->error->message);
        else
                log_warning_errno(error, "Failed to ask the master for %u executors, retrying: %m", d->elastic_sent);
}

static void send_target(Driver *d) {
        Spark__RequestExecutors re = SPARK__REQUEST_EXECUTORS__INIT;
        Envelope env = ENVELOPE_INIT;

        if (d->elastic_in_flight)
                return;  /* its reply sends the newer total */
        re.app_id = d->app_id;
        re.total = (int32_t) MIN(d->allocation.target, (unsigned) INT32_MAX);
        ENVELOPE_SET(&env, REQUEST_EXECUTORS, request_executors, &re);
        if (rpc_client_call(d->master, &env, 5000, on_request_reply, d) < 0)
                return;  /* the next tick retries */
        d->elastic_in_flight = true;
        d->elastic_synced = false;
        d->elastic_sent = d->allocation.target;
}

static void set_releasing(Driver *d, DriverExecutor *ex, bool releasing) {
        ex->releasing = releasing;
        (void) scheduler_set_executor_draining(d->scheduler, ex->id, releasing || ex->draining);
        if (!releasing)
                driver_wake_parked(d);
}

static void on_release_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        Driver *d = userdata;
        (void) c;

        if (error == -ECANCELED || (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ACK))
                return;
        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                log_warning("The master refused to release executors of %s: %s", d->app_id, reply->error->message);
        else
                log_warning_errno(error, "Failed to release executors of %s, trying again: %m", d->app_id);
        /* Not released after all: they take tasks again, and the policy
         * picks them again if they stay idle. */
        for (size_t i = 0; i < d->n_executors_allocated; i++) {
                DriverExecutor *ex = d->executors[i];
                if (ex && ex->releasing && !ex->lost)
                        set_releasing(d, ex, false);
        }
}

static void release(Driver *d, const int *ids, size_t n) {
        Spark__ReleaseExecutors re = SPARK__RELEASE_EXECUTORS__INIT;
        Envelope env = ENVELOPE_INIT;
        int32_t wire[RELEASE_BATCH_MAX];
        char reason[96];
        int r;

        for (size_t i = 0; i < n; i++)
                wire[i] = ids[i];
        snprintf(reason, sizeof(reason), "idle for %" PRIi64 " ms", d->config.driver.executor_idle_timeout_ms);
        re.app_id = d->app_id;
        re.executor_ids = wire;
        re.n_executor_ids = n;
        re.reason = reason;
        ENVELOPE_SET(&env, RELEASE_EXECUTORS, release_executors, &re);
        r = rpc_client_call(d->master, &env, 5000, on_release_reply, d);
        if (r < 0) {
                log_warning_errno(r, "Failed to release idle executors of %s, trying again: %m", d->app_id);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                DriverExecutor *ex = driver_executor(d, ids[i]);

                /* no task from now on: it holds none, and keeps none */
                set_releasing(d, ex, true);
                log_struct(LOG_INFO,
                           LOG_FIELDS(.app_id = d->app_id, .executor_id = ex->id, .worker_id = ex->worker_id,
                                      .message_id = SPARK_MESSAGE_EXECUTORS_RELEASED),
                           "Executor %d idle for %" PRIi64 " ms: released", ex->id,
                           d->config.driver.executor_idle_timeout_ms);
        }
}

static void update(Driver *d) {
        _cleanup_free_ AllocationExecutor *ex = NULL;
        size_t pending = scheduler_n_pending(d->scheduler), running = 0, n = 0, k;
        usec_t now = now_mono_usec(), next;
        int ids[RELEASE_BATCH_MAX];

        if (!d->registered) {
                arm(d, now + ELASTIC_TICK_MAX_USEC);
                return;
        }
        ex = calloc(MAX(d->n_live_executors, (size_t) 1), sizeof(*ex));
        if (!ex) {
                log_oom();
                arm(d, now + ELASTIC_TICK_MAX_USEC);
                return;
        }
        for (size_t i = 0; i < d->n_executors_allocated && n < d->n_live_executors; i++) {
                DriverExecutor *e = d->executors[i];
                int tasks;

                if (!e || e->lost)
                        continue;
                tasks = MAX(scheduler_executor_running(d->scheduler, e->id, NULL, 0), 0);
                running += (size_t) tasks;
                if (e->releasing || e->draining)
                        continue;  /* on their way out already */
                ex[n++] = (AllocationExecutor) { .id = e->id, .tasks = (unsigned) tasks, .busy_at = e->busy_at };
        }

        if (allocation_update(&d->allocation, pending, running, (unsigned) n, now))
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id, .message_id = SPARK_MESSAGE_EXECUTORS_WANTED),
                           "Application %s wants %u executors: %zu tasks waiting, %zu running, %zu executors",
                           d->app_id, d->allocation.target, pending, running, n);
        if (d->allocation.target != d->elastic_sent || !d->elastic_synced)
                send_target(d);

        k = allocation_pick_idle(&d->allocation, ex, n, now, ids, ELEMENTSOF(ids));
        if (k > 0)
                release(d, ids, k);

        next = allocation_next_deadline(&d->allocation, pending, ex, n, now);
        arm(d, MIN(next, now + ELASTIC_TICK_MAX_USEC));
}

static int on_elastic_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        update(userdata);
        return 0;
}

int driver_elastic_start(Driver *d) {
        AllocationConfig cfg;
        int r;

        if (!d->config.driver.dynamic_allocation)
                return 0;
        allocation_config_from(&d->config, &cfg);
        r = allocation_init(&d->allocation, &cfg);
        if (r < 0)
                return log_error_errno(r, "Failed to set up elastic executors: %m");
        r = sd_event_add_time(d->event, &d->elastic_timer, CLOCK_MONOTONIC, 0,
                              USEC_PER_MSEC /* not sd-event's default of 250 ms: the idle timeout is a figure */,
                              on_elastic_timer, d);
        if (r < 0)
                return log_error_errno(r, "Failed to add the elastic executors' timer: %m");
        (void) sd_event_source_set_enabled(d->elastic_timer, SD_EVENT_OFF);
        log_info("Elastic executors: %" PRIi64 " to %s%" PRIi64 ", released after %" PRIi64
                 " ms idle, more asked for after %" PRIi64 " ms of backlog",
                 d->config.driver.min_executors, d->config.driver.max_executors > 0 ? "" : "no cap but max_cores, ",
                 d->config.driver.max_executors, d->config.driver.executor_idle_timeout_ms,
                 d->config.driver.backlog_timeout_ms);
        return 0;
}

void driver_elastic_reload(Driver *d) {
        AllocationConfig cfg;

        if (!d->elastic_timer)
                return;
        allocation_config_from(&d->config, &cfg);
        if (allocation_set_config(&d->allocation, &cfg) < 0)
                log_warning("Reload: elastic executor settings refused, ignoring");
        driver_elastic_kick(d);
}

void driver_elastic_done(Driver *d) {
        d->elastic_timer = sd_event_source_disable_unref(d->elastic_timer);
}
