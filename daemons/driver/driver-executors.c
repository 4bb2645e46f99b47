/* Executors of the application: registration, the poll (the executors pull
 * their tasks and hand back results), parked polls, and every path by which
 * an executor is found lost.  driver_executor_lost() is the one place an
 * executor leaves; whichever detection comes first wins, the others are
 * no-ops. */
#include <inttypes.h>

#include "alloc-util.h"
#include "driver-executors.h"
#include "driver-jobs.h"
#include "log.h"

#define MAX_TASKS_PER_REPLY 4096
#define MAX_RESULTS_PER_POLL 65536
/* How much work an executor may hold beyond its cores: enough to cover this
 * long at the rate it finishes tasks.  Tiny tasks then travel in large
 * batches (a task costs less than a message), while long tasks are handed
 * out a core's worth at a time and stay balanced across executors. */
#define PREFETCH_HORIZON_SEC 0.01
#define PREFETCH_FORGET_USEC (500 * USEC_PER_MSEC)
/* After a socket disconnect: how long the unit may take to stop by itself. */
#define UNIT_STOP_GRACE_USEC (1 * USEC_PER_SEC)
/* A registration under an id the master has not announced asks for a
 * snapshot at most this often (the executor retries every 250 ms). */
#define UNKNOWN_ID_RESYNC_USEC (200 * USEC_PER_MSEC)

DriverExecutor *driver_executor(Driver *d, int id) {
        if (id < 1 || (size_t) id >= d->n_executors_allocated)
                return NULL;
        return d->executors[id];
}

static int reply_error_shutdown(RpcRequest *req, const char *reason) {
        Spark__PollReply pr = SPARK__POLL_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;

        pr.shutdown = true;
        pr.reason = (char *) reason;
        ENVELOPE_SET(&env, POLL_REPLY, poll_reply, &pr);
        return rpc_request_reply_envelope(req, &env);
}

static void executor_clear_kills(DriverExecutor *ex) {
        for (size_t i = 0; i < ex->n_kills; i++)
                free(ex->kills[i].job_id);
        ex->n_kills = 0;
}

void driver_queue_kill(Driver *d, int executor_id, const char *job_id, int index) {
        DriverExecutor *ex;
        Spark__TaskKill *k;

        if (executor_id < 0) {
                for (size_t i = 0; i < d->n_executors_allocated; i++)
                        if (d->executors[i])
                                driver_queue_kill(d, d->executors[i]->id, job_id, index);
                return;
        }
        ex = driver_executor(d, executor_id);
        if (!ex || ex->lost)
                return;
        if (GREEDY_REALLOC(ex->kills, ex->n_kills_allocated, ex->n_kills + 1) < 0) {
                log_oom();
                return;
        }
        k = &ex->kills[ex->n_kills];
        spark__task_kill__init(k);
        k->job_id = strdup(job_id);
        if (!k->job_id)
                return;
        k->index = index;
        ex->n_kills++;
}

static void on_abandoned(RpcRequest *req, void *userdata) {
        DriverExecutor *ex = userdata;
        if (ex->parked == req)
                ex->parked = NULL;
}

/* Whether the executor has returned no results for long enough that its
 * rate says nothing of the next tasks: after a pause the next job's tasks
 * may be nothing like the last one's, so it starts small again. */
static bool executor_rate_forgotten(const DriverExecutor *ex, usec_t now) {
        return ex->last_results_at > 0 && now - ex->last_results_at > PREFETCH_FORGET_USEC;
}

/* Learns how fast the executor finishes tasks from the results it returns. */
static void executor_note_results(DriverExecutor *ex, size_t n, usec_t now) {
        if (executor_rate_forgotten(ex, now)) {
                ex->task_rate = 0;
                ex->prefetch = 0;
        } else if (ex->last_results_at > 0 && now > ex->last_results_at) {
                double rate = (double) n * 1e6 / (double) (now - ex->last_results_at);
                ex->task_rate = ex->task_rate > 0 ? 0.7 * ex->task_rate + 0.3 * rate : rate;
                ex->prefetch = (int) MIN(ex->task_rate * PREFETCH_HORIZON_SEC, (double) DRIVER_MAX_PREFETCH);
        }
        ex->last_results_at = now;
}

/* The prefetch to hand out now.  After a pause it is none, as
 * executor_note_results() decides too, but only at the next results: those
 * come after the tasks this hands out.  Left to that, an executor idle since
 * a job of short tasks (or since a batch of killed ones came back at once)
 * took a pile of the next job's long ones in one answer, and a drain of its
 * worker then waited for all of them (3.3 s for tasks of 500 ms). */
static int executor_prefetch_now(const DriverExecutor *ex, usec_t now) {
        return executor_rate_forgotten(ex, now) ? 0 : ex->prefetch;
}

/* Tasks the executor may be given now: its free slots as it reported them,
 * capped by what it already holds against cores + its adapted prefetch. */
static int executor_room(Driver *d, DriverExecutor *ex, int free_slots, usec_t now) {
        int held = scheduler_executor_running(d->scheduler, ex->id, NULL, 0);
        int room = ex->cores + executor_prefetch_now(ex, now) - MAX(held, 0);
        size_t executors = MAX(d->n_live_executors, (size_t) 1);
        size_t fair = (scheduler_n_pending(d->scheduler) + executors - 1) / executors;

        /* Prefetch no more than its share of what waits, so that the first
         * executor to ask does not take a whole job from the others; its
         * own free cores it may always fill. */
        room = MIN(room, (int) MIN(fair, (size_t) DRIVER_MAX_PREFETCH));
        room = MAX(room, ex->cores - MAX(held, 0));
        return MAX(MIN(free_slots, room), 0);
}

/* Answers a poll with what the scheduler offers this executor now, plus
 * queued kills.  If there is nothing to send and park is set, keeps the
 * request until there is (or the poll interval passes). */
static int executor_answer(Driver *d, DriverExecutor *ex, RpcRequest *req, int free_slots, bool park) {
        static TaskAssignment assignments[MAX_TASKS_PER_REPLY];
        static Spark__TaskLaunch launches[MAX_TASKS_PER_REPLY];
        static Spark__TaskLaunch *launch_ptrs[MAX_TASKS_PER_REPLY];
        Spark__TaskKill *kill_ptrs[64];
        Spark__PollReply pr = SPARK__POLL_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;
        usec_t now = now_mono_usec();
        int n = 0, r;

        free_slots = executor_room(d, ex, free_slots, now);
        if (free_slots > 0 && scheduler_n_pending(d->scheduler) > 0) {
                n = scheduler_offer(d->scheduler, ex->id, MIN(free_slots, MAX_TASKS_PER_REPLY), now, assignments,
                                    MAX_TASKS_PER_REPLY);
                if (n < 0)
                        n = 0;
                if (n > 0)
                        ex->busy_at = now;
        }
        if (n == 0 && ex->n_kills == 0 && park) {
                ex->parked = req;
                rpc_request_set_abandon_handler(req, on_abandoned, ex);
                (void) sd_event_source_set_time(ex->park_timer, now + (usec_t) d->poll_interval_ms * USEC_PER_MSEC);
                (void) sd_event_source_set_enabled(ex->park_timer, SD_EVENT_ONESHOT);
                return 0;
        }

        for (int i = 0; i < n; i++) {
                driver_task_launch_fill(d, &assignments[i], &launches[i]);
                launch_ptrs[i] = &launches[i];
        }
        pr.n_tasks = (size_t) n;
        pr.tasks = launch_ptrs;
        pr.n_kills = MIN(ex->n_kills, ELEMENTSOF(kill_ptrs));
        for (size_t i = 0; i < pr.n_kills; i++)
                kill_ptrs[i] = &ex->kills[i];
        pr.kills = kill_ptrs;
        ENVELOPE_SET(&env, POLL_REPLY, poll_reply, &pr);
        r = rpc_request_reply_envelope(req, &env);

        /* kills sent: drop them, keep any beyond this reply's share */
        for (size_t i = 0; i < pr.n_kills; i++)
                free(ex->kills[i].job_id);
        if (ex->n_kills > pr.n_kills)
                memmove(ex->kills, ex->kills + pr.n_kills, (ex->n_kills - pr.n_kills) * sizeof(*ex->kills));
        ex->n_kills -= pr.n_kills;
        return r;
}

/* Takes the executor's parked poll back from its timer; NULL if none. */
static RpcRequest *executor_take_parked(DriverExecutor *ex) {
        RpcRequest *req = TAKE_PTR(ex->parked);

        if (req)
                (void) sd_event_source_set_enabled(ex->park_timer, SD_EVENT_OFF);
        return req;
}

/* Answers the parked poll without new work: queued kills only, or shutdown
 * for a lost executor.  Its next poll is its heartbeat. */
static void executor_unpark(Driver *d, DriverExecutor *ex) {
        RpcRequest *req = executor_take_parked(ex);

        if (!req)
                return;
        if (ex->lost)
                (void) reply_error_shutdown(req, ex->lost_reason);
        else
                (void) executor_answer(d, ex, req, 0, false);
}

void driver_send_kills(Driver *d) {
        for (size_t i = 0; i < d->n_executors_allocated; i++) {
                DriverExecutor *ex = d->executors[i];

                if (ex && ex->parked && ex->n_kills > 0 && !ex->lost) {
                        log_struct(LOG_DEBUG, LOG_FIELDS(.app_id = d->app_id, .executor_id = ex->id),
                                   "Executor %d: answering its parked poll at once for %zu queued task kills",
                                   ex->id, ex->n_kills);
                        executor_unpark(d, ex);
                }
        }
}

void driver_wake_parked(Driver *d) {
        for (size_t i = 0; i < d->n_executors_allocated && scheduler_n_pending(d->scheduler) > 0; i++) {
                DriverExecutor *ex = d->executors[i];
                if (ex && ex->parked && !ex->lost)
                        (void) executor_answer(d, ex, executor_take_parked(ex), DRIVER_MAX_PREFETCH, true);
        }
        driver_arm_revive(d);
}

static int on_park_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        DriverExecutor *ex = userdata;
        (void) s, (void) usec;

        executor_unpark(ex->driver, ex);
        return 0;
}

/* Takes ex's connection out of the driver's map, if it is there for ex. */
static void executor_unmap_pipe(DriverExecutor *ex) {
        if (ex->pipe_key[0] && hashmap_get(ex->driver->pipes, ex->pipe_key) == ex)
                hashmap_remove(ex->driver->pipes, ex->pipe_key);
        ex->pipe_key[0] = '\0';
}

/* Frees ex and takes its connection out of the driver's map; the caller
 * has taken it out of the executor table and the scheduler. */
static DriverExecutor *executor_free(DriverExecutor *ex) {
        if (!ex)
                return NULL;
        executor_unmap_pipe(ex);
        executor_clear_kills(ex);
        free(ex->kills);
        sd_event_source_disable_unref(ex->park_timer);
        sd_event_source_disable_unref(ex->stop_timer);
        free(ex);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(DriverExecutor *, executor_free);

/* Maps the connection to the executor, so that its disconnect is noticed
 * (driver_on_pipe).  A connection that carries another executor already is
 * refused (-EEXIST): its disconnect would be taken for that one's.  On
 * failure the executor has no connection in the map (a frozen or silent
 * one is still found by its missed polls). */
static int executor_map_pipe(Driver *d, DriverExecutor *ex, uint32_t pipe) {
        int r;

        executor_unmap_pipe(ex);
        ex->pipe_id = pipe;
        snprintf(ex->pipe_key, sizeof(ex->pipe_key), "%" PRIu32, pipe);
        r = hashmap_put(d->pipes, ex->pipe_key, ex);
        if (r < 0)
                ex->pipe_key[0] = '\0';
        return r;
}

static void on_kill_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        (void) c, (void) reply, (void) userdata;
        if (error < 0 && error != -ECANCELED && error != -ENOENT)
                log_debug_errno(error, "The master did not take the kill of a lost executor: %m");
}

/* Asks the master to stop the executor's unit (the master then replaces it). */
static void request_unit_stop(Driver *d, DriverExecutor *ex) {
        Spark__KillExecutor ke = SPARK__KILL_EXECUTOR__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        if (!d->registered || ex->unit_ended)
                return;
        ke.app_id = d->app_id;
        ke.executor_id = ex->id;
        ke.reason = ex->lost_reason;
        ENVELOPE_SET(&env, KILL_EXECUTOR, kill_executor, &ke);
        r = rpc_client_call(d->master, &env, 5000, on_kill_reply, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to ask the master to stop executor %d, ignoring: %m", ex->id);
}

static int on_stop_grace(sd_event_source *s, uint64_t usec, void *userdata) {
        DriverExecutor *ex = userdata;
        (void) s, (void) usec;

        request_unit_stop(ex->driver, ex);
        return 0;
}

static bool loss_means_unit_ended(ExecutorLoss kind) {
        return kind == EXECUTOR_LOSS_UNIT_STOPPED || kind == EXECUTOR_LOSS_MASTER;
}

void driver_executor_lost(Driver *d, DriverExecutor *ex, ExecutorLoss kind, const char *reason) {
        usec_t now = now_mono_usec();
        int lost_tasks;

        if (!ex)
                return;
        if (loss_means_unit_ended(kind))
                ex->unit_ended = true;
        if (ex->lost) {
                /* Later detections change nothing; they are logged to show
                 * each path works, not only the fastest. */
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id, .executor_id = ex->id),
                           "Executor %d (already lost: %s) also: %s", ex->id, ex->lost_reason, reason);
                return;
        }
        ex->lost = true;
        if (kind >= 0 && kind < (int) ELEMENTSOF(d->metrics.executors_lost))
                d->metrics.executors_lost[kind]++;
        snprintf(ex->lost_reason, sizeof(ex->lost_reason), "%s", reason);
        lost_tasks = scheduler_remove_executor(d->scheduler, ex->id, reason, now);
        d->n_live_executors--;
        /* Its connection stays mapped until it closes (driver_on_pipe()), so
         * that a disconnect after the unit-stop event is heard and logged
         * too. */

        log_struct(ex->draining || ex->releasing ? LOG_INFO : LOG_WARNING,
                   LOG_FIELDS(.app_id = d->app_id, .executor_id = ex->id, .worker_id = ex->worker_id,
                              .message_id = SPARK_MESSAGE_EXECUTOR_LOST),
                   "Executor %d on %s lost: %s; %d running tasks re-queued%s", ex->id, ex->host, reason,
                   MAX(lost_tasks, 0),
                   ex->releasing  ? " (released idle)"
                   : ex->draining ? " (drained: not counted as failures)"
                                  : "");

        executor_unpark(d, ex);
        executor_clear_kills(ex);

        /* Its unit must go, so that the master replaces it: a frozen one at
         * once; after a disconnect the process has usually died already and
         * its unit stops by itself, so give the unit-stop signal a moment
         * before asking (a stop would mask how the unit really ended). */
        if (kind == EXECUTOR_LOSS_HEARTBEAT || kind == EXECUTOR_LOSS_SNAPSHOT)
                request_unit_stop(d, ex);
        else if (kind == EXECUTOR_LOSS_DISCONNECT &&
                 sd_event_add_time_relative(d->event, &ex->stop_timer, CLOCK_MONOTONIC, UNIT_STOP_GRACE_USEC, 1000,
                                            on_stop_grace, ex) < 0)
                request_unit_stop(d, ex);

        driver_drain_finished_jobs(d);
        driver_wake_parked(d);
}

int driver_register_executor(Driver *d, RpcRequest *req, const Spark__RegisterExecutor *re) {
        Spark__RegisterExecutorReply reply = SPARK__REGISTER_EXECUTOR_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;
        _cleanup_(executor_freep) DriverExecutor *new_ex = NULL;
        DriverExecutor *ex;
        const char *started_on;
        int r;

        if (!d->registered)
                /* the executor retries: we are still registering with the master */
                return rpc_request_reply_error(req, -EAGAIN, "the application is not registered yet");
        if (!streq(re->app_id, d->app_id))
                return rpc_request_reply_error(req, -ESTALE, "this driver runs application %s, not %s", d->app_id,
                                               re->app_id);
        if (re->executor_id < 1 || re->executor_id > DRIVER_MAX_EXECUTOR_ID || re->cores < 1 || re->cores > 4096 ||
            !wire_name_is_valid(re->host, false) || !wire_name_is_valid(re->worker_id, true))
                return rpc_request_reply_error(req, -EINVAL, "invalid executor registration");
        if (!driver_executor_secret_ok(d, NULL, re->executor_id, &re->secret, "a registration"))
                return rpc_request_reply_error(req, -EPERM, "registration as executor %d of %s refused: %s executor secret",
                                               re->executor_id, d->app_id, re->secret.len == 0 ? "no" : "wrong");

        /* Only an executor the master started, from the worker it started it
         * on (driver-announced.c): one from another worker is an impostor,
         * whatever else is true. */
        started_on = driver_announced_worker(d, re->executor_id);
        if (started_on && !streq(started_on, strempty(re->worker_id))) {
                log_warning("Refused executor %d from %s: the master started it on worker %s, not \"%s\"",
                            re->executor_id, re->host, started_on, strempty(re->worker_id));
                return rpc_request_reply_error(req, -EPERM, "executor %d of %s was started on worker %s, not \"%s\"",
                                               re->executor_id, d->app_id, started_on, strempty(re->worker_id));
        }

        ex = driver_executor(d, re->executor_id);
        if (ex) {
                /* A resend of the same registration on the same connection is
                 * harmless; anything else is a second executor with this id. */
                if (!ex->lost && ex->pipe_id == rpc_request_pipe_id(req) && ex->pid == re->pid)
                        goto reply;
                return rpc_request_reply_error(req, -EEXIST, "executor id %d is already registered%s",
                                               re->executor_id, ex->lost ? " (and was lost)" : "");
        }

        /* Not announced: its ExecutorAdded may still be on its way, or was
         * lost; the executor retries, and a snapshot settles it. */
        if (!started_on) {
                usec_t now = now_mono_usec();
                if (now - d->last_unknown_resync >= UNKNOWN_ID_RESYNC_USEC) {
                        d->last_unknown_resync = now;
                        d->effects->resync(d);
                }
                log_debug("Executor %d of %s is not one the master has started (yet)", re->executor_id, d->app_id);
                return rpc_request_reply_error(req, -EAGAIN, "executor %d of %s is not one the master has started",
                                               re->executor_id, d->app_id);
        }

        if (GREEDY_REALLOC0(d->executors, d->n_executors_allocated, (size_t) re->executor_id + 1) < 0)
                return -ENOMEM;
        ex = new_ex = calloc(1, sizeof(*new_ex));
        if (!ex)
                return -ENOMEM;
        ex->driver = d;
        ex->id = re->executor_id;
        (void) driver_executor_secret_set(d, ex);  /* the id is valid: it cannot fail */
        snprintf(ex->host, sizeof(ex->host), "%s", re->host);
        snprintf(ex->worker_id, sizeof(ex->worker_id), "%s", re->worker_id ? re->worker_id : "");
        ex->cores = re->cores;
        ex->pid = re->pid;
        ex->pipe_id = rpc_request_pipe_id(req);
        ex->last_poll = ex->busy_at = now_mono_usec();  /* idle from now on, until it gets a task */
        r = sd_event_add_time(d->event, &ex->park_timer, CLOCK_MONOTONIC, 0, 1000, on_park_timeout, ex);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(ex->park_timer, SD_EVENT_OFF);
        r = executor_map_pipe(d, ex, ex->pipe_id);
        if (r == -EEXIST)
                return rpc_request_reply_error(req, r, "executor %d: this connection carries another executor",
                                               re->executor_id);
        if (r < 0)
                return r;
        r = scheduler_add_executor(d->scheduler, ex->id, ex->host, ex->cores);
        if (r < 0)
                return rpc_request_reply_error(req, r, "executor %d refused by the scheduler", re->executor_id);
        d->executors[ex->id] = TAKE_PTR(new_ex);
        d->n_live_executors++;
        if (driver_announced_draining(d, ex->id))
                driver_executor_set_draining(d, ex->id, true);

        log_struct(LOG_INFO,
                   LOG_FIELDS(.app_id = d->app_id, .executor_id = ex->id, .worker_id = ex->worker_id,
                              .message_id = SPARK_MESSAGE_EXECUTOR_REGISTERED),
                   "Executor %d registered from %s: %d cores, pid %" PRIi64 ", unit %s", ex->id, ex->host,
                   ex->cores, ex->pid, isempty(re->unit) ? "-" : re->unit);
        d->effects->executor_registered(d, ex->id);
reply:
        reply.heartbeat_ms = d->poll_interval_ms;
        reply.prefetch = DRIVER_MAX_PREFETCH;
        reply.durable_driver = d->journal != NULL;
        reply.task_channel_port = d->task_channel_port;
        /* one result must fit in one poll, which must fit our receive limit */
        reply.max_result_bytes = MIN(d->config.driver.max_result_mb * 1024 * 1024,
                                     (int64_t) DRIVER_MAX_REQUEST_BYTES - 1024 * 1024);
        ENVELOPE_SET(&env, REGISTER_EXECUTOR_REPLY, register_executor_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}

int driver_poll(Driver *d, RpcRequest *req, const Spark__Poll *poll) {
        DriverExecutor *ex = driver_executor(d, poll->executor_id);
        usec_t now = now_mono_usec();
        bool had_results = poll->n_results > 0;
        uint32_t pipe = rpc_request_pipe_id(req);

        if (!streq(poll->app_id, d->app_id))
                return reply_error_shutdown(req, "not this driver's application");
        if (poll->executor_id < 1 || poll->executor_id > DRIVER_MAX_EXECUTOR_ID)
                return rpc_request_reply_error(req, -EINVAL, "invalid executor id %d", poll->executor_id);
        if (!driver_executor_secret_ok(d, ex, poll->executor_id, &poll->secret, "a poll"))
                return rpc_request_reply_error(req, -EPERM, "poll as executor %d of %s refused: %s executor secret",
                                               poll->executor_id, d->app_id, poll->secret.len == 0 ? "no" : "wrong");
        if (!ex) {
                /* Its secret is right, so it is one of ours from before a
                 * restart (the key came back from the state directory):
                 * it registers again, and keeps its unit and its process. */
                Spark__PollReply pr = SPARK__POLL_REPLY__INIT;
                Envelope env = ENVELOPE_INIT;

                pr.shutdown = true;   /* for executors that do not know reregister */
                pr.reregister = true;
                pr.reason = (char *) "unknown executor: register first";
                ENVELOPE_SET(&env, POLL_REPLY, poll_reply, &pr);
                return rpc_request_reply_envelope(req, &env);
        }
        if (ex->lost)
                return reply_error_shutdown(req, ex->lost_reason);
        if (poll->n_results > MAX_RESULTS_PER_POLL)
                return rpc_request_reply_error(req, -E2BIG, "too many results in one poll");
        for (size_t i = 0; i < poll->n_results; i++) {
                char why[200];
                if (driver_task_result_check(d, poll->results[i], why, sizeof(why)))
                        return rpc_request_reply_error(req, -EINVAL, "%s", why);
        }

        ex->last_poll = now;
        if (pipe != ex->pipe_id) {
                /* reconnected: follow the new connection */
                int r = executor_map_pipe(d, ex, pipe);

                if (r < 0)
                        return rpc_request_reply_error(req, r, "executor %d: cannot follow its new connection: %s",
                                                       ex->id, strerror(-r));
        }

        for (size_t i = 0; i < poll->n_results; i++)
                driver_task_result(d, ex->id, poll->results[i], now);
        driver_drain_check(d, ex);
        if (had_results) {
                ex->busy_at = now;
                executor_note_results(ex, poll->n_results, now);
                driver_drain_finished_jobs(d);
                if (scheduler_n_pending(d->scheduler) > 0)
                        driver_wake_parked(d);
                /* With a poll of this executor parked already, this one is
                 * a flush: answered at once, with work if there is some.
                 * Otherwise it is also the executor's poll for work, and
                 * may wait for it as one. */
                return executor_answer(d, ex, req, MAX(poll->free_slots, 0), !ex->parked);
        }

        /* The executor has one poll waiting for work at a time; an older one
         * (resent after a reconnect) is answered empty. */
        executor_unpark(d, ex);
        return executor_answer(d, ex, req, MAX(poll->free_slots, 0), true);
}

void driver_on_pipe(RpcServer *s, uint32_t pipe_id, bool added, void *userdata) {
        Driver *d = userdata;
        char key[16];
        DriverExecutor *ex;
        (void) s;

        if (added)
                return;
        snprintf(key, sizeof(key), "%" PRIu32, pipe_id);
        ex = hashmap_get(d->pipes, key);
        if (!ex)
                return;
        executor_unmap_pipe(ex);  /* the connection is gone */
        driver_executor_lost(d, ex, EXECUTOR_LOSS_DISCONNECT, "socket disconnected");
}

/* ---------------------------------------------------------------- timers */

static int on_revive(sd_event_source *s, uint64_t usec, void *userdata) {
        Driver *d = userdata;
        (void) s, (void) usec;

        driver_wake_parked(d);
        return 0;
}

void driver_arm_revive(Driver *d) {
        usec_t now = now_mono_usec();
        usec_t next = scheduler_next_locality_deadline(d->scheduler, now);

        if (next == USEC_INFINITY) {
                if (d->revive_timer)
                        (void) sd_event_source_set_enabled(d->revive_timer, SD_EVENT_OFF);
                return;
        }
        if (!d->revive_timer) {
                if (sd_event_add_time(d->event, &d->revive_timer, CLOCK_MONOTONIC, next, 1000, on_revive, d) < 0)
                        log_warning("Failed to arm the revive timer, ignoring");
                return;
        }
        (void) sd_event_source_set_time(d->revive_timer, next);
        (void) sd_event_source_set_enabled(d->revive_timer, SD_EVENT_ONESHOT);
}

static int on_heartbeat_check(sd_event_source *s, uint64_t usec, void *userdata) {
        Driver *d = userdata;
        usec_t now = now_mono_usec();

        for (size_t i = 0; i < d->n_executors_allocated; i++) {
                DriverExecutor *ex = d->executors[i];
                if (ex && !ex->lost && now - ex->last_poll > d->heartbeat_timeout) {
                        char why[128];
                        snprintf(why, sizeof(why), "no poll for %llu ms (heartbeat timeout)",
                                 (unsigned long long) ((now - ex->last_poll) / USEC_PER_MSEC));
                        driver_executor_lost(d, ex, EXECUTOR_LOSS_HEARTBEAT, why);
                }
        }
        (void) sd_event_source_set_time(s, usec + d->heartbeat_timeout / 20);
        return 0;
}

int driver_start_heartbeat_checks(Driver *d) {
        return sd_event_add_time_relative(d->event, &d->heartbeat_timer, CLOCK_MONOTONIC, d->heartbeat_timeout / 20,
                                          1000, on_heartbeat_check, d) < 0
                       ? -ENOMEM
                       : sd_event_source_set_enabled(d->heartbeat_timer, SD_EVENT_ON);
}

void driver_executors_free(Driver *d) {
        for (size_t i = 0; i < d->n_executors_allocated; i++)
                executor_free(d->executors[i]);
        free(d->executors);
        d->executors = NULL;
        d->n_executors_allocated = 0;
}
