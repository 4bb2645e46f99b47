/* The task thread pool: every task runs once and its result comes back
 * once, in batches bounded by bytes; kills of queued and running tasks;
 * the owner is notified once per take; stop with a task that will not
 * return; a task the owner runs itself. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check-run.h"
#include "task-runner.h"

typedef struct Fake {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool release;          /* lets "block" tasks return */
        unsigned n_blocked;
        atomic_uint runs;
        atomic_uint notifies;
} Fake;

static Fake fake;

/* "block": waits for fake.release; anything else: output = input. */
static void fake_run(TaskRunner *r, Task *t, void *userdata) {
        Fake *f = userdata;

        (void) r;
        atomic_fetch_add(&f->runs, 1);
        if (streq(t->launch->command, "block")) {
                pthread_mutex_lock(&f->lock);
                f->n_blocked++;
                pthread_cond_broadcast(&f->cond);
                while (!f->release)
                        pthread_cond_wait(&f->cond, &f->lock);
                f->n_blocked--;
                pthread_mutex_unlock(&f->lock);
        }
        t->outcome.status = SPARK__TASK_STATUS__TASK_OK;
        t->outcome.output = malloc(t->launch->input.len + 1);
        memcpy(t->outcome.output, t->launch->input.data, t->launch->input.len);
        t->outcome.output_len = t->launch->input.len;
}

static void fake_notify(void *userdata) {
        Fake *f = userdata;

        atomic_fetch_add(&f->notifies, 1);
}

static void wait_blocked(unsigned n) {
        pthread_mutex_lock(&fake.lock);
        while (fake.n_blocked < n)
                pthread_cond_wait(&fake.cond, &fake.lock);
        pthread_mutex_unlock(&fake.lock);
}

static void release_blocked(void) {
        pthread_mutex_lock(&fake.lock);
        fake.release = true;
        pthread_cond_broadcast(&fake.cond);
        pthread_mutex_unlock(&fake.lock);
}

/* A batch of n tasks the way the executor makes them: from a decoded
 * PollReply.  commands[i % n_commands] is each task's command. */
static TaskBatch *make_batch(size_t n, const char *job, const char *const *commands, size_t n_commands,
                             size_t input_len) {
        Spark__PollReply pr = SPARK__POLL_REPLY__INIT;
        Spark__TaskLaunch *l = calloc(n, sizeof(*l));
        Spark__TaskLaunch **lp = calloc(n, sizeof(*lp));
        char *input = malloc(input_len + 1);
        Envelope env = ENVELOPE_INIT, *decoded;
        TaskBatch *b;
        void *buf;
        size_t len;

        memset(input, 'i', input_len);
        for (size_t i = 0; i < n; i++) {
                l[i] = (Spark__TaskLaunch) SPARK__TASK_LAUNCH__INIT;
                l[i].job_id = (char *) job;
                l[i].index = (int32_t) i;
                l[i].attempt = 1;
                l[i].kind = SPARK__TASK_KIND__TASK_COMMAND;
                l[i].command = (char *) commands[i % n_commands];
                l[i].input.data = (uint8_t *) input;
                l[i].input.len = input_len;
                lp[i] = &l[i];
        }
        pr.tasks = lp;
        pr.n_tasks = n;
        ENVELOPE_SET(&env, POLL_REPLY, poll_reply, &pr);
        ck_assert_int_eq(envelope_encode(&env, &buf, &len), 0);
        ck_assert_int_eq(envelope_decode(buf, len, SIZE_MAX, &decoded), 0);
        ck_assert_int_eq(task_batch_new(decoded, &b), 0);
        free(buf);
        free(l);
        free(lp);
        free(input);
        return b;
}

static void setup(void) {
        fake = (Fake) { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
}

/* Takes results until n arrived (or 10 s passed), checking each index once. */
static void collect(TaskRunner *r, size_t n, size_t max_bytes, bool *seen, Spark__TaskStatus status) {
        size_t got = 0;

        for (unsigned spins = 0; got < n && spins < 10000; spins++) {
                size_t k;
                Task *t = task_runner_take_results(r, SIZE_MAX, max_bytes, &k, NULL);

                if (!t) {
                        usleep(1000);
                        continue;
                }
                while (t) {
                        Task *next = t->next;

                        ck_assert_int_eq(t->state, TASK_STATE_DONE);
                        ck_assert_int_eq(t->outcome.status, status);
                        ck_assert_msg(!seen[t->launch->index], "task %d twice", t->launch->index);
                        seen[t->launch->index] = true;
                        got++;
                        task_release(t);
                        t = next;
                }
        }
        ck_assert_uint_eq(got, n);
}

START_TEST(test_every_task_once) {
        static const char *const cmds[] = { "x" };
        TaskRunner *r;
        TaskBatch *b1, *b2;
        bool seen[2000] = {};

        ck_assert_int_eq(task_runner_new(4, fake_run, fake_notify, &fake, &r), 0);
        b1 = make_batch(1000, "job-1", cmds, 1, 8);
        b2 = make_batch(1000, "job-1", cmds, 1, 8);
        /* The second batch holds indexes 1000..1999. */
        for (size_t i = 0; i < 1000; i++) {
                Spark__TaskLaunch *l = b2->reply->poll_reply->tasks[i];

                l->index = (int32_t) (1000 + i);
                b2->tasks[i].launch = l;
        }
        task_runner_submit(r, b1->tasks, b1->n_tasks);
        task_runner_submit(r, b2->tasks, b2->n_tasks);
        collect(r, 2000, SIZE_MAX, seen, SPARK__TASK_STATUS__TASK_OK);
        ck_assert_uint_eq(atomic_load(&fake.runs), 2000);
        ck_assert_uint_ge(atomic_load(&fake.notifies), 1);
        ck_assert_uint_eq(task_runner_held(r), 0);
        ck_assert_uint_eq(task_runner_stop(r, UINT64_MAX), 0);
        task_runner_free(r);
}
END_TEST

START_TEST(test_results_bounded_by_bytes) {
        static const char *const cmds[] = { "x" };
        TaskRunner *r;
        TaskBatch *b;
        size_t n;
        Task *t, *t2;

        ck_assert_int_eq(task_runner_new(1, fake_run, NULL, &fake, &r), 0);
        b = make_batch(10, "job-1", cmds, 1, 100);
        task_runner_submit(r, b->tasks, b->n_tasks);
        while (task_runner_held(r) > 0)
                usleep(1000);

        /* Each result counts its 100 bytes of output, the job id and 32
         * for the rest: 300 bytes hold two, not three. */
        t = task_runner_take_results(r, SIZE_MAX, 300, &n, NULL);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(t->launch->index, 0);
        ck_assert_int_eq(t->next->launch->index, 1);
        /* Less than one result's worth: still one at a time. */
        t2 = task_runner_take_results(r, SIZE_MAX, 10, &n, NULL);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(t2->launch->index, 2);
        task_release(t->next);
        task_release(t);
        task_release(t2);
        /* And by count. */
        t = task_runner_take_results(r, 3, SIZE_MAX, &n, NULL);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(t->launch->index, 3);
        while (t) {
                t2 = t->next;
                task_release(t);
                t = t2;
        }
        ck_assert_uint_eq(task_runner_stop(r, UINT64_MAX), 0);
        task_runner_free(r); /* releases the other four, and the batch */
}
END_TEST

START_TEST(test_kill_queued_and_running) {
        static const char *const cmds[] = { "block", "x", "x" };
        TaskRunner *r;
        TaskBatch *b, *other;
        bool seen[6] = {};
        size_t n, held;
        Task *t;

        ck_assert_int_eq(task_runner_new(1, fake_run, fake_notify, &fake, &r), 0);
        b = make_batch(6, "job-kill", cmds, 3, 1);     /* 0 blocks; 1..5 queue behind it */
        other = make_batch(1, "job-other", cmds + 1, 1, 1);
        task_runner_submit(r, b->tasks, b->n_tasks);
        task_runner_submit(r, other->tasks, other->n_tasks);
        wait_blocked(1);

        /* One queued task by index, then the rest of the job. */
        ck_assert_uint_eq(task_runner_kill(r, "job-kill", 3), 1);
        ck_assert_uint_eq(task_runner_kill(r, "job-kill", 3), 0);
        ck_assert_uint_eq(task_runner_kill(r, "job-kill", -1), 5); /* 1,2,4,5 queued + 0 running */
        ck_assert_uint_eq(task_runner_kill(r, "job-nope", -1), 0);

        t = task_runner_take_results(r, SIZE_MAX, SIZE_MAX, &n, &held);
        ck_assert_uint_eq(n, 5);
        ck_assert_uint_eq(held, 2); /* the running one and job-other */
        for (Task *x = t; x; x = x->next) {
                ck_assert_int_eq(x->outcome.status, SPARK__TASK_STATUS__TASK_KILLED);
                ck_assert_str_eq(x->outcome.error, "killed before it started");
                ck_assert_uint_eq(x->outcome.output_len, 0);
                seen[x->launch->index] = true;
        }
        while (t) {
                Task *next = t->next;
                task_release(t);
                t = next;
        }
        ck_assert(!seen[0]);

        /* The running one reports KILLED when it returns, output dropped;
         * the other job runs normally. */
        release_blocked();
        for (unsigned spins = 0; task_runner_held(r) > 0 && spins < 10000; spins++)
                usleep(1000);
        t = task_runner_take_results(r, SIZE_MAX, SIZE_MAX, &n, NULL);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(t->launch->index, 0);
        ck_assert_int_eq(t->outcome.status, SPARK__TASK_STATUS__TASK_KILLED);
        ck_assert_ptr_null(t->outcome.output);
        ck_assert_str_eq(t->next->launch->job_id, "job-other");
        ck_assert_int_eq(t->next->outcome.status, SPARK__TASK_STATUS__TASK_OK);
        task_release(t->next);
        task_release(t);
        ck_assert_uint_eq(task_runner_stop(r, UINT64_MAX), 0);
        task_runner_free(r);
}
END_TEST

START_TEST(test_stop_with_stuck_task) {
        static const char *const cmds[] = { "block" };
        TaskRunner *r;
        TaskBatch *b;

        b = make_batch(3, "job-1", cmds, 1, 1);
        ck_assert_int_eq(task_runner_new(2, fake_run, NULL, &fake, &r), 0);
        task_runner_submit(r, b->tasks, b->n_tasks);
        wait_blocked(2);
        /* Two threads stuck in tasks: stop gives up after the timeout. */
        ck_assert_uint_eq(task_runner_stop(r, 50 * 1000), 2);
        release_blocked();
        ck_assert_uint_eq(task_runner_stop(r, UINT64_MAX), 0);
        ck_assert_uint_eq(atomic_load(&fake.runs), 2); /* the third never started */
        task_runner_free(r);
}
END_TEST

typedef struct HereCall {
        TaskRunner *runner;
        Task *task;
        bool ran;
} HereCall;

static void *run_here_thread(void *arg) {
        HereCall *c = arg;

        c->ran = task_runner_run_here(c->runner, c->task);
        return NULL;
}

/* The owner runs a task itself only when a core is free and nothing waits;
 * such a task is counted, killable, and its result is among the others,
 * without a notification. */
START_TEST(test_run_here) {
        static const char *const cmds[] = { "x", "x", "block" }, *const block[] = { "block" };
        TaskRunner *r;
        TaskBatch *b, *blocking;
        HereCall call;
        pthread_t th;
        size_t n, held;
        Task *t;

        ck_assert_int_eq(task_runner_new(1, fake_run, fake_notify, &fake, &r), 0);
        b = make_batch(3, "job-here", cmds, 3, 4);
        ck_assert(task_runner_run_here(r, &b->tasks[0]));
        ck_assert_uint_eq(atomic_load(&fake.runs), 1);
        ck_assert_uint_eq(atomic_load(&fake.notifies), 0);
        t = task_runner_take_results(r, SIZE_MAX, SIZE_MAX, &n, &held);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(held, 0);
        ck_assert_ptr_eq(t, &b->tasks[0]);
        ck_assert_int_eq(t->outcome.status, SPARK__TASK_STATUS__TASK_OK);
        task_release(t);

        /* the one core busy: not here */
        blocking = make_batch(1, "job-block", block, 1, 1);
        task_runner_submit(r, blocking->tasks, 1);
        wait_blocked(1);
        ck_assert(!task_runner_run_here(r, &b->tasks[1]));
        ck_assert_int_eq(b->tasks[1].state, TASK_STATE_QUEUED);
        ck_assert_uint_eq(atomic_load(&fake.runs), 2);
        release_blocked();
        for (unsigned spins = 0; task_runner_held(r) > 0 && spins < 10000; spins++)
                usleep(1000);
        t = task_runner_take_results(r, SIZE_MAX, SIZE_MAX, &n, NULL);
        ck_assert_uint_eq(n, 1);
        task_release(t);

        /* a task run here is killed as a running one is */
        fake.release = false;
        call = (HereCall) { .runner = r, .task = &b->tasks[2] };
        ck_assert_int_eq(pthread_create(&th, NULL, run_here_thread, &call), 0);
        wait_blocked(1);
        ck_assert_uint_eq(task_runner_held(r), 1);
        ck_assert_uint_eq(task_runner_kill(r, "job-here", 2), 1);
        release_blocked();
        ck_assert_int_eq(pthread_join(th, NULL), 0);
        ck_assert(call.ran);
        t = task_runner_take_results(r, SIZE_MAX, SIZE_MAX, &n, NULL);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(t->outcome.status, SPARK__TASK_STATUS__TASK_KILLED);
        task_release(t);
        task_release(&b->tasks[1]); /* never submitted */
        ck_assert_uint_eq(task_runner_stop(r, UINT64_MAX), 0);
        task_runner_free(r);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_every_task_once,
                test_results_bounded_by_bytes,
                test_kill_queued_and_running,
                test_stop_with_stuck_task,
                test_run_here,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .timeout = 60 };

        return check_run_tests("task-runner", &options, tests);
}
