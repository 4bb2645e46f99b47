/* See executor.h: lifecycle, registration, signals and the deadlines. */
#include <signal.h>
#include <stdarg.h>

#include "executor.h"

static const char *const executor_state_table[_EXECUTOR_STATE_MAX] = {
        [EXECUTOR_REGISTERING] = "registering",
        [EXECUTOR_POLLING] = "polling",
        [EXECUTOR_STOPPING] = "stopping",
};

const char *executor_state_to_string(ExecutorState s) {
        return s >= 0 && s < _EXECUTOR_STATE_MAX ? executor_state_table[s] : NULL;
}

void executor_exit(Executor *e, int status, int level, const char *fmt, ...) {
        char msg[1024];
        va_list ap;

        if (e->state == EXECUTOR_STOPPING)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_struct(level, EXECUTOR_LOG_FIELDS(e, .message_id = SPARK_MESSAGE_EXECUTOR_EXITED), "%s", msg);

        e->state = EXECUTOR_STOPPING;
        e->exit_status = status;
        (void) sd_event_exit(e->event, status);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Executor *e = userdata;

        (void) s;
        executor_exit(e, EXIT_SUCCESS, LOG_INFO, "Received SIG%s, exiting.", sigabbrev_np((int) si->ssi_signo));
        return 0;
}

/* The one timer: the registration deadline, then "no reply from the driver
 * for timeout_ms" (fate sharing: no executor outlives its driver). */
static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Executor *e = userdata;
        usec_t due;

        (void) usec;
        switch (e->state) {
        case EXECUTOR_REGISTERING:
                due = e->register_deadline;
                if (now_mono_usec() >= due) {
                        executor_exit(e, SPARK_EXIT_DRIVER_UNREACHABLE, LOG_ERR,
                                      "Driver %s unreachable: could not register within %llu s, exiting.",
                                      e->args.driver_url, (unsigned long long) (EXECUTOR_REGISTER_TIMEOUT_USEC / USEC_PER_SEC));
                        return 0;
                }
                break;
        case EXECUTOR_POLLING:
                due = e->last_reply + (usec_t) e->timeout_ms * USEC_PER_MSEC;
                if (now_mono_usec() >= due) {
                        executor_exit(e, SPARK_EXIT_DRIVER_UNREACHABLE, LOG_ERR,
                                      "Driver %s unreachable: no reply for %d ms, exiting.", e->args.driver_url,
                                      e->timeout_ms);
                        return 0;
                }
                break;
        default:
                return 0;
        }
        (void) sd_event_source_set_time(s, due);
        (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

static int on_register_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Executor *e = userdata;
        int r;

        (void) s;
        (void) usec;
        if (e->state != EXECUTOR_REGISTERING)
                return 0;
        /* the task channel took too long: nng, and the channel may still
         * take the polls once it is up */
        e->register_awaits_channel = false;
        if (e->slots[0].busy)
                /* a poll is still out there (registering again after a
                 * driver restart): the registration goes when it is back */
                return executor_schedule_register_retry(e), 0;
        r = executor_send_register(e);
        if (r < 0)
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Failed to send the registration: %s", strerror(-r));
        return 0;
}

int executor_schedule_register_retry(Executor *e) {
        return executor_schedule_register_in(e, EXECUTOR_REGISTER_RETRY_USEC);
}

int executor_schedule_register_in(Executor *e, usec_t delay) {
        usec_t when = now_mono_usec() + delay;

        if (e->retry_source) {
                (void) sd_event_source_set_time(e->retry_source, when);
                return sd_event_source_set_enabled(e->retry_source, SD_EVENT_ONESHOT);
        }
        return sd_event_add_time(e->event, &e->retry_source, CLOCK_MONOTONIC, when, USEC_PER_MSEC, on_register_retry,
                                 e);
}

void executor_arm_deadline(Executor *e) {
        usec_t due = e->state == EXECUTOR_REGISTERING ? e->register_deadline
                                                      : e->last_reply + (usec_t) e->timeout_ms * USEC_PER_MSEC;

        (void) sd_event_source_set_time(e->deadline_source, due);
        (void) sd_event_source_set_enabled(e->deadline_source, SD_EVENT_ONESHOT);
}

int executor_new(ExecutorArgs *args, Executor **ret) {
        _cleanup_(executor_freep) Executor *e = NULL;
        sigset_t mask;
        int r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return log_oom();
        e->args = *args;
        *args = (ExecutorArgs) {};
        e->state = EXECUTOR_REGISTERING;
        e->timeout_ms = EXECUTOR_DEFAULT_TIMEOUT_MS;
        e->max_result_bytes = EXECUTOR_DEFAULT_MAX_RESULT_BYTES;
        e->channel_fd = -1;
        pthread_mutex_init(&e->nng_lock, NULL);
        for (unsigned i = 0; i < EXECUTOR_POLL_SLOTS; i++) {
                e->slots[i].executor = e;
                loop_queue_item_init(&e->slots[i].item, executor_slot_done, &e->slots[i]);
        }
        loop_queue_item_init(&e->results_item, executor_results_ready, e);
        atomic_init(&e->results_item_queued, false);

        if (gethostname(e->host, sizeof(e->host) - 1) < 0)
                snprintf(e->host, sizeof(e->host), "localhost");
        r = executor_unit_name(e->unit, sizeof(e->unit), e->args.app_id, e->args.executor_id);
        if (r < 0)
                return log_error_errno(r, "Failed to form the unit name: %m");

        /* Before any thread exists (nng's, ours), so that every thread
         * inherits the mask and sd-event gets the signals. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        (void) signal(SIGPIPE, SIG_IGN);

        r = sd_event_new(&e->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");
        r = sd_event_add_signal(e->event, &e->sigterm_source, SIGTERM, on_signal, e);
        if (r >= 0)
                r = sd_event_add_signal(e->event, &e->sigint_source, SIGINT, on_signal, e);
        if (r < 0)
                return log_error_errno(r, "Failed to watch signals: %m");
        /* Accuracy 1 ms: sd-event's default (250 ms) would make the fate
         * timeout late by up to that much. */
        r = sd_event_add_time(e->event, &e->deadline_source, CLOCK_MONOTONIC, UINT64_MAX, USEC_PER_MSEC, on_deadline,
                              e);
        if (r < 0)
                return log_error_errno(r, "Failed to add a timer: %m");
        r = loop_queue_new(e->event, &e->queue);
        if (r < 0)
                return log_error_errno(r, "Failed to create the loop queue: %m");

        r = library_cache_new(e->args.work_dir, executor_fetch_library, e, &e->libs);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the library cache: %m");

        *ret = TAKE_PTR(e);
        return 0;
}

static void executor_stop(Executor *e) {
        unsigned busy;

        e->state = EXECUTOR_STOPPING;
        /* The cleanup starts here, not in main(): nng_close() (in
         * executor_nng_close() below) is where nng 1.5 can hang (seen after
         * a SIGSTOP/SIGCONT), and an executor must not outlive its driver
         * because of it. */
        daemon_exit_guard_within(e->exit_status, EXECUTOR_EXIT_GRACE_SEC);
        /* Closing the socket first ends a library fetch a task thread may be
         * waiting in. */
        executor_nng_close(e);
        e->standby = loop_standby_free(e->standby);
        busy = task_runner_stop(e->runner, EXECUTOR_STOP_WAIT_USEC);
        if (busy > 0) {
                /* A function task cannot be interrupted; systemd's
                 * KillMode=control-group would end it anyway. */
                log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e), "Not waiting for %u running task(s).", busy);
                fflush(stdout);
                fflush(stderr);
                _exit(e->exit_status);
        }
        e->runner = task_runner_free(e->runner);
}

/* One turn of the loop, on whichever thread runs it; false once it ended
 * (or failed: the main thread finds out). */
static bool executor_loop_turn(void *userdata) {
        Executor *e = userdata;

        if (sd_event_run(e->event, UINT64_MAX) >= 0 && sd_event_get_state(e->event) != SD_EVENT_FINISHED)
                return true;
        /* Ended while the main thread runs a task: it stops us once the
         * task returns.  A function that does not return is not waited
         * for, as executor_stop() does not wait for a task thread's. */
        if (!loop_standby_wait_reclaim(e->standby, EXECUTOR_STOP_WAIT_USEC)) {
                log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e), "Not waiting for the running task.");
                fflush(stdout);
                fflush(stderr);
                _exit(e->exit_status);
        }
        return false;
}

/* sd_event_loop(), with a task run between two turns when one is waiting
 * for the main thread. */
static int executor_loop(Executor *e) {
        int r, code = 0;

        for (;;) {
                r = sd_event_run(e->event, UINT64_MAX);
                if (r < 0)
                        break;
                if (sd_event_get_state(e->event) == SD_EVENT_FINISHED)
                        break;
                executor_run_here(e);
                if (sd_event_get_state(e->event) == SD_EVENT_FINISHED)
                        break;
        }
        /* a task kept for us is the runner's to release */
        if (e->run_here)
                task_runner_submit(e->runner, TAKE_PTR(e->run_here), 1);
        if (r < 0)
                return r;
        r = sd_event_get_exit_code(e->event, &code);
        return r < 0 ? r : code;
}

int executor_run(Executor *e) {
        int r;

        r = executor_load_credentials(e);
        if (r < 0)
                return EXIT_FAILURE;
        e->register_deadline = now_mono_usec() + EXECUTOR_REGISTER_TIMEOUT_USEC;
        executor_arm_deadline(e);
        /* With the driver's task channel, the registration goes there once
         * it is up, and nng is not opened at all unless the channel fails
         * (executor-channel.c, executor-nng.c). */
        if (e->args.driver_channel_port > 0) {
                r = executor_channel_open(e, (uint16_t) e->args.driver_channel_port);
                if (r < 0)
                        log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e),
                                   "Cannot open the task channel to driver %s (port %d): %s; registering over nng.",
                                   e->args.driver_url, e->args.driver_channel_port, strerror(-r));
                else if (e->channel_fd >= 0)
                        e->register_awaits_channel = !executor_channel_up(e);
                /* a port that drops what is sent to it (a firewall) would
                 * hold the registration for the kernel's connect timeout */
                if (e->register_awaits_channel && executor_schedule_register_in(e, EXECUTOR_CHANNEL_WAIT_USEC) < 0)
                        e->register_awaits_channel = false;
        }
        if (!e->register_awaits_channel && e->state == EXECUTOR_REGISTERING && !e->slots[0].busy) {
                r = executor_send_register(e);
                if (r < 0)
                        return log_error_errno(r, "Failed to send the registration: %m"), EXIT_FAILURE;
        }
        /* The task threads start while the registration is on its way: no
         * task can come before its reply, which the loop below handles. */
        r = task_runner_new((unsigned) e->args.cores, executor_run_task, executor_notify_results, e, &e->runner);
        if (r < 0)
                return log_error_errno(r, "Failed to start %d task threads: %m", e->args.cores), EXIT_FAILURE;

        e->main_thread = pthread_self();
        r = loop_standby_new(executor_loop_turn, executor_notify_results, e, EXECUTOR_RUN_HERE_STANDBY_USEC,
                             &e->standby);
        if (r < 0)
                /* every task goes to the task threads */
                log_struct(LOG_WARNING, EXECUTOR_LOG_FIELDS(e), "Cannot start the loop's standby thread: %s",
                           strerror(-r));
        r = executor_loop(e);
        if (r < 0 && e->state != EXECUTOR_STOPPING)
                return log_error_errno(r, "Event loop failed: %m"), EXIT_FAILURE;

        log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e),
                   "Executor %d of %s done: %" PRIu64 " tasks received, %" PRIu64 " results sent in %" PRIu64
                   " polls, %" PRIu64 " kills.",
                   e->args.executor_id, e->args.app_id, e->n_tasks_received, e->n_results_sent, e->n_polls,
                   e->n_kills);
        executor_stop(e);
        return e->exit_status;
}

Executor *executor_free(Executor *e) {
        if (!e)
                return NULL;

        /* Order matters: the task threads push to the queue and fetch over
         * the socket; nng's callbacks push to the queue. */
        e->standby = loop_standby_free(e->standby);
        if (e->runner) {
                (void) task_runner_stop(e->runner, UINT64_MAX);
                e->runner = task_runner_free(e->runner);
        }
        executor_nng_close(e);
        e->state = EXECUTOR_STOPPING; /* the channel's polls end quietly */
        executor_channel_close(e, 0);
        executor_slots_close(e);
        e->queue = loop_queue_free(e->queue);
        e->libs = library_cache_free(e->libs);
        sd_event_source_disable_unref(e->sigterm_source);
        sd_event_source_disable_unref(e->sigint_source);
        sd_event_source_disable_unref(e->deadline_source);
        sd_event_source_disable_unref(e->retry_source);
        sd_event_source_disable_unref(e->repoll_source);
        sd_event_source_disable_unref(e->hold_source);
        sd_event_source_disable_unref(e->resend_source);
        sd_event_unref(e->event);
        free(e->result_buf);
        free(e->result_ptrs);
        executor_args_done(&e->args);
        explicit_bzero(e->secret, sizeof(e->secret));
        tls_context_free(e->channel_tls_context);
        free(e->ca_file);
        pthread_mutex_destroy(&e->nng_lock);
        free(e);
        return NULL;
}
