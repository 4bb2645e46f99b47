/* The executor's side of the pull protocol (docs/DESIGN.md §4): RegisterExecutor,
 * then Polls on at most two request contexts — one that the driver may park
 * until it has work (or heartbeat_ms passes), and one that carries results
 * as soon as they are there while the first is parked. */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "alloc-util.h"
#include "executor.h"
#include "nng-util.h"

static void slot_aio_cb(void *arg) {
        PollSlot *s = arg;
        int rv = nng_aio_result(s->aio);

        if (s->phase == POLL_SLOT_SENDING) {
                if (rv != 0) {
                        nng_msg *m = nng_aio_get_msg(s->aio);

                        if (m)
                                nng_msg_free(m);
                        s->error = nng_errno(rv);
                        goto done;
                }
                s->phase = POLL_SLOT_RECEIVING;
                nng_ctx_recv(s->ctx, s->aio);
                return;
        }
        if (rv != 0)
                s->error = nng_errno(rv);
        else
                s->reply = nng_aio_get_msg(s->aio);
done:
        s->phase = POLL_SLOT_DONE;
        loop_queue_push_item(s->executor->queue, &s->item);
}

int executor_slots_open(Executor *e) {
        for (unsigned i = 0; i < EXECUTOR_POLL_SLOTS; i++) {
                PollSlot *s = &e->slots[i];
                int r;

                r = nng_errno(nng_aio_alloc(&s->aio, slot_aio_cb, s));
                if (r < 0)
                        return r;
                r = nng_errno(nng_ctx_open(&s->ctx, e->sock));
                if (r < 0)
                        return r;
                s->ctx_open = true;
        }
        return 0;
}

void executor_slots_close(Executor *e) {
        for (unsigned i = 0; i < EXECUTOR_POLL_SLOTS; i++) {
                PollSlot *s = &e->slots[i];

                if (s->aio) {
                        nng_aio_stop(s->aio); /* waits for the callback */
                        nng_aio_free(s->aio);
                        s->aio = NULL;
                }
                if (s->ctx_open) {
                        (void) nng_ctx_close(s->ctx);
                        s->ctx_open = false;
                }
                if (s->reply) {
                        nng_msg_free(s->reply);
                        s->reply = NULL;
                }
        }
}

static int slot_send(PollSlot *s, Envelope *env) {
        nng_msg *m;
        int r;

        /* on the task channel once it is up; over nng before that, after it
         * failed, or without one */
        if (executor_channel_up(s->executor))
                return executor_channel_send(s->executor, s, env);
        s->on_channel = false;
        r = executor_nng_open(s->executor);
        if (r < 0)
                return r;
        r = nng_util_msg_from_envelope(env, &m);
        if (r < 0)
                return r;
        s->busy = true;
        s->phase = POLL_SLOT_SENDING;
        s->error = 0;
        s->reply = NULL;
        nng_aio_set_msg(s->aio, m);
        nng_ctx_send(s->ctx, s->aio);
        return 0;
}

int executor_send_register(Executor *e) {
        Spark__RegisterExecutor re = SPARK__REGISTER_EXECUTOR__INIT;
        Envelope env = ENVELOPE_INIT;

        re.app_id = e->args.app_id;
        re.executor_id = e->args.executor_id;
        re.host = e->host;
        re.cores = e->args.cores;
        re.pid = getpid();
        re.unit = e->unit;
        re.worker_id = e->args.worker_id;
        re.secret = (ProtobufCBinaryData) { .len = e->secret_len, .data = e->secret };
        ENVELOPE_SET(&env, REGISTER_EXECUTOR, register_executor, &re);
        return slot_send(&e->slots[0], &env);
}

static int result_buf_reserve(Executor *e, size_t n) {
        if (GREEDY_REALLOC(e->result_buf, e->result_buf_allocated, n) < 0 ||
            GREEDY_REALLOC(e->result_ptrs, e->result_ptrs_allocated, n) < 0)
                return -ENOMEM;
        return 0;
}

usec_t executor_result_hold_usec(usec_t avg_run_usec, size_t queued, unsigned cores) {
        usec_t hold;

        if (queued == 0 || cores == 0)
                return 0;
        /* long enough for the next task on the core to end */
        hold = MIN(avg_run_usec + avg_run_usec / 4, (usec_t) EXECUTOR_RESULT_HOLD_MAX_USEC);
        /* results of shorter tasks share polls already: they end while
         * the last poll is on its way */
        if (hold < EXECUTOR_REPOLL_DELAY_USEC)
                return 0;
        /* the driver sends more tasks only once it has the results, so
         * the queue must keep every core busy meanwhile, with room */
        if ((uint64_t) queued * avg_run_usec < 2 * hold * cores)
                return 0;
        return hold;
}

static void release_results(Task *results) {
        while (results) {
                Task *t = results;

                results = t->next;
                task_release(t);
        }
}

/* Sends one Poll with these results on s, and releases them (the message
 * holds a copy; should sending fail, we are exiting anyway).  Free slots =
 * cores + prefetch - tasks held (queued + running). */
static int send_poll(Executor *e, PollSlot *s, Task *results, size_t n, size_t held) {
        Spark__Poll p = SPARK__POLL__INIT;
        Envelope env = ENVELOPE_INIT;
        int64_t capacity = (int64_t) e->args.cores + e->prefetch;
        size_t i = 0;
        int r;

        r = result_buf_reserve(e, n);
        if (r < 0) {
                release_results(results);
                return r;
        }
        for (Task *t = results; t; t = t->next, i++) {
                Spark__TaskResult *tr = &e->result_buf[i];

                e->avg_run_usec = e->avg_run_usec > 0 ? (7 * e->avg_run_usec + t->run_usec) / 8 : t->run_usec;

                *tr = (Spark__TaskResult) SPARK__TASK_RESULT__INIT;
                tr->job_id = t->launch->job_id;
                tr->index = t->launch->index;
                tr->attempt = t->launch->attempt;
                tr->status = t->outcome.status;
                tr->exit_code = t->outcome.exit_code;
                tr->output.data = t->outcome.output;
                tr->output.len = t->outcome.output_len;
                tr->run_us = (int64_t) t->run_usec;
                if (t->outcome.error)
                        tr->error = t->outcome.error;
                e->result_ptrs[i] = tr;
        }

        p.app_id = e->args.app_id;
        p.executor_id = e->args.executor_id;
        p.results = e->result_ptrs;
        p.n_results = n;
        p.free_slots = (int32_t) MIN(MAX(capacity - (int64_t) held, (int64_t) 0), (int64_t) INT32_MAX);
        p.seq = ++e->seq;
        p.secret = (ProtobufCBinaryData) { .len = e->secret_len, .data = e->secret };
        ENVELOPE_SET(&env, POLL, poll, &p);

        r = slot_send(s, &env);
        release_results(results);
        if (r < 0)
                return r;
        s->seq = p.seq;
        s->n_results = n;
        if (n > 0 && e->results_held_since > 0) {
                e->results_held_since = 0;
                if (e->hold_source)
                        (void) sd_event_source_set_enabled(e->hold_source, SD_EVENT_OFF);
        }
        e->n_polls++;
        e->n_results_sent += n;
        /* This poll asks for work too: a delayed one would find it out and
         * do nothing (executor_pump_soon()), a wake-up per task for naught. */
        if (e->repoll_source)
                (void) sd_event_source_set_enabled(e->repoll_source, SD_EVENT_OFF);
        return 0;
}

/* A timer that pumps: the end of a result's hold, the delayed poll. */
static int on_pump_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s;
        (void) usec;
        executor_pump(userdata);
        return 0;
}

/* Arms *source (made at the first use) to pump once at when. */
static int pump_timer_arm(Executor *e, sd_event_source **source, usec_t when) {
        int r;

        if (!*source)
                return sd_event_add_time(e->event, source, CLOCK_MONOTONIC, when, 1, on_pump_timer, e);
        r = sd_event_source_set_time(*source, when);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(*source, SD_EVENT_ONESHOT);
}

/* Whether the results waiting stay with us a moment longer, for the next
 * ones to share their poll (executor_result_hold_usec()); arms the timer
 * that ends the hold.  Only while another poll is out, which the driver
 * can answer with work. */
static bool executor_hold_results(Executor *e) {
        bool waiting = false;
        size_t queued = task_runner_queued(e->runner, &waiting);
        usec_t hold, now, until;

        if (!waiting)
                return false;
        hold = executor_result_hold_usec(e->avg_run_usec, queued, (unsigned) MAX(e->args.cores, 0));
        if (hold == 0)
                return false;
        now = now_mono_usec();
        if (e->results_held_since == 0)
                e->results_held_since = now;
        until = e->results_held_since + hold;
        if (now >= until)
                return false;
        return pump_timer_arm(e, &e->hold_source, until) >= 0; /* without a timer they go now */
}

void executor_pump(Executor *e) {
        if (e->state != EXECUTOR_POLLING)
                return;

        for (;;) {
                PollSlot *idle = NULL;
                unsigned busy = 0;
                size_t n, held;
                Task *results;
                int r;

                for (unsigned i = 0; i < EXECUTOR_POLL_SLOTS; i++) {
                        if (e->slots[i].busy)
                                busy++;
                        else if (!idle)
                                idle = &e->slots[i];
                }
                if (!idle)
                        return;
                if (busy > 0 && executor_hold_results(e))
                        return;

                results = task_runner_take_results(e->runner, EXECUTOR_MAX_POLL_RESULTS,
                                                   MIN(e->max_result_bytes, EXECUTOR_MAX_POLL_RESULT_BYTES), &n,
                                                   &held);
                /* With a poll out already, a second one is only worth it to
                 * carry results (the first may be parked at the driver). */
                if (busy > 0 && n == 0)
                        return;

                r = send_poll(e, idle, results, n, held);
                if (r < 0) {
                        executor_exit(e, EXIT_FAILURE, LOG_ERR, "Failed to send a poll: %s", strerror(-r));
                        return;
                }
        }
}

/* After a reply that brought tasks: poll again a moment later rather than
 * at once.  A task that ends within the delay sends its result on the poll
 * that also asks for work (one message, where an immediate poll would have
 * made it two, each answered), and the driver does not handle a poll
 * while the task runs beside it; a longer task still has a poll out at the
 * driver long before any heartbeat timeout. */
static void executor_pump_soon(Executor *e) {
        if (pump_timer_arm(e, &e->repoll_source, now_mono_usec() + EXECUTOR_REPOLL_DELAY_USEC) < 0)
                executor_pump(e);
}

void executor_results_ready(void *userdata, bool discard) {
        Executor *e = userdata;

        atomic_store(&e->results_item_queued, false);
        if (!discard)
                executor_pump(e);
}

static void handle_register_reply(Executor *e, Envelope *env) {
        const Spark__RegisterExecutorReply *rr;
        int64_t max_result;
        int r;

        if (env->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                const Spark__Error *err = env->error;

                if (err->code == -EAGAIN) {
                        log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e), "Driver not ready to register us (%s), retrying.",
                                   strna(err->message));
                        if (executor_schedule_register_retry(e) < 0)
                                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Failed to schedule a retry.");
                        return;
                }
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Driver %s refused executor %d of %s: %s",
                              e->args.driver_url, e->args.executor_id, e->args.app_id, strna(err->message));
                return;
        }
        if (env->body_case != SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR_REPLY) {
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Driver answered the registration with %s, exiting.",
                              envelope_body_name(env));
                return;
        }

        rr = env->register_executor_reply;
        e->heartbeat_ms = rr->heartbeat_ms;
        if (rr->heartbeat_ms > 0)
                e->timeout_ms = (int) MIN(MAX((int64_t) rr->heartbeat_ms * EXECUTOR_MISSED_HEARTBEATS,
                                              (int64_t) EXECUTOR_MIN_TIMEOUT_MS),
                                          (int64_t) INT32_MAX);
        else
                e->timeout_ms = EXECUTOR_DEFAULT_TIMEOUT_MS;
        e->prefetch = rr->prefetch < 0 ? 0 : MIN(rr->prefetch, EXECUTOR_PREFETCH_MAX);
        max_result = rr->max_result_bytes > 0 ? rr->max_result_bytes : EXECUTOR_DEFAULT_MAX_RESULT_BYTES;
        e->max_result_bytes = (size_t) MIN(max_result, (int64_t) (SIZE_MAX / 4));
        e->durable_driver = rr->durable_driver;
        r = executor_channel_open(e, (uint16_t) MIN(rr->task_channel_port, (uint32_t) UINT16_MAX));
        if (r < 0)
                log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e),
                           "Cannot open the task channel to driver %s (port %u): %s; polling over nng.",
                           e->args.driver_url, (unsigned) rr->task_channel_port, strerror(-r));
        /* a driver that journals its jobs comes back after a restart,
         * which takes longer than a few heartbeats */
        if (e->durable_driver)
                e->timeout_ms = MAX(e->timeout_ms, EXECUTOR_DURABLE_DRIVER_TIMEOUT_MS);

        e->state = EXECUTOR_POLLING;
        e->last_reply = now_mono_usec();
        executor_arm_deadline(e);
        log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e, .message_id = SPARK_MESSAGE_EXECUTOR_REGISTERED),
                   "Registered with driver %s as executor %d of %s on %s: %d cores, heartbeat %d ms, prefetch %d, "
                   "max result %zu bytes.",
                   e->args.driver_url, e->args.executor_id, e->args.app_id, e->host, e->args.cores, e->heartbeat_ms,
                   e->prefetch, e->max_result_bytes);
        executor_pump(e);
}

/* Whether the first task of a batch goes to the main thread: a function
 * task, when tasks have been short, on a loop that runs there now, with no
 * kill in the same reply (which must find its task with the runner). */
static bool may_run_here(const Executor *e, const TaskBatch *batch, const Spark__PollReply *pr) {
        return batch->n_tasks > 0 && pr->n_kills == 0 && !e->run_here && e->standby &&
               batch->tasks[0].launch->kind == SPARK__TASK_KIND__TASK_FUNCTION &&
               e->avg_run_usec < EXECUTOR_RUN_HERE_MAX_USEC && pthread_equal(pthread_self(), e->main_thread);
}

void executor_run_here(Executor *e) {
        Task *t = TAKE_PTR(e->run_here);
        bool ran;

        if (!t)
                return;
        loop_standby_lend(e->standby);
        ran = task_runner_run_here(e->runner, t);
        (void) loop_standby_reclaim(e->standby);
        if (ran)
                executor_pump(e); /* its result goes now */
        else
                task_runner_submit(e->runner, t, 1);
}

/* Takes env. */
static void handle_poll_reply(Executor *e, Envelope *env) {
        const Spark__PollReply *pr;
        TaskBatch *batch = NULL;
        unsigned n_stopped;
        int r;

        if (env->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Driver %s refused our poll: %s", e->args.driver_url,
                              strna(env->error->message));
                envelope_free(env);
                return;
        }
        if (env->body_case != SPARK__ENVELOPE__BODY_POLL_REPLY) {
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Driver answered a poll with %s, exiting.",
                              envelope_body_name(env));
                envelope_free(env);
                return;
        }
        pr = env->poll_reply;
        if (pr->reregister) {
                /* Our driver restarted from its state directory: it takes
                 * us back once we register again. */
                log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e),
                           "Driver %s does not know executor %d (it restarted); registering again.",
                           e->args.driver_url, e->args.executor_id);
                envelope_free(env);
                /* The tasks it gave us before are not its tasks any more: it
                 * runs again those it has no result of, and would drop what
                 * they return.  Stop them, to take its tasks at once. */
                n_stopped = task_runner_kill(e->runner, NULL, -1);
                if (n_stopped > 0)
                        log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e),
                                   "Stopped %u tasks of the driver from before its restart.", n_stopped);
                e->state = EXECUTOR_REGISTERING;
                e->register_deadline = now_mono_usec() + EXECUTOR_REGISTER_TIMEOUT_USEC;
                executor_arm_deadline(e);
                if (executor_schedule_register_retry(e) < 0)
                        executor_exit(e, EXIT_FAILURE, LOG_ERR, "Failed to schedule the registration.");
                return;
        }
        if (pr->shutdown) {
                executor_exit(e, EXIT_SUCCESS, LOG_INFO, "Driver asked executor %d to shut down: %s",
                              e->args.executor_id, isempty(pr->reason) ? "no reason given" : pr->reason);
                envelope_free(env);
                return;
        }

        if (pr->n_tasks > 0) {
                r = task_batch_new(env, &batch);
                if (r < 0) {
                        executor_exit(e, EXIT_FAILURE, LOG_ERR, "Cannot queue %zu tasks: %s", pr->n_tasks,
                                      strerror(-r));
                        envelope_free(env);
                        return;
                }
                /* env now belongs to the batch; pr stays valid while any of
                 * its tasks lives, and none is released before we return. */
                e->n_tasks_received += batch->n_tasks;
                if (may_run_here(e, batch, pr)) {
                        /* the main thread takes it once this turn ends */
                        e->run_here = &batch->tasks[0];
                        task_runner_submit(e->runner, batch->tasks + 1, batch->n_tasks - 1);
                } else
                        task_runner_submit(e->runner, batch->tasks, batch->n_tasks);
        }

        /* After the launches, so a kill in the same reply finds its task. */
        for (size_t i = 0; i < pr->n_kills; i++) {
                const Spark__TaskKill *k = pr->kills[i];
                unsigned n = task_runner_kill(e->runner, k->job_id, k->index);

                e->n_kills++;
                if (k->index < 0)
                        log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e, .job_id = k->job_id),
                                   "Killing every task of %s: %u here.", strna(k->job_id), n);
                else
                        log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e, .job_id = k->job_id),
                                   "Killing task %d of %s%s.", k->index, strna(k->job_id),
                                   n > 0 ? "" : " (not here)");
        }

        if (batch) {
                executor_pump_soon(e);
                return;
        }
        envelope_free(env);
        executor_pump(e);
}

static int on_resend(sd_event_source *source, uint64_t usec, void *userdata) {
        Executor *e = userdata;
        (void) usec;

        if (!e->reconnecting || e->state == EXECUTOR_STOPPING)
                return 0;
        if (++e->resends % EXECUTOR_REDIAL_EVERY_RESENDS == 0) {
                log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e),
                           "No answer from driver %s for %u s since the connection dropped: dialing again.",
                           e->args.driver_url, (unsigned) (e->resends * EXECUTOR_RESEND_AFTER_USEC / USEC_PER_SEC));
                if (executor_redial(e) < 0)
                        return 0; /* the deadline ends us */
        }
        /* Each one ends with ECANCELED and is sent again (slot_done). */
        for (unsigned i = 0; i < EXECUTOR_POLL_SLOTS; i++)
                if (e->slots[i].busy && !e->slots[i].on_channel) {
                        log_debug("No answer from driver %s since the connection dropped: sending again",
                                  e->args.driver_url);
                        nng_aio_cancel(e->slots[i].aio);
                }
        (void) sd_event_source_set_time(source, now_mono_usec() + EXECUTOR_RESEND_AFTER_USEC);
        (void) sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
        return 0;
}

/* The connection to a durable driver dropped: until an answer comes, what
 * is out is sent again every EXECUTOR_RESEND_AFTER_USEC. */
static void watch_reconnect(Executor *e) {
        usec_t when = now_mono_usec() + EXECUTOR_RESEND_AFTER_USEC;
        int enabled = SD_EVENT_OFF;

        if (!e->reconnecting)
                e->resends = 0;
        e->reconnecting = true;
        if (e->resend_source) {
                if (sd_event_source_get_enabled(e->resend_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                        return;
                (void) sd_event_source_set_time(e->resend_source, when);
                (void) sd_event_source_set_enabled(e->resend_source, SD_EVENT_ONESHOT);
        } else
                (void) sd_event_add_time(e->event, &e->resend_source, CLOCK_MONOTONIC, when, USEC_PER_MSEC,
                                         on_resend, e);
}

void executor_slot_done(void *userdata, bool discard) {
        PollSlot *s = userdata;
        _cleanup_nng_msg_ nng_msg *m = TAKE_PTR(s->reply);

        if (discard) {
                s->busy = false;
                s->phase = POLL_SLOT_IDLE;
                return;
        }
        executor_slot_finish(s, s->error < 0 ? s->error : m ? 0 : -EIO, m ? nng_msg_body(m) : NULL,
                             m ? nng_msg_len(m) : 0);
}

/* A registration sent on the task channel found no driver that takes it
 * there: the port may be stale (a driver that restarted elsewhere, and
 * another process on it since), and nng is the way that always works. */
static void register_over_nng(Executor *e, const char *why) {
        int r;

        log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e),
                   "Cannot register on the task channel of driver %s (%s); registering over nng.", e->args.driver_url,
                   why);
        executor_channel_close(e, 0);
        r = executor_send_register(e);
        if (r < 0)
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Failed to send the registration: %s", strerror(-r));
}

void executor_slot_finish(PollSlot *s, int error, const void *data, size_t len) {
        Executor *e = s->executor;
        bool on_channel = s->on_channel;
        Envelope *env = NULL;
        int r;

        s->busy = false;
        s->on_channel = false;
        s->phase = POLL_SLOT_IDLE;
        s->error = error;
        if (e->state == EXECUTOR_STOPPING)
                return;
        if (on_channel && e->state == EXECUTOR_REGISTERING && s == &e->slots[0] && error < 0) {
                register_over_nng(e, strerror(-error));
                return;
        }

        if (s->error < 0 && e->durable_driver && s->error != -EMSGSIZE && s->error != -EPROTO) {
                /* The connection dropped: a driver with a state directory
                 * is restarting, and takes us back (reregister).  What this
                 * request carried is lost; the restarted driver runs again
                 * what it has no result of.  The deadline decides when the
                 * driver is gone for good. */
                if (s->error != -ECANCELED) /* ours: sent again (on_resend) */
                        log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e),
                                   "Lost the connection to driver %s (%s); waiting for it to come back.",
                                   e->args.driver_url, strerror(-s->error));
                watch_reconnect(e);
                if (e->state == EXECUTOR_REGISTERING)
                        (void) executor_schedule_register_retry(e);
                else
                        executor_pump_soon(e);
                return;
        }
        if (s->error < 0) {
                executor_exit(e, SPARK_EXIT_DRIVER_UNREACHABLE, LOG_ERR, "Lost the driver %s: %s", e->args.driver_url,
                              strerror(-s->error));
                return;
        }
        r = envelope_decode(data, len, EXECUTOR_MAX_MESSAGE_BYTES, &env);
        if (r < 0) {
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Cannot decode the driver's reply: %s", strerror(-r));
                return;
        }
        e->last_reply = now_mono_usec();
        if (e->reconnecting) {
                e->reconnecting = false;
                (void) sd_event_source_set_enabled(e->resend_source, SD_EVENT_OFF);
        }

        if (e->state == EXECUTOR_REGISTERING && env->body_case == SPARK__ENVELOPE__BODY_POLL_REPLY) {
                /* a poll that was out when the driver asked us to register
                 * again: what it brings is from before */
                envelope_free(env);
                return;
        }
        if (e->state == EXECUTOR_REGISTERING && on_channel && env->body_case == SPARK__ENVELOPE__BODY_ERROR &&
            env->error->code != -EAGAIN) {
                register_over_nng(e, strna(env->error->message));
                envelope_free(env);
                return;
        }
        if (e->state == EXECUTOR_REGISTERING) {
                handle_register_reply(e, env);
                envelope_free(env);
        } else
                handle_poll_reply(e, env);
}
