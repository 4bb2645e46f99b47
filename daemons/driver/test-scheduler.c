/* The driver's task scheduler, without sockets: offers, cores, executor
 * loss, delay scheduling, retries, exactly-once results, kills, FIFO, and
 * a throughput run of a million tasks. */
#include <check.h>
#include <stdio.h>

#include "check-run.h"
#include "macro.h"
#include "scheduler.h"
#include "time-util.h"

#define SEC USEC_PER_SEC
#define T0 (1000 * SEC)

static Scheduler *new_scheduler(unsigned max_failures, usec_t locality_wait) {
        SchedulerConfig cfg;
        Scheduler *s = NULL;

        scheduler_config_default(&cfg);
        cfg.task_max_failures = max_failures;
        cfg.locality_wait_usec = locality_wait;
        ck_assert_int_eq(scheduler_new(&cfg, &s), 0);
        return s;
}

static Job *submit(Scheduler *s, const char *id, unsigned n) {
        Job *job = NULL;

        ck_assert_int_eq(scheduler_submit_job(s, id, n, NULL, 0, T0, &job), 0);
        ck_assert_ptr_nonnull(job);
        return job;
}

static int offer(Scheduler *s, int executor, int slots, usec_t now, TaskAssignment *out) {
        return scheduler_offer(s, executor, slots, now, out, 64);
}

static int finish(Scheduler *s, const TaskAssignment *a, bool ok, const char *error) {
        return scheduler_task_finished(s, a->job, a->index, a->attempt, a->executor_id, ok, 0, error, T0);
}

static TaskInfo info(const Job *job, unsigned index) {
        TaskInfo ti;

        ck_assert_int_eq(scheduler_task_info(job, index, &ti), 0);
        return ti;
}

/* The job's counts are want, every one of them (a count not given is 0). */
static void check_counts(const Job *job, JobCounts want) {
        JobCounts c;

        scheduler_job_counts(job, &c);
        ck_assert_uint_eq(c.tasks, want.tasks);
        ck_assert_uint_eq(c.pending, want.pending);
        ck_assert_uint_eq(c.running, want.running);
        ck_assert_uint_eq(c.succeeded, want.succeeded);
        ck_assert_uint_eq(c.failed, want.failed);
        ck_assert_uint_eq(c.killed, want.killed);
        ck_assert_uint_eq(c.in_flight, want.in_flight);
}

/* Preferred hosts of up to four tasks: host-b. */
static const char *const host_b[] = { "host-b", NULL };
static const char *const *const prefer_host_b[] = { host_b, host_b, host_b, host_b };

START_TEST(test_offer_fills_free_cores) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 4), 0);
        job = submit(s, "job-1", 10);
        ck_assert_uint_eq(scheduler_n_pending(s), 10);

        /* The executor asks for more than it has: it gets its free cores. */
        ck_assert_int_eq(offer(s, 1, 100, T0, a), 4);
        for (int i = 0; i < 4; i++) {
                ck_assert_ptr_eq(a[i].job, job);
                ck_assert_uint_eq(a[i].index, (unsigned) i);
                ck_assert_uint_eq(a[i].attempt, 1);
                ck_assert_int_eq(a[i].executor_id, 1);
                ck_assert_int_eq(info(job, i).state, TASK_RUNNING);
        }
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 0);
        ck_assert_int_eq(offer(s, 1, 4, T0, a), 0);

        /* A second executor registering is offered its cores, and the
         * caller's free_slots caps an offer. */
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 3), 0);
        ck_assert_int_eq(offer(s, 2, 2, T0, a), 2);
        ck_assert_uint_eq(a[0].index, 4);
        ck_assert_uint_eq(a[1].index, 5);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 2), 1);
        ck_assert_int_eq(scheduler_executor_running(s, 2, NULL, 0), 2);
        ck_assert_int_eq(scheduler_executor_running(s, 1, a, 64), 4);

        ck_assert_int_eq(offer(s, 99, 1, T0, a), -ENOENT);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 99), -ENOENT);
        ck_assert_uint_eq(scheduler_n_pending(s), 4);
        scheduler_free(s);
}
END_TEST

/* A draining executor gets no task; what it held finishes; its removal
 * re-queues without a failure, even with task_max_failures = 1. */
START_TEST(test_draining_executor) {
        Scheduler *s = new_scheduler(1, 0);
        TaskAssignment a[64], b[64];
        const char *errors[4];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 2), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 2), 0);
        job = submit(s, "job-1", 6);
        ck_assert_int_eq(offer(s, 1, 2, T0, a), 2);   /* 0, 1 */
        ck_assert_int_eq(scheduler_set_executor_draining(s, 1, true), 2);
        ck_assert_int_eq(scheduler_set_executor_draining(s, 9, true), -ENOENT);
        ck_assert_int_eq(offer(s, 1, 2, T0, b), 0);
        /* its running tasks finish and count */
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(scheduler_executor_running(s, 1, NULL, 0), 1);
        ck_assert_int_eq(offer(s, 1, 2, T0, b), 0);
        /* the drain times out: task 1 goes back, not failed */
        ck_assert_int_eq(scheduler_remove_executor(s, 1, "drain timeout", T0), 1);
        ck_assert_int_eq(scheduler_job_state(job), JOB_RUNNING);
        ck_assert_int_eq(info(job, 1).state, TASK_PENDING);
        ck_assert_uint_eq(info(job, 1).failures, 0);
        ck_assert_int_eq(scheduler_task_errors(job, 1, errors, 4), 0);
        /* the rest runs on the other executor, task 1 first */
        ck_assert_int_eq(offer(s, 2, 2, T0, b), 2);
        ck_assert_uint_eq(b[0].index, 1);
        ck_assert_uint_eq(b[0].attempt, 2);
        /* undrained, an executor takes tasks again */
        ck_assert_int_eq(scheduler_add_executor(s, 3, "host-a", 2), 0);
        ck_assert_int_eq(scheduler_set_executor_draining(s, 3, true), 0);
        ck_assert_int_eq(offer(s, 3, 2, T0, a), 0);
        ck_assert_int_eq(scheduler_set_executor_draining(s, 3, false), 0);
        ck_assert_int_eq(offer(s, 3, 2, T0, a), 2);
        scheduler_free(s);
}
END_TEST

START_TEST(test_finished_task_frees_core) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64], b[64];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 2), 0);
        job = submit(s, "job-1", 5);
        ck_assert_int_eq(offer(s, 1, 2, T0, a), 2);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 0);

        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 1);
        ck_assert_int_eq(info(job, 0).state, TASK_SUCCEEDED);
        ck_assert_int_eq(info(job, 0).executor_id, -1);

        /* A duplicate frees nothing more. */
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_DROPPED);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 1);

        ck_assert_int_eq(offer(s, 1, 10, T0, b), 1);
        ck_assert_uint_eq(b[0].index, 2);
        check_counts(job, (JobCounts) { .tasks = 5, .succeeded = 1, .running = 2, .in_flight = 2, .pending = 2 });

        /* A bad index is an error, not a verdict. */
        ck_assert_int_eq(scheduler_task_finished(s, job, 5, 1, 1, true, 0, NULL, T0), -EINVAL);
        scheduler_free(s);
}
END_TEST

START_TEST(test_duplicate_executor) {
        Scheduler *s = new_scheduler(4, 0);

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 4), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-b", 8), -EEXIST);
        ck_assert_int_eq(scheduler_total_cores(s), 4);
        ck_assert_uint_eq(scheduler_n_executors(s), 1);

        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-a", 0), -EINVAL);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-a", -1), -EINVAL);
        ck_assert_int_eq(scheduler_add_executor(s, -3, "host-a", 1), -EINVAL);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "", 1), -EINVAL);
        ck_assert_int_eq(scheduler_add_executor(s, 2, NULL, 1), -EINVAL);

        /* Once gone, the id may come back. */
        ck_assert_int_eq(scheduler_remove_executor(s, 1, "bye", T0), 0);
        ck_assert_int_eq(scheduler_remove_executor(s, 1, "bye", T0), -ENOENT);
        ck_assert_int_eq(scheduler_total_cores(s), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-b", 8), 0);
        ck_assert_int_eq(scheduler_total_cores(s), 8);
        scheduler_free(s);
}
END_TEST

START_TEST(test_remove_requeues_running) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64], b[64];
        const char *errors[4];
        unsigned seen = 0;
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 4), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 2), 0);
        ck_assert_int_eq(scheduler_total_cores(s), 6);
        job = submit(s, "job-1", 6);
        ck_assert_int_eq(offer(s, 1, 4, T0, a), 4);   /* 0..3 */
        ck_assert_int_eq(offer(s, 2, 2, T0, b), 2);   /* 4, 5 */
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        /* Executor 1: 4 cores, 1 free.  Its removal takes away 4. */
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 1);

        ck_assert_int_eq(scheduler_remove_executor(s, 1, "socket closed", T0), 3);
        ck_assert_int_eq(scheduler_total_cores(s), 2);
        ck_assert_uint_eq(scheduler_n_pending(s), 3);
        ck_assert_int_eq(info(job, 0).state, TASK_SUCCEEDED);
        for (unsigned i = 1; i <= 3; i++) {
                TaskInfo ti = info(job, i);

                ck_assert_int_eq(ti.state, TASK_PENDING);
                ck_assert_uint_eq(ti.attempts, 1);
                ck_assert_uint_eq(ti.failures, 1);
                ck_assert_int_eq(ti.executor_id, -1);
                ck_assert_int_eq(scheduler_task_errors(job, i, errors, 4), 1);
                ck_assert_str_eq(errors[0], "executor 1 lost: socket closed");
        }
        for (unsigned i = 4; i <= 5; i++) {
                ck_assert_int_eq(info(job, i).state, TASK_RUNNING);
                ck_assert_int_eq(info(job, i).executor_id, 2);
        }
        ck_assert_int_eq(scheduler_executor_free_cores(s, 2), 0);
        ck_assert_int_eq(scheduler_executor_running(s, 2, NULL, 0), 2);

        /* Exactly the lost tasks come back, as second attempts. */
        ck_assert_int_eq(scheduler_add_executor(s, 3, "host-c", 8), 0);
        ck_assert_int_eq(offer(s, 3, 8, T0, a), 3);
        for (int i = 0; i < 3; i++) {
                ck_assert_uint_ge(a[i].index, 1);
                ck_assert_uint_le(a[i].index, 3);
                ck_assert_uint_eq(a[i].attempt, 2);
                ck_assert_int_eq(a[i].executor_id, 3);
                seen |= 1U << a[i].index;
        }
        ck_assert_uint_eq(seen, 0xe);
        ck_assert_int_eq(scheduler_executor_running(s, 3, NULL, 0), 3);
        ck_assert_uint_eq(scheduler_n_pending(s), 0);
        ck_assert_int_eq(scheduler_job_state(job), JOB_RUNNING);
        scheduler_free(s);
}
END_TEST

START_TEST(test_locality_waits_then_gives_up) {
        Scheduler *s = new_scheduler(4, 3 * SEC);
        TaskAssignment a[64];
        Job *busy, *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 1), 0);
        /* Keep host-b's only core busy. */
        busy = submit(s, "busy", 1);
        ck_assert_int_eq(offer(s, 2, 1, T0, a), 1);
        ck_assert_ptr_eq(a[0].job, busy);

        ck_assert_int_eq(scheduler_submit_job(s, "job-1", 1, prefer_host_b, 1, T0, &job), 0);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 0);
        ck_assert_int_eq(offer(s, 1, 1, T0 + 2 * SEC, a), 0);
        ck_assert_uint_eq(scheduler_next_locality_deadline(s, T0 + 2 * SEC), T0 + 3 * SEC);
        ck_assert_int_eq(offer(s, 1, 1, T0 + 3 * SEC - 1, a), 0);
        ck_assert_int_eq(info(job, 0).state, TASK_PENDING);

        /* The revive timer fires: host-a may have it now. */
        ck_assert_int_eq(offer(s, 1, 1, T0 + 3 * SEC, a), 1);
        ck_assert_ptr_eq(a[0].job, job);
        ck_assert_int_eq(a[0].executor_id, 1);
        ck_assert_uint_eq(scheduler_next_locality_deadline(s, T0 + 3 * SEC), USEC_INFINITY);
        scheduler_free(s);
}
END_TEST

START_TEST(test_locality_preferred_host_at_once) {
        Scheduler *s = new_scheduler(4, 3 * SEC);
        TaskAssignment a[64];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 4), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 1), 0);
        ck_assert_int_eq(scheduler_submit_job(s, "job-1", 3, prefer_host_b, 1, T0, &job), 0);

        ck_assert_int_eq(offer(s, 2, 1, T0, a), 1);
        ck_assert_uint_eq(a[0].index, 0);
        ck_assert_int_eq(offer(s, 1, 4, T0 + SEC, a), 0);

        /* A launch on the preferred host restarts the wait. */
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(offer(s, 2, 1, T0 + 2 * SEC, a), 1);
        ck_assert_uint_eq(a[0].index, 1);
        ck_assert_int_eq(offer(s, 1, 4, T0 + 4 * SEC, a), 0);
        ck_assert_uint_eq(scheduler_next_locality_deadline(s, T0 + 4 * SEC), T0 + 5 * SEC);
        ck_assert_int_eq(offer(s, 1, 4, T0 + 5 * SEC, a), 1);
        ck_assert_uint_eq(a[0].index, 2);
        scheduler_free(s);
}
END_TEST

START_TEST(test_locality_per_task_and_no_prefs) {
        Scheduler *s = new_scheduler(4, 3 * SEC);
        const char *b_hosts[] = { "host-b", "host-b", NULL };
        const char *c_hosts[] = { "host-c", "host-b", NULL };
        const char *const *prefs[] = { b_hosts, NULL, c_hosts, b_hosts };
        const char *nowhere[] = { "host-z", NULL };
        const char *const *prefs_z[] = { nowhere };
        TaskAssignment a[64], no_pref;
        Job *job, *jz;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 4), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 3, "host-c", 1), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 1), 0);
        ck_assert_int_eq(scheduler_submit_job(s, "job-1", 4, prefs, 3, T0, &job), -EINVAL);
        ck_assert_int_eq(scheduler_submit_job(s, "job-1", 4, prefs, 4, T0, &job), 0);

        /* host-a: only the task without preference. */
        ck_assert_int_eq(offer(s, 1, 4, T0, a), 1);
        ck_assert_uint_eq(a[0].index, 1);
        no_pref = a[0];
        /* host-c: task 2 (prefers c, then b). */
        ck_assert_int_eq(offer(s, 3, 1, T0, a), 1);
        ck_assert_uint_eq(a[0].index, 2);
        /* host-b: task 0 (2 was launched, its b entry is skipped). */
        ck_assert_int_eq(offer(s, 2, 1, T0, a), 1);
        ck_assert_uint_eq(a[0].index, 0);
        ck_assert_int_eq(offer(s, 1, 4, T0 + SEC, a), 0);

        /* A retried task without preference may still go anywhere at once. */
        ck_assert_int_eq(finish(s, &no_pref, false, "flaky"), TASK_RESULT_RETRYING);
        ck_assert_int_eq(offer(s, 1, 4, T0 + SEC, a), 1);
        ck_assert_uint_eq(a[0].index, 1);
        ck_assert_uint_eq(a[0].attempt, 2);

        /* Preferences naming hosts without executors cannot be met: no wait. */
        ck_assert_int_eq(scheduler_submit_job(s, "job-z", 2, prefs_z, 1, T0, &jz), 0);
        ck_assert_int_eq(offer(s, 1, 4, T0 + SEC, a), 2);
        ck_assert_ptr_eq(a[0].job, jz);
        ck_assert_ptr_eq(a[1].job, jz);
        scheduler_free(s);
}
END_TEST

START_TEST(test_retry_then_success) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64];
        const char *errors[4];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        job = submit(s, "job-1", 1);

        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        ck_assert_uint_eq(a[0].attempt, 1);
        ck_assert_int_eq(finish(s, &a[0], false, "exit status 1"), TASK_RESULT_RETRYING);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 1);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        ck_assert_uint_eq(a[0].attempt, 2);
        ck_assert_int_eq(finish(s, &a[0], false, NULL), TASK_RESULT_RETRYING);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        ck_assert_uint_eq(a[0].attempt, 3);
        ck_assert_ptr_null(scheduler_pop_finished_job(s));
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_DROPPED);

        ck_assert_uint_eq(info(job, 0).attempts, 3);
        ck_assert_uint_eq(info(job, 0).failures, 2);
        ck_assert_int_eq(info(job, 0).state, TASK_SUCCEEDED);
        ck_assert_int_eq(scheduler_task_errors(job, 0, errors, 4), 2);
        ck_assert_str_eq(errors[0], "exit status 1");
        ck_assert_str_eq(errors[1], "task failed");
        ck_assert_int_eq(scheduler_job_state(job), JOB_SUCCEEDED);
        ck_assert_ptr_null(scheduler_job_reason(job));
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), job);
        ck_assert_ptr_null(scheduler_pop_finished_job(s));
        scheduler_free(s);
}
END_TEST

START_TEST(test_always_failing_fails_job) {
        Scheduler *s = new_scheduler(3, 0);
        TaskAssignment a[64], other, in_flight[8];
        const char *errors[8];
        char msg[32];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 1), 0);
        job = submit(s, "job-1", 4);
        ck_assert_int_eq(offer(s, 2, 1, T0, a), 1);
        other = a[0];  /* task 0 runs on executor 2 throughout */

        for (unsigned k = 1; k <= 3; k++) {
                ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
                /* Retried tasks come back before fresh ones. */
                ck_assert_uint_eq(a[0].index, 1);
                ck_assert_uint_eq(a[0].attempt, k);
                snprintf(msg, sizeof(msg), "boom %u", k);
                ck_assert_int_eq(finish(s, &a[0], false, msg),
                                 k < 3 ? TASK_RESULT_RETRYING : TASK_RESULT_JOB_FAILED);
        }
        ck_assert_int_eq(scheduler_job_state(job), JOB_FAILED);
        ck_assert_ptr_nonnull(strstr(scheduler_job_reason(job), "task 1 failed 3 times"));
        ck_assert_ptr_nonnull(strstr(scheduler_job_reason(job), "boom 3"));
        ck_assert_int_eq(info(job, 1).state, TASK_FAILED);
        ck_assert_int_eq(scheduler_task_errors(job, 1, errors, 8), 3);
        ck_assert_str_eq(errors[0], "boom 1");
        ck_assert_str_eq(errors[1], "boom 2");
        ck_assert_str_eq(errors[2], "boom 3");
        /* Only the first `max` are written; the total is returned. */
        errors[1] = NULL;
        ck_assert_int_eq(scheduler_task_errors(job, 1, errors, 1), 3);
        ck_assert_str_eq(errors[0], "boom 1");
        ck_assert_ptr_null(errors[1]);

        check_counts(job, (JobCounts) { .tasks = 4, .failed = 1, .killed = 3, .in_flight = 1 });
        ck_assert_uint_eq(scheduler_n_pending(s), 0);
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), job);

        /* The other attempt is to be killed; its report frees the slot. */
        ck_assert_uint_eq(scheduler_job_in_flight(s, job, in_flight, 8), 1);
        ck_assert_uint_eq(in_flight[0].index, 0);
        ck_assert_int_eq(in_flight[0].executor_id, 2);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 2), 0);
        ck_assert_int_eq(finish(s, &other, true, NULL), TASK_RESULT_DROPPED);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 2), 1);
        ck_assert_int_eq(offer(s, 2, 1, T0, a), 0);
        scheduler_free(s);
}
END_TEST

START_TEST(test_executor_loss_counts_as_failure) {
        Scheduler *s = new_scheduler(2, 0);
        TaskAssignment a[64];
        Job *job;

        job = submit(s, "job-1", 1);
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        ck_assert_int_eq(scheduler_remove_executor(s, 1, "unit stopped", T0), 1);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-a", 1), 0);
        ck_assert_int_eq(offer(s, 2, 1, T0, a), 1);
        ck_assert_int_eq(scheduler_remove_executor(s, 2, "heartbeat timeout", T0), 1);
        ck_assert_int_eq(scheduler_job_state(job), JOB_FAILED);
        ck_assert_int_eq(info(job, 0).state, TASK_FAILED);
        ck_assert_ptr_nonnull(strstr(scheduler_job_reason(job), "executor 2 lost: heartbeat timeout"));
        ck_assert_uint_eq(scheduler_n_pending(s), 0);
        scheduler_free(s);
}
END_TEST

START_TEST(test_late_result_dropped) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment first, second, a[64];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        job = submit(s, "job-1", 1);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        first = a[0];

        ck_assert_int_eq(scheduler_remove_executor(s, 1, "disconnected", T0), 1);
        /* The old attempt's result, before the re-launch: too late. */
        ck_assert_int_eq(finish(s, &first, true, NULL), TASK_RESULT_DROPPED);
        ck_assert_int_eq(info(job, 0).state, TASK_PENDING);

        /* Executor 1 comes back under the same id and gets attempt 2. */
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        second = a[0];
        ck_assert_uint_eq(second.attempt, 2);

        /* Both attempts report success; only the current one counts, once. */
        ck_assert_int_eq(finish(s, &first, true, NULL), TASK_RESULT_DROPPED);
        ck_assert_int_eq(finish(s, &first, false, "x"), TASK_RESULT_DROPPED);
        ck_assert_int_eq(info(job, 0).state, TASK_RUNNING);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 0);
        /* The right attempt from the wrong executor is not it either. */
        ck_assert_int_eq(scheduler_task_finished(s, job, 0, 2, 7, true, 0, NULL, T0), TASK_RESULT_DROPPED);
        ck_assert_int_eq(finish(s, &second, true, NULL), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(finish(s, &second, true, NULL), TASK_RESULT_DROPPED);
        ck_assert_int_eq(finish(s, &first, true, NULL), TASK_RESULT_DROPPED);
        ck_assert_int_eq(scheduler_job_state(job), JOB_SUCCEEDED);
        ck_assert_uint_eq(info(job, 0).attempts, 2);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 1);
        scheduler_free(s);
}
END_TEST

START_TEST(test_cancel_job) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64], running[8];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 2), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 1), 0);
        job = submit(s, "job-1", 10);
        ck_assert_int_eq(offer(s, 1, 2, T0, a), 2);
        ck_assert_int_eq(offer(s, 2, 1, T0, a + 2), 1);
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);

        ck_assert_int_eq(scheduler_cancel_job(s, job, T0 + SEC), 2);
        ck_assert_int_eq(scheduler_job_state(job), JOB_CANCELLED);
        ck_assert_str_eq(scheduler_job_reason(job), "cancelled");
        ck_assert_uint_eq(scheduler_job_finished_at(job), T0 + SEC);
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), job);
        check_counts(job, (JobCounts) { .tasks = 10, .succeeded = 1, .killed = 9, .in_flight = 2 });
        ck_assert_uint_eq(scheduler_n_pending(s), 0);

        /* The running attempts, to send TaskKill for. */
        ck_assert_uint_eq(scheduler_job_in_flight(s, job, running, 8), 2);
        ck_assert_uint_eq(running[0].index + running[1].index, 1 + 2);
        ck_assert_int_eq(running[0].executor_id + running[1].executor_id, 1 + 2);
        ck_assert_int_eq(offer(s, 1, 2, T0, a + 8), 0);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 1);

        /* Their reports free the slots and are dropped. */
        ck_assert_int_eq(finish(s, &running[0], false, "killed"), TASK_RESULT_DROPPED);
        ck_assert_int_eq(finish(s, &running[1], true, NULL), TASK_RESULT_DROPPED);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 2);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 2), 1);
        ck_assert_uint_eq(scheduler_job_in_flight(s, job, running, 8), 0);
        ck_assert_int_eq(scheduler_cancel_job(s, job, T0), -EALREADY);
        ck_assert_ptr_null(scheduler_pop_finished_job(s));
        scheduler_free(s);
}
END_TEST

START_TEST(test_kill_task) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64], killed;
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        job = submit(s, "job-1", 3);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);

        ck_assert_int_eq(scheduler_kill_task(s, job, 0, T0, &killed), 1);
        ck_assert_uint_eq(killed.index, 0);
        ck_assert_uint_eq(killed.attempt, 1);
        ck_assert_int_eq(killed.executor_id, 1);
        ck_assert_int_eq(info(job, 0).state, TASK_KILLED);
        ck_assert_int_eq(scheduler_kill_task(s, job, 2, T0, NULL), 0);
        ck_assert_int_eq(scheduler_kill_task(s, job, 2, T0, NULL), -EALREADY);
        ck_assert_int_eq(scheduler_kill_task(s, job, 3, T0, NULL), -EINVAL);

        /* The killed attempt holds its core until its executor reports it. */
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 0);
        ck_assert_int_eq(finish(s, &killed, false, "killed"), TASK_RESULT_DROPPED);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        ck_assert_uint_eq(a[0].index, 1);
        ck_assert_int_eq(scheduler_job_state(job), JOB_RUNNING);
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);

        ck_assert_int_eq(scheduler_job_state(job), JOB_CANCELLED);
        ck_assert_str_eq(scheduler_job_reason(job), "2 of 3 tasks killed");
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), job);
        scheduler_free(s);
}
END_TEST

START_TEST(test_default_parallelism) {
        SchedulerConfig cfg;
        Scheduler *s = new_scheduler(4, 0);

        ck_assert_uint_eq(scheduler_default_parallelism(s), 2);
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        ck_assert_uint_eq(scheduler_default_parallelism(s), 2);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 7), 0);
        ck_assert_uint_eq(scheduler_default_parallelism(s), 8);
        ck_assert_int_eq(scheduler_remove_executor(s, 2, "gone", T0), 0);
        ck_assert_uint_eq(scheduler_default_parallelism(s), 2);
        scheduler_free(s);

        scheduler_config_default(&cfg);
        cfg.default_parallelism = 5;
        ck_assert_int_eq(scheduler_new(&cfg, &s), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 16), 0);
        ck_assert_uint_eq(scheduler_default_parallelism(s), 5);
        scheduler_free(s);

        cfg.task_max_failures = 0;
        ck_assert_int_eq(scheduler_new(&cfg, &s), -EINVAL);
}
END_TEST

START_TEST(test_reload) {
        Scheduler *s = new_scheduler(10, 0);
        SchedulerConfig cfg;
        TaskAssignment a[64];
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        job = submit(s, "job-1", 1);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        ck_assert_int_eq(finish(s, &a[0], false, "one"), TASK_RESULT_RETRYING);

        scheduler_config_default(&cfg);
        cfg.task_max_failures = 0;
        ck_assert_int_eq(scheduler_set_config(s, &cfg), -EINVAL);
        cfg.task_max_failures = 2;
        ck_assert_int_eq(scheduler_set_config(s, &cfg), 0);
        ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
        ck_assert_int_eq(finish(s, &a[0], false, "two"), TASK_RESULT_JOB_FAILED);
        ck_assert_int_eq(scheduler_job_state(job), JOB_FAILED);
        scheduler_free(s);
}
END_TEST

START_TEST(test_jobs_fifo) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64];
        Job *j1, *j2, *j3;
        const char *order[] = { "j1", "j1", "j1", "j2", "j2", "j3" };

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        j1 = submit(s, "j1", 2);
        j2 = submit(s, "j2", 2);
        j3 = submit(s, "j3", 1);
        ck_assert_int_eq(scheduler_submit_job(s, "j2", 1, NULL, 0, T0, NULL), -EEXIST);
        ck_assert_ptr_eq(scheduler_find_job(s, "j2"), j2);
        ck_assert_ptr_null(scheduler_find_job(s, "j4"));
        ck_assert_ptr_eq(scheduler_first_job(s), j1);
        ck_assert_ptr_eq(scheduler_next_job(j1), j2);
        ck_assert_ptr_eq(scheduler_next_job(j2), j3);
        ck_assert_ptr_null(scheduler_next_job(j3));

        /* Task 1 of j1 fails once after j1 had nothing left pending: j1
         * re-enters the queue ahead of j2, which was submitted later. */
        for (size_t k = 0; k < ELEMENTSOF(order); k++) {
                ck_assert_int_eq(offer(s, 1, 1, T0, a), 1);
                ck_assert_str_eq(scheduler_job_id(a[0].job), order[k]);
                ck_assert_int_eq(finish(s, &a[0], !(a[0].job == j1 && a[0].index == 1 && a[0].attempt == 1), "flaky"),
                                 a[0].job == j1 && a[0].attempt == 1 && a[0].index == 1 ? TASK_RESULT_RETRYING
                                                                                       : TASK_RESULT_ACCEPTED);
                if (k == 1)
                        ck_assert_uint_eq(scheduler_n_pending(s), 4);
        }
        ck_assert_int_eq(scheduler_job_state(j1), JOB_SUCCEEDED);
        ck_assert_int_eq(scheduler_job_state(j2), JOB_SUCCEEDED);
        ck_assert_int_eq(scheduler_job_state(j3), JOB_SUCCEEDED);
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), j1);
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), j2);
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), j3);
        scheduler_free(s);
}
END_TEST

START_TEST(test_remove_job_and_empty_job) {
        Scheduler *s = new_scheduler(4, 0);
        TaskAssignment a[64];
        Job *job, *empty;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 2), 0);
        empty = submit(s, "empty", 0);
        ck_assert_int_eq(scheduler_job_state(empty), JOB_SUCCEEDED);
        job = submit(s, "job-1", 4);
        ck_assert_int_eq(offer(s, 1, 2, T0, a), 2);
        ck_assert_int_eq(scheduler_remove_job(s, job), -EBUSY);
        ck_assert_int_eq(scheduler_cancel_job(s, job, T0), 2);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 0);
        /* Forgetting the job releases the slots its killed attempts held. */
        ck_assert_int_eq(scheduler_remove_job(s, job), 0);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 2);
        ck_assert_int_eq(scheduler_executor_running(s, 1, NULL, 0), 0);
        ck_assert_ptr_null(scheduler_find_job(s, "job-1"));
        ck_assert_ptr_eq(scheduler_pop_finished_job(s), empty);
        ck_assert_ptr_null(scheduler_pop_finished_job(s));
        ck_assert_int_eq(scheduler_remove_job(s, empty), 0);
        ck_assert_ptr_null(scheduler_first_job(s));
        /* The id can be used again. */
        job = submit(s, "job-1", 1);
        ck_assert_int_eq(offer(s, 1, 2, T0, a), 1);
        scheduler_free(s);
}
END_TEST

START_TEST(test_max_result_bytes) {
        SchedulerConfig cfg;
        Scheduler *s = NULL;
        TaskAssignment a[64];
        Job *job;

        scheduler_config_default(&cfg);
        cfg.max_result_bytes = 100;
        ck_assert_int_eq(scheduler_new(&cfg, &s), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 3), 0);
        job = submit(s, "job-1", 3);
        ck_assert_int_eq(offer(s, 1, 3, T0, a), 3);
        ck_assert_int_eq(scheduler_task_finished(s, job, 0, 1, 1, true, 60, NULL, T0), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(scheduler_task_finished(s, job, 1, 1, 1, true, 60, NULL, T0), TASK_RESULT_JOB_FAILED);
        ck_assert_int_eq(scheduler_job_state(job), JOB_FAILED);
        ck_assert_ptr_nonnull(strstr(scheduler_job_reason(job), "max_result_bytes"));
        ck_assert_int_eq(scheduler_task_finished(s, job, 2, 1, 1, true, 1, NULL, T0), TASK_RESULT_DROPPED);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 3);
        scheduler_free(s);
}
END_TEST

START_TEST(test_many_executors) {
        Scheduler *s = new_scheduler(4, 0);
        char host[32];

        /* Exercises the id index through growth and deletions. */
        for (int i = 0; i < 5000; i++) {
                snprintf(host, sizeof(host), "host-%d", i % 100);
                ck_assert_int_eq(scheduler_add_executor(s, i * 7, host, 1 + i % 4), 0);
        }
        for (int i = 0; i < 5000; i += 2)
                ck_assert_int_eq(scheduler_remove_executor(s, i * 7, "x", T0), 0);
        for (int i = 0; i < 5000; i++)
                ck_assert(scheduler_has_executor(s, i * 7) == (i % 2 == 1));
        ck_assert_uint_eq(scheduler_n_executors(s), 2500);
        ck_assert_int_eq(scheduler_total_cores(s), 2500 / 2 * (2 + 4));
        scheduler_free(s);
        scheduler_free(NULL);
}
END_TEST

START_TEST(test_prefetch) {
        SchedulerConfig cfg;
        Scheduler *s = NULL;
        TaskAssignment a[64];

        scheduler_config_default(&cfg);
        cfg.executor_prefetch = 2;
        ck_assert_int_eq(scheduler_new(&cfg, &s), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 2), 0);
        submit(s, "job-1", 10);
        /* Two cores and two prefetched tasks. */
        ck_assert_int_eq(offer(s, 1, 10, T0, a), 4);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 0);
        ck_assert_int_eq(offer(s, 1, 10, T0, a + 4), 0);
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(scheduler_executor_free_cores(s, 1), 0);
        ck_assert_int_eq(offer(s, 1, 10, T0, a + 4), 1);
        scheduler_free(s);
}
END_TEST

START_TEST(test_locality_retry_returns_to_host_queue) {
        Scheduler *s = new_scheduler(4, 3 * SEC);
        TaskAssignment a[64], first;
        Job *job;

        ck_assert_int_eq(scheduler_add_executor(s, 1, "host-a", 1), 0);
        ck_assert_int_eq(scheduler_add_executor(s, 2, "host-b", 2), 0);
        ck_assert_int_eq(scheduler_submit_job(s, "job-1", 4, prefer_host_b, 4, T0, &job), 0);
        ck_assert_int_eq(offer(s, 2, 2, T0, a), 2);
        ck_assert_uint_eq(a[0].index, 0);
        ck_assert_uint_eq(a[1].index, 1);
        first = a[1];
        ck_assert_int_eq(finish(s, &a[0], false, "flaky"), TASK_RESULT_RETRYING);

        /* The retry is local to host-b again: host-b gets it at once (before
         * the fresh task 2), host-a does not. */
        ck_assert_int_eq(offer(s, 1, 1, T0 + SEC, a), 0);
        ck_assert_int_eq(offer(s, 2, 1, T0 + SEC, a), 1);
        ck_assert_uint_eq(a[0].index, 0);
        ck_assert_uint_eq(a[0].attempt, 2);

        /* Once host-a may take anything, it takes task 2 ... */
        ck_assert_int_eq(offer(s, 1, 1, T0 + 4 * SEC, a), 1);
        ck_assert_uint_eq(a[0].index, 2);
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        /* ... and after host-b is lost, its re-queued tasks too. */
        ck_assert_int_eq(finish(s, &first, false, "flaky"), TASK_RESULT_RETRYING);
        ck_assert_int_eq(scheduler_remove_executor(s, 2, "gone", T0 + 4 * SEC), 1);
        ck_assert_int_eq(offer(s, 1, 1, T0 + 4 * SEC, a), 1);
        ck_assert_uint_eq(a[0].index, 1);
        ck_assert_uint_eq(a[0].attempt, 2);
        ck_assert_int_eq(finish(s, &a[0], true, NULL), TASK_RESULT_ACCEPTED);
        ck_assert_int_eq(offer(s, 1, 1, T0 + 4 * SEC, a), 1);
        ck_assert_uint_eq(a[0].index, 0);
        ck_assert_uint_eq(a[0].attempt, 3);
        scheduler_free(s);
}
END_TEST

/* Random operations against a few jobs of each kind of preference, checking
 * the books after every step: counts add up, attempts are where the executors
 * say, and no task has two accepted results. */
#define STRESS_TASKS 5000
static unsigned rnd_state = 12345;

static unsigned rnd(unsigned n) {
        rnd_state = rnd_state * 1103515245 + 12345;
        return (rnd_state >> 16) % n;
}

static unsigned job_slot(Job *const *jobs, const Job *job) {
        for (unsigned j = 0;; j++)
                if (jobs[j] == job)
                        return j;
}

static void check_books(Scheduler *s, Job **jobs, size_t n_jobs, unsigned accepted[][STRESS_TASKS]) {
        size_t pending = 0, in_flight = 0, on_executors = 0;

        for (size_t j = 0; j < n_jobs; j++) {
                JobCounts c;

                scheduler_job_counts(jobs[j], &c);
                ck_assert_uint_eq(c.pending + c.running + c.succeeded + c.failed + c.killed, c.tasks);
                ck_assert_uint_le(c.running, c.in_flight);
                if (scheduler_job_state(jobs[j]) != JOB_RUNNING)
                        ck_assert_uint_eq(c.pending + c.running, 0);
                pending += c.pending;
                in_flight += c.in_flight;
                for (unsigned i = 0; i < c.tasks; i++) {
                        TaskInfo ti = info(jobs[j], i);

                        ck_assert_uint_le(accepted[j][i], 1);
                        ck_assert_uint_eq(accepted[j][i], ti.state == TASK_SUCCEEDED);
                        ck_assert_uint_le(ti.failures, 8);
                        ck_assert(ti.state != TASK_RUNNING || ti.executor_id >= 0);
                        ck_assert(ti.state != TASK_PENDING || ti.executor_id < 0);
                }
        }
        for (int e = 0; e < 12; e++) {
                int n = scheduler_executor_running(s, e, NULL, 0);

                if (n >= 0) {
                        on_executors += (size_t) n;
                        ck_assert_int_le(n, 3);
                }
        }
        ck_assert_uint_eq(scheduler_n_pending(s), pending);
        ck_assert_uint_eq(on_executors, in_flight);
}

START_TEST(test_stress_books) {
        static const char *hosts[] = { "h0", "h1", "h2", "h3" };
        const char *l0[] = { "h0", NULL }, *l1[] = { "h1", "h2", NULL }, *l3[] = { "h3", "h0", NULL };
        const char *const *shared[] = { l1 };
        const char *const *per_task[STRESS_TASKS];
        static unsigned accepted[3][STRESS_TASKS];
        Scheduler *s = new_scheduler(8, 2 * SEC);
        TaskAssignment running[256], a[64];
        size_t n_running = 0;
        usec_t now = T0;
        Job *jobs[3];

        memset(accepted, 0, sizeof(accepted));
        for (unsigned i = 0; i < STRESS_TASKS; i++)
                per_task[i] = i % 3 == 0 ? l0 : i % 3 == 1 ? NULL : l3;
        jobs[0] = submit(s, "plain", STRESS_TASKS);
        ck_assert_int_eq(scheduler_submit_job(s, "shared", STRESS_TASKS, shared, 1, T0, &jobs[1]), 0);
        ck_assert_int_eq(scheduler_submit_job(s, "per-task", STRESS_TASKS, per_task, STRESS_TASKS, T0, &jobs[2]), 0);

        for (int step = 0; step < 20000; step++) {
                unsigned op = rnd(100);

                now += rnd(200) * USEC_PER_MSEC;
                if (op < 5) {
                        int e = (int) rnd(12);

                        (void) scheduler_add_executor(s, e, hosts[e % 4], 1 + e % 3);
                } else if (op < 8) {
                        int e = (int) rnd(12);

                        if (scheduler_remove_executor(s, e, "stress", now) < 0)
                                continue;
                        for (size_t k = 0; k < n_running;) {
                                if (running[k].executor_id == e)
                                        running[k] = running[--n_running];
                                else
                                        k++;
                        }
                } else if (op < 45) {
                        int e = (int) rnd(12), n = scheduler_offer(s, e, 3, now, a, 64);

                        for (int k = 0; k < n; k++) {
                                ck_assert_uint_lt(n_running, ELEMENTSOF(running));
                                running[n_running++] = a[k];
                        }
                } else if (op < 95) {
                        size_t k;
                        TaskAssignment t;
                        bool ok;
                        int v;

                        if (n_running == 0)
                                continue;
                        k = rnd((unsigned) n_running);
                        t = running[k];
                        ok = rnd(8) != 0;

                        /* Sometimes the report is sent twice. */
                        if (rnd(10) != 0)
                                running[k] = running[--n_running];
                        v = finish(s, &t, ok, "random failure");
                        ck_assert_int_ge(v, 0);
                        if (v == TASK_RESULT_ACCEPTED)
                                accepted[job_slot(jobs, t.job)][t.index]++;
                } else if (op < 97)
                        (void) scheduler_kill_task(s, jobs[rnd(3)], rnd(STRESS_TASKS), now, NULL);
                if (step % 64 == 0)
                        check_books(s, jobs, 3, accepted);
        }

        /* Then everything succeeds: no task may be stuck. */
        for (int e = 0; e < 12; e++)
                (void) scheduler_add_executor(s, e, hosts[e % 4], 1 + e % 3);
        for (size_t k = 0; k < n_running; k++)
                if (finish(s, &running[k], true, NULL) == TASK_RESULT_ACCEPTED)
                        accepted[job_slot(jobs, running[k].job)][running[k].index]++;
        for (int round = 0; round < 10000 && scheduler_n_pending(s) > 0; round++) {
                now += SEC;
                for (int e = 0; e < 12; e++) {
                        int n = scheduler_offer(s, e, 3, now, a, 64);

                        for (int k = 0; k < n; k++)
                                if (finish(s, &a[k], true, NULL) == TASK_RESULT_ACCEPTED)
                                        accepted[job_slot(jobs, a[k].job)][a[k].index]++;
                }
        }
        check_books(s, jobs, 3, accepted);
        for (size_t j = 0; j < 3; j++) {
                JobCounts c;

                scheduler_job_counts(jobs[j], &c);
                ck_assert_int_eq(scheduler_job_state(jobs[j]), JOB_CANCELLED);  /* a few tasks were killed */
                ck_assert_uint_eq(c.failed, 0);
                ck_assert_uint_gt(c.succeeded, STRESS_TASKS * 9 / 10);
                ck_assert_uint_eq(c.in_flight, 0);
        }
        scheduler_free(s);
}
END_TEST

#define N_EXECUTORS 8
#define CORES 4
#define N_TASKS 1000000

/* Submits N_TASKS tasks, then offers and finishes until the job is done.
 * With with_prefs, task i prefers host (i % N_EXECUTORS) + 1, so every
 * launch goes through the locality queues. */
static void run_throughput(bool with_prefs) {
        Scheduler *s = new_scheduler(4, 3 * SEC);
        static const char *host_names[N_EXECUTORS][2];
        static char hosts[N_EXECUTORS][16];
        _cleanup_free_ const char *const **prefs = NULL;
        TaskAssignment a[CORES];
        size_t launched = 0, accepted = 0;
        usec_t start, elapsed;
        JobCounts c;
        Job *job;

        for (int e = 0; e < N_EXECUTORS; e++) {
                snprintf(hosts[e], sizeof(hosts[e]), "host-%d", e + 1);
                host_names[e][0] = hosts[e];
                host_names[e][1] = NULL;
                ck_assert_int_eq(scheduler_add_executor(s, e + 1, hosts[e], CORES), 0);
        }
        if (with_prefs) {
                prefs = malloc(N_TASKS * sizeof(*prefs));
                ck_assert_ptr_nonnull(prefs);
                for (unsigned i = 0; i < N_TASKS; i++)
                        prefs[i] = host_names[i % N_EXECUTORS];
        }
        start = now_mono_usec();
        ck_assert_int_eq(scheduler_submit_job(s, "big", N_TASKS, prefs, with_prefs ? N_TASKS : 0, T0, &job), 0);
        while (scheduler_job_state(job) == JOB_RUNNING) {
                for (int e = 1; e <= N_EXECUTORS; e++) {
                        int n = scheduler_offer(s, e, CORES, T0, a, CORES);

                        ck_assert_int_ge(n, 0);
                        launched += (size_t) n;
                        for (int k = 0; k < n; k++)
                                accepted += finish(s, &a[k], true, NULL) == TASK_RESULT_ACCEPTED;
                }
        }
        elapsed = now_mono_usec() - start;
        ck_assert_uint_eq(launched, N_TASKS);
        ck_assert_uint_eq(accepted, N_TASKS);
        ck_assert_int_eq(scheduler_job_state(job), JOB_SUCCEEDED);
        scheduler_job_counts(job, &c);
        ck_assert_uint_eq(c.succeeded, N_TASKS);
        ck_assert_uint_eq(c.in_flight, 0);
        printf("scheduler: %d tasks%s submitted, offered and finished on %d executors in %.3f s: %.0f tasks/s\n",
               N_TASKS, with_prefs ? " with preferred hosts" : "", N_EXECUTORS, (double) elapsed / SEC,
               N_TASKS / ((double) MAX(elapsed, 1ULL) / SEC));
        scheduler_free(s);
}

START_TEST(test_throughput) {
        run_throughput(false);
}
END_TEST

START_TEST(test_throughput_locality) {
        run_throughput(true);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_offer_fills_free_cores,
                test_finished_task_frees_core,
                test_duplicate_executor,
                test_remove_requeues_running,
                test_locality_waits_then_gives_up,
                test_locality_preferred_host_at_once,
                test_locality_per_task_and_no_prefs,
                test_retry_then_success,
                test_always_failing_fails_job,
                test_executor_loss_counts_as_failure,
                test_late_result_dropped,
                test_cancel_job,
                test_kill_task,
                test_default_parallelism,
                test_reload,
                test_jobs_fifo,
                test_remove_job_and_empty_job,
                test_max_result_bytes,
                test_many_executors,
                test_prefetch,
                test_locality_retry_returns_to_host_queue,
                test_stress_books,
                test_draining_executor,
                test_throughput,
                test_throughput_locality,
                NULL,
        };
        const CheckOptions options = { .timeout = 120 };

        return check_run_tests("scheduler", &options, tests);
}
