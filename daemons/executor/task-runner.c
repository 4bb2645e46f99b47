/* See task-runner.h. */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "fifo.h"
#include "task-runner.h"
#include "time-util.h"

typedef struct RunnerThread {
        TaskRunner *runner;
        pthread_t thread;
        bool started;
        Task *current;   /* guarded by the lock */
} RunnerThread;

struct TaskRunner {
        pthread_mutex_t lock;
        pthread_cond_t work;    /* queue non-empty or stopping */
        pthread_cond_t exited;  /* a thread returned (for stop) */

        TaskRunFn run;
        TaskNotifyFn notify;
        void *userdata;

        /* Guarded by lock. */
        Task *queue_head, *queue_tail;
        size_t n_queued, n_running;
        Task *done_head, *done_tail;
        bool notify_armed;
        bool stopping;
        unsigned n_idle;
        unsigned n_alive;
        Task *here;             /* the task the owner runs itself */

        unsigned n_threads;
        RunnerThread threads[];
};

static void done_append(TaskRunner *r, Task *t) {
        t->state = TASK_STATE_DONE;
        FIFO_PUSH(r->done_head, r->done_tail, next, t);
}

/* Under the lock.  Returns whether the caller must call notify once it has
 * dropped the lock. */
static bool done_notify(TaskRunner *r) {
        if (!r->notify_armed || !r->notify)
                return false;
        r->notify_armed = false;
        return true;
}

static Task *queue_pop(TaskRunner *r) {
        Task *t = FIFO_POP(r->queue_head, r->queue_tail, next);

        if (t)
                r->n_queued--;
        return t;
}

static void run_timed(TaskRunner *r, Task *t) {
        usec_t t0 = now_mono_usec();

        r->run(r, t, r->userdata);
        t->run_usec = now_mono_usec() - t0;
}

/* Under the lock: t starts running on some thread. */
static void running_begins(TaskRunner *r, Task *t) {
        t->state = TASK_STATE_RUNNING;
        r->n_running++;
}

/* Under the lock: t, which was running, has returned. */
static void running_ended(TaskRunner *r, Task *t) {
        r->n_running--;
        t->pid = 0;
        if (t->killed)
                task_outcome_kill(&t->outcome, "killed while running");
        done_append(r, t);
}

static void *runner_thread(void *arg) {
        RunnerThread *th = arg;
        TaskRunner *r = th->runner;
        bool notify = false;

        pthread_mutex_lock(&r->lock);
        for (;;) {
                Task *t;

                while (!r->stopping && !r->queue_head) {
                        if (notify) {
                                /* Tell the owner before sleeping, not after
                                 * every task. */
                                pthread_mutex_unlock(&r->lock);
                                r->notify(r->userdata);
                                notify = false;
                                pthread_mutex_lock(&r->lock);
                                continue;
                        }
                        r->n_idle++;
                        pthread_cond_wait(&r->work, &r->lock);
                        r->n_idle--;
                }
                if (r->stopping)
                        break;

                t = queue_pop(r);
                running_begins(r, t);
                th->current = t;
                pthread_mutex_unlock(&r->lock);

                if (notify) {
                        r->notify(r->userdata);
                        notify = false;
                }
                run_timed(r, t);

                pthread_mutex_lock(&r->lock);
                th->current = NULL;
                running_ended(r, t);
                notify = done_notify(r) || notify;
        }
        r->n_alive--;
        pthread_cond_broadcast(&r->exited);
        pthread_mutex_unlock(&r->lock);

        if (notify)
                r->notify(r->userdata);
        return NULL;
}

int task_runner_new(unsigned n_threads, TaskRunFn run, TaskNotifyFn notify, void *userdata, TaskRunner **ret) {
        pthread_condattr_t ca;
        TaskRunner *r;
        int k;

        if (n_threads == 0 || n_threads > TASK_RUNNER_THREADS_MAX || !run || !ret)
                return -EINVAL;

        r = calloc(1, sizeof(TaskRunner) + n_threads * sizeof(RunnerThread));
        if (!r)
                return -ENOMEM;
        r->run = run;
        r->notify = notify;
        r->userdata = userdata;
        r->notify_armed = true;
        r->n_threads = n_threads;
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->work, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&r->exited, &ca);
        pthread_condattr_destroy(&ca);

        for (unsigned i = 0; i < n_threads; i++) {
                RunnerThread *th = &r->threads[i];

                th->runner = r;
                pthread_mutex_lock(&r->lock);
                r->n_alive++;
                pthread_mutex_unlock(&r->lock);
                k = pthread_create(&th->thread, NULL, runner_thread, th);
                if (k != 0) {
                        pthread_mutex_lock(&r->lock);
                        r->n_alive--;
                        pthread_mutex_unlock(&r->lock);
                        (void) task_runner_stop(r, UINT64_MAX);
                        task_runner_free(r);
                        return -k;
                }
                th->started = true;
        }

        *ret = r;
        return 0;
}

unsigned task_runner_stop(TaskRunner *r, uint64_t timeout_usec) {
        struct timespec deadline;
        unsigned busy;

        if (!r)
                return 0;

        /* unused for UINT64_MAX */
        deadline = mono_deadline_after(timeout_usec == UINT64_MAX ? 0 : timeout_usec);

        pthread_mutex_lock(&r->lock);
        r->stopping = true;
        pthread_cond_broadcast(&r->work);
        for (unsigned i = 0; i < r->n_threads; i++) {
                Task *t = r->threads[i].current;

                if (t && t->pid > 0)
                        (void) kill(-t->pid, SIGKILL);
        }
        while (r->n_alive > 0) {
                int k;

                if (timeout_usec == UINT64_MAX)
                        k = pthread_cond_wait(&r->exited, &r->lock);
                else
                        k = pthread_cond_timedwait(&r->exited, &r->lock, &deadline);
                if (k == ETIMEDOUT)
                        break;
        }
        busy = r->n_alive;
        pthread_mutex_unlock(&r->lock);

        if (busy == 0)
                for (unsigned i = 0; i < r->n_threads; i++)
                        if (r->threads[i].started) {
                                pthread_join(r->threads[i].thread, NULL);
                                r->threads[i].started = false;
                        }
        return busy;
}

TaskRunner *task_runner_free(TaskRunner *r) {
        Task *t;

        if (!r)
                return NULL;

        while ((t = queue_pop(r)))
                task_release(t);
        while ((t = r->done_head)) {
                r->done_head = t->next;
                task_release(t);
        }
        pthread_cond_destroy(&r->work);
        pthread_cond_destroy(&r->exited);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
}

void task_runner_submit(TaskRunner *r, Task *tasks, size_t n) {
        unsigned wake;

        if (n == 0)
                return;

        pthread_mutex_lock(&r->lock);
        for (size_t i = 0; i < n; i++) {
                Task *t = &tasks[i];

                t->state = TASK_STATE_QUEUED;
                FIFO_PUSH(r->queue_head, r->queue_tail, next, t);
        }
        r->n_queued += n;
        wake = r->n_idle;
        if (wake > 0 && n >= wake)
                pthread_cond_broadcast(&r->work);
        else
                for (size_t i = 0; i < n && i < wake; i++)
                        pthread_cond_signal(&r->work);
        pthread_mutex_unlock(&r->lock);
}

bool task_runner_run_here(TaskRunner *r, Task *t) {
        pthread_mutex_lock(&r->lock);
        /* a core is free, and no queued task would be overtaken */
        if (r->stopping || r->here || r->queue_head || r->n_running >= r->n_threads) {
                pthread_mutex_unlock(&r->lock);
                return false;
        }
        running_begins(r, t);
        r->here = t;
        pthread_mutex_unlock(&r->lock);

        run_timed(r, t);

        pthread_mutex_lock(&r->lock);
        r->here = NULL;
        running_ended(r, t);
        pthread_mutex_unlock(&r->lock);
        return true;
}

unsigned task_runner_kill(TaskRunner *r, const char *job_id, int32_t index) {
        Task **p, *prev = NULL;
        unsigned n = 0;

        pthread_mutex_lock(&r->lock);
        for (p = &r->queue_head; *p;) {
                Task *t = *p;

                if (!task_matches(t, job_id, index)) {
                        prev = t;
                        p = &t->next;
                        continue;
                }
                *p = t->next;
                if (r->queue_tail == t)
                        r->queue_tail = prev;
                r->n_queued--;
                t->killed = true;
                task_outcome_kill(&t->outcome, "killed before it started");
                done_append(r, t);
                n++;
        }
        for (unsigned i = 0; i <= r->n_threads; i++) {
                Task *t = i < r->n_threads ? r->threads[i].current : r->here;

                if (!t || t->killed || !task_matches(t, job_id, index))
                        continue;
                t->killed = true;
                if (t->pid > 0)
                        (void) kill(-t->pid, SIGKILL);
                n++;
        }
        pthread_mutex_unlock(&r->lock);

        /* No notification: the caller is the owner and looks at the
         * results right after. */
        return n;
}

Task *task_runner_take_results(TaskRunner *r, size_t max_n, size_t max_bytes, size_t *ret_n, size_t *ret_held) {
        Task *head, *t, *last = NULL;
        size_t n = 0, bytes = 0;

        pthread_mutex_lock(&r->lock);
        head = r->done_head;
        for (t = head; t && n < MAX(max_n, (size_t) 1); t = t->next) {
                size_t s = task_result_size(t);

                if (n > 0 && bytes + s > max_bytes)
                        break;
                bytes += s;
                last = t;
                n++;
        }
        if (last) {
                r->done_head = last->next;
                if (!r->done_head)
                        r->done_tail = NULL;
                last->next = NULL;
        } else
                head = NULL;
        r->notify_armed = true;
        if (ret_held)
                *ret_held = r->n_queued + r->n_running;
        pthread_mutex_unlock(&r->lock);

        if (ret_n)
                *ret_n = n;
        return head;
}

size_t task_runner_queued(TaskRunner *r, bool *ret_results_waiting) {
        size_t n;

        pthread_mutex_lock(&r->lock);
        n = r->n_queued;
        if (ret_results_waiting)
                *ret_results_waiting = r->done_head != NULL;
        pthread_mutex_unlock(&r->lock);
        return n;
}

size_t task_runner_held(TaskRunner *r) {
        size_t n;

        pthread_mutex_lock(&r->lock);
        n = r->n_queued + r->n_running;
        pthread_mutex_unlock(&r->lock);
        return n;
}

bool task_runner_set_pid(TaskRunner *r, Task *t, pid_t pid) {
        bool killed;

        pthread_mutex_lock(&r->lock);
        t->pid = pid;
        killed = t->killed || r->stopping;
        pthread_mutex_unlock(&r->lock);
        return killed && pid > 0;
}

bool task_runner_is_stopping(TaskRunner *r) {
        bool s;

        pthread_mutex_lock(&r->lock);
        s = r->stopping;
        pthread_mutex_unlock(&r->lock);
        return s;
}
