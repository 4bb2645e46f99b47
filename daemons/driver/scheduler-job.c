/* One job: its tasks' states, its pending queues (with the locality queues
 * delay scheduling needs), launching, results, retries, kills.
 *
 * Re-queuing a task must never fail, or a failed attempt could lose its task:
 * so every vector a failure writes to (the queues the task returns to, the
 * job's error list) is grown at launch time to hold one entry for every
 * running attempt.  A launch can then fail cleanly (the offer returns fewer
 * tasks) and a failure never allocates except for its message. */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>

#include "alloc-util.h"
#include "macro.h"
#include "scheduler-internal.h"

/* ---- queues ---- */

/* Room for `need` more retried entries. */
static int queue_reserve(TaskQueue *q, uint32_t need) {
        if (q->cap - q->len >= need)
                return 0;
        if (q->head > 0 && q->head >= q->len / 2) {
                /* Worth it only when it wins back at least half: a copy of the
                 * queue for each launch would not be O(1). */
                memmove(q->retried, q->retried + q->head, (size_t) (q->len - q->head) * sizeof(uint32_t));
                q->len -= q->head;
                q->head = 0;
                if (q->cap - q->len >= need)
                        return 0;
        }
        return GREEDY_REALLOC(q->retried, q->cap, (size_t) q->len + need);
}

static void queue_push_retried(TaskQueue *q, uint32_t index) {
        assert(q->len < q->cap);  /* reserved at launch, see the top */
        q->retried[q->len++] = index;
}

/* The first pending task in the queue, without taking it: launching it makes
 * it non-pending, and the next peek skips it.  Non-pending entries met on the
 * way are dropped for good. */
static int64_t queue_peek(TaskQueue *q, const Task *tasks) {
        while (q->head < q->len) {
                uint32_t i = q->retried[q->head];

                if (tasks[i].state == TASK_PENDING)
                        return i;
                q->head++;
        }
        q->head = q->len = 0;
        while (q->fresh_next < q->fresh_end) {
                uint32_t i = q->fresh ? q->fresh[q->fresh_next] : q->fresh_next;

                if (tasks[i].state == TASK_PENDING)
                        return i;
                q->fresh_next++;
        }
        return -1;
}

/* An explicit list of `n` fresh tasks, filled by queue_add_fresh(). */
static int queue_alloc_fresh(TaskQueue *q, uint32_t n) {
        q->fresh = malloc(MAX(n, 1U) * sizeof(uint32_t));
        return q->fresh ? 0 : -ENOMEM;
}

static void queue_add_fresh(TaskQueue *q, uint32_t index) {
        q->fresh[q->fresh_end++] = index;
}

static void queue_done(TaskQueue *q) {
        free(q->retried);
        free(q->fresh);
        *q = (TaskQueue) {};
}

/* ---- preferred hosts ---- */

static TaskQueue *queue_for_host(Job *job, uint32_t host) {
        if (host >= job->n_host_ids || job->queue_of_host[host] < 0)
                return NULL;
        return &job->host_queues[job->queue_of_host[host]];
}

static void task_prefs(const Job *job, uint32_t index, const uint32_t **ret, uint32_t *ret_n) {
        if (!job->pref_off) {
                *ret = job->pref_hosts;
                *ret_n = job->n_shared_prefs;
        } else {
                *ret = job->pref_hosts + job->pref_off[index];
                *ret_n = job->pref_off[index + 1] - job->pref_off[index];
        }
}

/* Interns the names of one list and appends their ids to ids, each once (a
 * list may name a host twice). */
static int intern_list(Scheduler *s, const char *const *names, uint32_t **ids, size_t *n, size_t *cap) {
        uint32_t gen = sched_host_marks_begin(s);

        for (; names && *names; names++) {
                uint32_t h;
                int r;

                r = sched_intern_host(s, *names, &h);
                if (r < 0)
                        return r;
                if (!sched_host_mark(s, h, gen))
                        continue;
                if (GREEDY_REALLOC(*ids, *cap, *n + 1) < 0)
                        return -ENOMEM;
                (*ids)[(*n)++] = h;
        }
        return 0;
}

static int setup_host_queues(Job *job, const uint32_t *count_of_host) {
        Scheduler *s = job->scheduler;
        uint32_t q = 0;

        job->n_host_ids = s->n_hosts;
        job->queue_of_host = malloc(s->n_hosts * sizeof(int32_t));
        if (!job->queue_of_host)
                return -ENOMEM;
        for (uint32_t h = 0; h < s->n_hosts; h++)
                if (count_of_host[h] > 0)
                        q++;
        job->host_queues = calloc(q, sizeof(TaskQueue));
        job->queue_host = calloc(q, sizeof(uint32_t));
        if (!job->host_queues || !job->queue_host)
                return -ENOMEM;
        job->n_host_queues = q;

        q = 0;
        for (uint32_t h = 0; h < s->n_hosts; h++) {
                job->queue_of_host[h] = -1;
                if (count_of_host[h] == 0)
                        continue;
                job->queue_of_host[h] = (int32_t) q;
                job->queue_host[q] = h;
                if (job->pref_off) {
                        /* Explicit entries, filled in task order by the caller. */
                        if (queue_alloc_fresh(&job->host_queues[q], count_of_host[h]) < 0)
                                return -ENOMEM;
                } else
                        /* Shared list: every task prefers every host. */
                        job->host_queues[q].fresh_end = job->n_tasks;
                q++;
        }
        return 0;
}

static int setup_prefs(Job *job, const char *const *const *lists, unsigned n_lists) {
        Scheduler *s = job->scheduler;
        _cleanup_free_ uint32_t *count_of_host = NULL;
        uint32_t *ids = NULL, n_no_prefs = 0;
        size_t n = 0, cap = 0;
        int r;

        if (n_lists == 1) {
                r = intern_list(s, lists[0], &ids, &n, &cap);
                job->pref_hosts = ids;
                if (r < 0)
                        return r;
                job->n_shared_prefs = (uint32_t) n;
        } else {
                job->pref_off = malloc(((size_t) job->n_tasks + 1) * sizeof(uint32_t));
                if (!job->pref_off)
                        return -ENOMEM;
                for (uint32_t i = 0; i < job->n_tasks; i++) {
                        job->pref_off[i] = (uint32_t) n;
                        r = intern_list(s, lists[i], &ids, &n, &cap);
                        job->pref_hosts = ids;
                        if (r < 0)
                                return r;
                        if (n > UINT32_MAX / 2)
                                return -E2BIG;
                }
                job->pref_off[job->n_tasks] = (uint32_t) n;
        }
        if (n == 0) {
                /* Lists given, but all empty. */
                free(job->pref_off);
                job->pref_off = NULL;
                return 0;
        }
        job->has_prefs = true;

        count_of_host = calloc(s->n_hosts, sizeof(uint32_t));
        if (!count_of_host)
                return -ENOMEM;
        if (!job->pref_off)
                for (size_t k = 0; k < n; k++)
                        count_of_host[ids[k]] = 1;
        else
                for (size_t k = 0; k < n; k++)
                        count_of_host[ids[k]]++;
        r = setup_host_queues(job, count_of_host);
        if (r < 0)
                return r;

        if (!job->pref_off)
                return 0;

        for (uint32_t i = 0; i < job->n_tasks; i++)
                if (job->pref_off[i] == job->pref_off[i + 1])
                        n_no_prefs++;
        if (n_no_prefs > 0 && queue_alloc_fresh(&job->no_prefs, n_no_prefs) < 0)
                return -ENOMEM;
        for (uint32_t i = 0; i < job->n_tasks; i++) {
                const uint32_t *p;
                uint32_t np;

                task_prefs(job, i, &p, &np);
                if (np == 0)
                        queue_add_fresh(&job->no_prefs, i);
                for (uint32_t k = 0; k < np; k++)
                        queue_add_fresh(queue_for_host(job, p[k]), i);
        }
        return 0;
}

/* ---- life cycle ---- */

Job *sched_job_free(Job *job) {
        if (!job)
                return NULL;
        for (uint32_t i = 0; i < job->n_errors; i++)
                free(job->errors[i].message);
        free(job->errors);
        queue_done(&job->any);
        queue_done(&job->no_prefs);
        for (uint32_t q = 0; q < job->n_host_queues; q++)
                queue_done(&job->host_queues[q]);
        free(job->host_queues);
        free(job->queue_host);
        free(job->queue_of_host);
        free(job->pref_off);
        free(job->pref_hosts);
        free(job->tasks);
        free(job->reason);
        free(job->id);
        free(job);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Job *, sched_job_free);

int sched_job_new(Scheduler *s, const char *id, uint32_t n_tasks,
                  const char *const *const *preferred_hosts, unsigned n_preferred, usec_t now, Job **ret) {
        _cleanup_(sched_job_freep) Job *job = NULL;
        int r;

        job = calloc(1, sizeof(Job));
        if (!job)
                return -ENOMEM;
        job->scheduler = s;
        job->id = strdup(id);
        job->tasks = calloc(MAX(n_tasks, 1U), sizeof(Task));  /* TASK_PENDING is 0 */
        if (!job->id || !job->tasks)
                return -ENOMEM;
        job->n_tasks = n_tasks;
        job->n_pending = n_tasks;
        job->any.fresh_end = n_tasks;
        job->state = JOB_RUNNING;
        job->submitted_at = now;

        if (preferred_hosts && n_preferred > 0 && n_tasks > 0) {
                r = setup_prefs(job, preferred_hosts, n_preferred);
                if (r < 0)
                        return r;
        }
        job->locality = job->has_prefs && s->config.locality_wait_usec > 0 ? LOCALITY_NODE : LOCALITY_ANY;
        job->locality_since = now;

        *ret = TAKE_PTR(job);
        return 0;
}

/* ---- state changes ---- */

/* Ends a running job: what is pending is dropped, what runs is killed (the
 * attempts keep their slots until their executors report them). */
static void job_end(Job *job, JobState state, char *reason, usec_t now) {
        Scheduler *s = job->scheduler;

        assert(job->state == JOB_RUNNING);
        if (job->n_pending + job->n_running > 0)
                for (uint32_t i = 0; i < job->n_tasks; i++)
                        if (job->tasks[i].state == TASK_PENDING || job->tasks[i].state == TASK_RUNNING)
                                job->tasks[i].state = TASK_KILLED;
        s->n_pending -= job->n_pending;
        job->n_killed += job->n_pending + job->n_running;
        job->n_pending = job->n_running = 0;
        if (job->in_pending)
                sched_job_lost_pending(s, job);
        job->state = state;
        job->reason = reason;
        job->finished_at = now;
        sched_job_ended(s, job);
}

void sched_job_check_done(Job *job, usec_t now) {
        char *reason = NULL;

        if (job->state != JOB_RUNNING || job->n_succeeded + job->n_failed + job->n_killed < job->n_tasks)
                return;
        if (job->n_succeeded == job->n_tasks) {
                job_end(job, JOB_SUCCEEDED, NULL, now);
                return;
        }
        /* Failures end the job at once, so what is left are killed tasks. */
        if (asprintf(&reason, "%u of %u tasks killed", job->n_killed, job->n_tasks) < 0)
                reason = NULL;
        job_end(job, JOB_CANCELLED, reason, now);
}

static void record_error(Job *job, Task *t, const char *message) {
        assert(job->n_errors < job->cap_errors);  /* reserved at launch */
        job->errors[job->n_errors] = (TaskError) {
                .message = strdup(message),
                .prev = t->last_error,
        };
        t->last_error = ++job->n_errors;
}

static void task_requeue(Job *job, uint32_t index) {
        Scheduler *s = job->scheduler;
        Task *t = &job->tasks[index];

        t->state = TASK_PENDING;
        job->n_pending++;
        s->n_pending++;
        if (!job->in_pending)
                sched_job_gained_pending(s, job);

        queue_push_retried(&job->any, index);
        if (job->has_prefs) {
                const uint32_t *p;
                uint32_t np;

                task_prefs(job, index, &p, &np);
                if (np == 0)
                        queue_push_retried(&job->no_prefs, index);
                for (uint32_t k = 0; k < np; k++)
                        queue_push_retried(queue_for_host(job, p[k]), index);
        }
}

/* A running attempt failed; it no longer holds a slot and no longer counts
 * as running. */
static void attempt_failed(Job *job, uint32_t index, const char *message, usec_t now) {
        Task *t = &job->tasks[index];
        char *reason = NULL;

        record_error(job, t, message);
        t->failures++;
        if (t->failures < job->scheduler->config.task_max_failures) {
                task_requeue(job, index);
                return;
        }
        t->state = TASK_FAILED;
        job->n_failed++;
        if (asprintf(&reason, "task %u failed %u times; last error: %s", index, t->failures, message) < 0)
                reason = NULL;
        job_end(job, JOB_FAILED, reason, now);
}

void sched_job_attempt_lost(Job *job, uint32_t index, const char *message, bool counted, usec_t now) {
        Task *t = &job->tasks[index];

        sched_executor_detach(sched_task_executor(job->scheduler, t), job, index);
        if (t->state != TASK_RUNNING)
                return;  /* killed, nothing to retry */
        job->n_running--;
        if (!counted) {
                task_requeue(job, index);
                return;
        }
        attempt_failed(job, index, message, now);
}

/* Grows what a failure of this attempt would write to (see the top). */
static int reserve_for_failure(Job *job, uint32_t index) {
        uint32_t need = job->n_running + 1;
        int r;

        if (GREEDY_REALLOC(job->errors, job->cap_errors, (size_t) job->n_errors + need) < 0)
                return -ENOMEM;
        r = queue_reserve(&job->any, need);
        if (r < 0)
                return r;
        if (job->has_prefs) {
                const uint32_t *p;
                uint32_t np;

                task_prefs(job, index, &p, &np);
                if (np == 0)
                        return queue_reserve(&job->no_prefs, need);
                for (uint32_t k = 0; k < np; k++) {
                        r = queue_reserve(queue_for_host(job, p[k]), need);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int task_launch(Job *job, uint32_t index, SchedExecutor *e, TaskAssignment *ret) {
        Scheduler *s = job->scheduler;
        Task *t = &job->tasks[index];
        int r;

        r = sched_executor_reserve_slot(e);
        if (r < 0)
                return r;
        r = reserve_for_failure(job, index);
        if (r < 0)
                return r;

        t->state = TASK_RUNNING;
        t->attempts++;
        job->n_pending--;
        job->n_running++;
        s->n_pending--;
        sched_executor_attach(e, job, index);
        if (job->n_pending == 0)
                sched_job_lost_pending(s, job);
        *ret = (TaskAssignment) {
                .job = job,
                .index = index,
                .attempt = t->attempts,
                .executor_id = e->id,
        };
        return 0;
}

/* ---- delay scheduling ---- */

static Locality job_locality(Job *job, usec_t now) {
        usec_t wait = job->scheduler->config.locality_wait_usec;

        if (job->locality == LOCALITY_NODE && now >= job->locality_since && now - job->locality_since >= wait) {
                job->locality = LOCALITY_ANY;
                job->locality_since += wait;
        }
        return job->locality;
}

/* Whether waiting can pay off: some pending task prefers a host that has an
 * executor. */
static bool job_locality_possible(Job *job) {
        Scheduler *s = job->scheduler;

        for (uint32_t q = 0; q < job->n_host_queues; q++)
                if (s->hosts[job->queue_host[q]]->n_executors > 0 &&
                    queue_peek(&job->host_queues[q], job->tasks) >= 0)
                        return true;
        return false;
}

bool sched_job_waits_for_locality(Job *job, usec_t now, usec_t *ret_deadline) {
        if (!job->has_prefs || job_locality(job, now) == LOCALITY_ANY)
                return false;
        *ret_deadline = job->locality_since + job->scheduler->config.locality_wait_usec;
        return true;
}

int sched_job_offer(Job *job, SchedExecutor *e, usec_t now, TaskAssignment *out, size_t max) {
        TaskQueue *local;
        bool any_ok, checked = false;
        size_t n = 0;
        int r = 0;

        if (!job->has_prefs) {
                while (n < max) {
                        int64_t i = queue_peek(&job->any, job->tasks);

                        if (i < 0)
                                break;
                        r = task_launch(job, (uint32_t) i, e, &out[n]);
                        if (r < 0)
                                return n > 0 ? (int) n : r;
                        n++;
                }
                return (int) n;
        }

        local = queue_for_host(job, e->host);
        any_ok = job_locality(job, now) == LOCALITY_ANY;
        while (n < max) {
                int64_t i;

                if (local && (i = queue_peek(local, job->tasks)) >= 0) {
                        r = task_launch(job, (uint32_t) i, e, &out[n]);
                        if (r < 0)
                                break;
                        job->locality = LOCALITY_NODE;
                        job->locality_since = now;
                        any_ok = job->scheduler->config.locality_wait_usec == 0;
                } else if ((i = queue_peek(&job->no_prefs, job->tasks)) >= 0) {
                        r = task_launch(job, (uint32_t) i, e, &out[n]);
                        if (r < 0)
                                break;
                } else {
                        if (!any_ok && !checked) {
                                any_ok = !job_locality_possible(job);
                                checked = true;
                        }
                        if (!any_ok || (i = queue_peek(&job->any, job->tasks)) < 0)
                                break;
                        r = task_launch(job, (uint32_t) i, e, &out[n]);
                        if (r < 0)
                                break;
                        if (job->locality == LOCALITY_ANY)
                                job->locality_since = now;
                }
                n++;
        }
        if (n == 0 && r < 0)
                return r;
        return (int) n;
}

/* ---- results, kills ---- */

int sched_job_task_finished(Job *job, uint32_t index, unsigned attempt, int executor_id,
                            bool success, uint64_t result_bytes, const char *error, usec_t now) {
        uint64_t max = job->scheduler->config.max_result_bytes;
        Task *t;
        char *reason = NULL;

        if (index >= job->n_tasks)
                return -EINVAL;
        t = &job->tasks[index];
        if (!t->executor || t->attempts != attempt || sched_task_executor_id(t) != executor_id)
                return TASK_RESULT_DROPPED;
        sched_executor_detach(sched_task_executor(job->scheduler, t), job, index);
        if (t->state != TASK_RUNNING)
                return TASK_RESULT_DROPPED;  /* killed: the slot is free again, that is all */
        job->n_running--;

        if (!success) {
                attempt_failed(job, index, isempty(error) ? "task failed" : error, now);
                return job->state == JOB_FAILED ? TASK_RESULT_JOB_FAILED : TASK_RESULT_RETRYING;
        }

        if (max > 0 && result_bytes > max - MIN(job->result_bytes, max)) {
                /* Spark's maxResultSize: the driver would hold too much. */
                record_error(job, t, "result exceeds the job's max_result_bytes");
                t->failures++;
                t->state = TASK_FAILED;
                job->n_failed++;
                if (asprintf(&reason, "total size of results exceeds max_result_bytes (%" PRIu64 ")", max) < 0)
                        reason = NULL;
                job_end(job, JOB_FAILED, reason, now);
                return TASK_RESULT_JOB_FAILED;
        }
        job->result_bytes += result_bytes;
        t->state = TASK_SUCCEEDED;
        job->n_succeeded++;
        sched_job_check_done(job, now);
        return TASK_RESULT_ACCEPTED;
}

int sched_job_cancel(Job *job, usec_t now) {
        if (job->state != JOB_RUNNING)
                return -EALREADY;
        job_end(job, JOB_CANCELLED, strdup("cancelled"), now);
        return (int) job->n_in_flight;
}

int sched_job_kill_task(Job *job, uint32_t index, usec_t now, TaskAssignment *ret) {
        Scheduler *s = job->scheduler;
        Task *t;

        if (index >= job->n_tasks)
                return -EINVAL;
        t = &job->tasks[index];
        switch (t->state) {
        case TASK_PENDING:
                t->state = TASK_KILLED;
                job->n_pending--;
                s->n_pending--;
                job->n_killed++;
                if (job->n_pending == 0 && job->in_pending)
                        sched_job_lost_pending(s, job);
                sched_job_check_done(job, now);
                return 0;
        case TASK_RUNNING:
                t->state = TASK_KILLED;
                job->n_running--;
                job->n_killed++;
                if (ret)
                        *ret = (TaskAssignment) {
                                .job = job,
                                .index = index,
                                .attempt = t->attempts,
                                .executor_id = sched_task_executor_id(t),
                        };
                sched_job_check_done(job, now);
                return 1;
        default:
                return -EALREADY;
        }
}

int sched_job_task_restore(Job *job, uint32_t index, unsigned attempts, uint64_t result_bytes, usec_t now) {
        Scheduler *s = job->scheduler;
        Task *t;

        if (index >= job->n_tasks)
                return -EINVAL;
        t = &job->tasks[index];
        if (t->state != TASK_PENDING || job->state != JOB_RUNNING)
                return -EALREADY;
        /* as a kill of a pending task, but it succeeded */
        t->state = TASK_SUCCEEDED;
        t->attempts = (uint16_t) MIN(attempts, (unsigned) UINT16_MAX);
        job->n_pending--;
        s->n_pending--;
        job->n_succeeded++;
        job->result_bytes += result_bytes;
        if (job->n_pending == 0 && job->in_pending)
                sched_job_lost_pending(s, job);
        sched_job_check_done(job, now);
        return 0;
}

void sched_job_release_slots(Job *job) {
        for (uint32_t i = 0; job->n_in_flight > 0 && i < job->n_tasks; i++)
                if (job->tasks[i].executor)
                        sched_executor_detach(sched_task_executor(job->scheduler, &job->tasks[i]), job, i);
}

/* ---- queries ---- */

int scheduler_task_info(const Job *job, unsigned index, TaskInfo *ret) {
        const Task *t;

        if (!job || index >= job->n_tasks || !ret)
                return -EINVAL;
        t = &job->tasks[index];
        *ret = (TaskInfo) {
                .state = t->state,
                .attempts = t->attempts,
                .failures = t->failures,
                .executor_id = sched_task_executor_id(t),
        };
        return 0;
}

int scheduler_task_errors(const Job *job, unsigned index, const char **out, size_t max) {
        size_t n = 0, k;

        if (!job || index >= job->n_tasks)
                return -EINVAL;
        for (uint32_t e = job->tasks[index].last_error; e > 0; e = job->errors[e - 1].prev)
                n++;
        /* The chain runs newest first. */
        k = n;
        for (uint32_t e = job->tasks[index].last_error; e > 0; e = job->errors[e - 1].prev) {
                k--;
                if (k < max)
                        out[k] = job->errors[e - 1].message ?: "(reason lost: out of memory)";
        }
        return (int) n;
}
