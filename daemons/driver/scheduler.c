/* The scheduler as a whole: configuration, hosts, executors and the attempts
 * they hold, offers across jobs (FIFO), the job lists.  One job's tasks and
 * queues are scheduler-job.c's. */
#include <stdio.h>

#include "alloc-util.h"
#include "fifo.h"
#include "macro.h"
#include "scheduler-internal.h"

static const char *const job_state_table[_JOB_STATE_MAX] = {
        [JOB_RUNNING] = "running",
        [JOB_SUCCEEDED] = "succeeded",
        [JOB_FAILED] = "failed",
        [JOB_CANCELLED] = "cancelled",
};

static const char *const task_state_table[_TASK_STATE_MAX] = {
        [TASK_PENDING] = "pending",
        [TASK_RUNNING] = "running",
        [TASK_SUCCEEDED] = "succeeded",
        [TASK_FAILED] = "failed",
        [TASK_KILLED] = "killed",
};

static const char *const task_verdict_table[_TASK_VERDICT_MAX] = {
        [TASK_RESULT_ACCEPTED] = "accepted",
        [TASK_RESULT_RETRYING] = "retrying",
        [TASK_RESULT_JOB_FAILED] = "job-failed",
        [TASK_RESULT_DROPPED] = "dropped",
};

const char *job_state_to_string(JobState s) {
        return s >= 0 && s < _JOB_STATE_MAX ? job_state_table[s] : NULL;
}

const char *task_state_to_string(TaskState s) {
        return s >= 0 && s < _TASK_STATE_MAX ? task_state_table[s] : NULL;
}

const char *task_verdict_to_string(TaskVerdict v) {
        return v >= 0 && v < _TASK_VERDICT_MAX ? task_verdict_table[v] : NULL;
}

void scheduler_config_default(SchedulerConfig *cfg) {
        *cfg = (SchedulerConfig) {
                .task_max_failures = 4,
                .locality_wait_usec = 3 * USEC_PER_SEC,
                .default_parallelism = 0,
                .max_result_bytes = 1024ULL * 1024 * 1024,
                .executor_prefetch = 0,
        };
}

static bool config_is_valid(const SchedulerConfig *cfg) {
        return cfg->task_max_failures >= 1 && cfg->task_max_failures <= SCHEDULER_MAX_FAILURES_MAX &&
               cfg->default_parallelism <= SCHEDULER_CORES_MAX && cfg->executor_prefetch <= SCHEDULER_CORES_MAX;
}

int scheduler_new(const SchedulerConfig *cfg, Scheduler **ret) {
        Scheduler *s;

        if (!ret || (cfg && !config_is_valid(cfg)))
                return -EINVAL;

        s = calloc(1, sizeof(Scheduler));
        if (!s)
                return -ENOMEM;
        if (cfg)
                s->config = *cfg;
        else
                scheduler_config_default(&s->config);
        sched_map_init(&s->executors_by_id);
        if (hashmap_new(&s->hosts_by_name) < 0 || hashmap_new(&s->jobs_by_id) < 0) {
                scheduler_free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

int scheduler_set_config(Scheduler *s, const SchedulerConfig *cfg) {
        if (!s || !cfg || !config_is_valid(cfg))
                return -EINVAL;
        s->config = *cfg;
        return 0;
}

static void executor_free(SchedExecutor *e) {
        if (!e)
                return;
        free(e->running);
        free(e);
}

Scheduler *scheduler_free(Scheduler *s) {
        if (!s)
                return NULL;
        /* Jobs first: their tasks point at executors, and nothing needs to
         * be detached when everything goes. */
        while (s->jobs_head) {
                Job *j = s->jobs_head;

                s->jobs_head = j->next;
                sched_job_free(j);
        }
        for (uint32_t i = 0; i < s->n_executors; i++)
                executor_free(s->executors[i]);
        free(s->executors);
        for (uint32_t i = 0; i < s->n_hosts; i++) {
                free(s->hosts[i]->name);
                free(s->hosts[i]);
        }
        free(s->hosts);
        free(s->host_marks);
        sched_map_done(&s->executors_by_id);
        hashmap_free(s->hosts_by_name);
        hashmap_free(s->jobs_by_id);
        free(s);
        return NULL;
}

/* ---- hosts ---- */

/* Hosts are never forgotten: a host id stays valid for the jobs that prefer
 * it.  There are as many as the cluster has hosts, plus names jobs prefer. */
int sched_intern_host(Scheduler *s, const char *name, uint32_t *ret) {
        Host *h;
        int r;

        if (isempty(name))
                return -EINVAL;
        h = hashmap_get(s->hosts_by_name, name);
        if (h) {
                *ret = h->id;
                return 0;
        }
        r = GREEDY_REALLOC(s->hosts, s->cap_hosts, s->n_hosts + 1);
        if (r < 0)
                return r;
        r = GREEDY_REALLOC(s->host_marks, s->cap_host_marks, s->n_hosts + 1);
        if (r < 0)
                return r;
        h = calloc(1, sizeof(Host));
        if (!h)
                return -ENOMEM;
        h->name = strdup(name);
        if (!h->name) {
                free(h);
                return -ENOMEM;
        }
        r = hashmap_put(s->hosts_by_name, h->name, h);
        if (r < 0) {
                free(h->name);
                free(h);
                return r;
        }
        h->id = s->n_hosts;
        s->host_marks[h->id] = 0;
        s->hosts[s->n_hosts++] = h;
        *ret = h->id;
        return 0;
}

/* Marks make de-duplicating a list of n hosts O(n): a host is in the
 * current list when its mark equals the list's generation. */
uint32_t sched_host_marks_begin(Scheduler *s) {
        if (++s->mark_gen == 0) {
                memset(s->host_marks, 0, (size_t) s->cap_host_marks * sizeof(uint32_t));
                s->mark_gen = 1;
        }
        return s->mark_gen;
}

/* True if the host was not yet marked in this generation. */
bool sched_host_mark(Scheduler *s, uint32_t host, uint32_t gen) {
        if (s->host_marks[host] == gen)
                return false;
        s->host_marks[host] = gen;
        return true;
}

/* ---- executors ---- */

int sched_executor_reserve_slot(SchedExecutor *e) {
        return GREEDY_REALLOC(e->running, e->cap_running, e->n_running + 1);
}

void sched_executor_attach(SchedExecutor *e, Job *job, uint32_t index) {
        Task *t = &job->tasks[index];

        t->executor = (uint32_t) e->id + 1;
        t->run_pos = e->n_running;
        e->running[e->n_running++] = (RunEntry) { job, index };
        job->n_in_flight++;
}

void sched_executor_detach(SchedExecutor *e, Job *job, uint32_t index) {
        Task *t = &job->tasks[index];
        RunEntry last = e->running[--e->n_running];

        if (t->run_pos < e->n_running) {
                e->running[t->run_pos] = last;
                last.job->tasks[last.index].run_pos = t->run_pos;
        }
        t->executor = 0;
        job->n_in_flight--;
}

static SchedExecutor *executor_get(const Scheduler *s, int executor_id) {
        return s ? sched_map_get(&s->executors_by_id, executor_id) : NULL;
}

int scheduler_add_executor(Scheduler *s, int executor_id, const char *host, int cores) {
        SchedExecutor *e;
        uint32_t h;
        int r;

        if (!s || executor_id < 0 || cores < 1 || cores > SCHEDULER_CORES_MAX)
                return -EINVAL;
        if (executor_get(s, executor_id))
                return -EEXIST;
        r = sched_intern_host(s, host, &h);
        if (r < 0)
                return r;
        r = GREEDY_REALLOC(s->executors, s->cap_executors, s->n_executors + 1);
        if (r < 0)
                return r;
        e = calloc(1, sizeof(SchedExecutor));
        if (!e)
                return -ENOMEM;
        *e = (SchedExecutor) { .id = executor_id, .host = h, .cores = cores, .slot = s->n_executors };
        r = sched_map_put(&s->executors_by_id, executor_id, e);
        if (r < 0) {
                free(e);
                return r;
        }
        s->executors[s->n_executors++] = e;
        s->hosts[h]->n_executors++;
        s->total_cores += cores;
        return 0;
}

int scheduler_remove_executor(Scheduler *s, int executor_id, const char *reason, usec_t now) {
        _cleanup_free_ char *message = NULL;
        SchedExecutor *e = executor_get(s, executor_id);
        int lost = 0;

        if (!e)
                return -ENOENT;
        if (asprintf(&message, "executor %d lost: %s", executor_id, isempty(reason) ? "unknown reason" : reason) < 0)
                message = NULL;

        while (e->n_running > 0) {
                RunEntry r = e->running[e->n_running - 1];

                if (r.job->tasks[r.index].state == TASK_RUNNING)
                        lost++;
                sched_job_attempt_lost(r.job, r.index, message ?: "executor lost", !e->draining, now);
        }

        sched_map_remove(&s->executors_by_id, executor_id);
        s->executors[e->slot] = s->executors[--s->n_executors];
        s->executors[e->slot]->slot = e->slot;
        s->hosts[e->host]->n_executors--;
        /* The total, not the free cores (Spark 0.8's bug). */
        s->total_cores -= e->cores;
        executor_free(e);
        return lost;
}

int scheduler_set_executor_draining(Scheduler *s, int executor_id, bool draining) {
        SchedExecutor *e = executor_get(s, executor_id);

        if (!e)
                return -ENOENT;
        e->draining = draining;
        return (int) e->n_running;
}

bool scheduler_has_executor(const Scheduler *s, int executor_id) {
        return executor_get(s, executor_id);
}

unsigned scheduler_n_executors(const Scheduler *s) {
        return s ? s->n_executors : 0;
}

long scheduler_total_cores(const Scheduler *s) {
        return s ? s->total_cores : 0;
}

unsigned scheduler_default_parallelism(const Scheduler *s) {
        if (s->config.default_parallelism > 0)
                return s->config.default_parallelism;
        return (unsigned) MAX(s->total_cores, 2L);
}

int scheduler_executor_free_cores(const Scheduler *s, int executor_id) {
        SchedExecutor *e = executor_get(s, executor_id);

        if (!e)
                return -ENOENT;
        return e->cores > (int) e->n_running ? e->cores - (int) e->n_running : 0;
}

static size_t list_running(const SchedExecutor *e, const Job *job, TaskAssignment *out, size_t max, size_t n) {
        for (uint32_t k = 0; k < e->n_running; k++) {
                const RunEntry *r = &e->running[k];

                if (job && r->job != job)
                        continue;
                if (n < max)
                        out[n] = (TaskAssignment) {
                                .job = r->job,
                                .index = r->index,
                                .attempt = r->job->tasks[r->index].attempts,
                                .executor_id = e->id,
                        };
                n++;
        }
        return n;
}

int scheduler_executor_running(const Scheduler *s, int executor_id, TaskAssignment *out, size_t max) {
        SchedExecutor *e = executor_get(s, executor_id);

        if (!e)
                return -ENOENT;
        return (int) list_running(e, NULL, out, max, 0);
}

/* ---- job lists ---- */

void sched_job_gained_pending(Scheduler *s, Job *job) {
        Job *after = s->pending_tail;

        /* Keep submission order; a job re-enters when a task of it is retried,
         * usually the oldest, so walk from the tail. */
        while (after && after->seq > job->seq)
                after = after->pending_prev;
        job->pending_prev = after;
        job->pending_next = after ? after->pending_next : s->pending_head;
        if (job->pending_next)
                job->pending_next->pending_prev = job;
        else
                s->pending_tail = job;
        if (after)
                after->pending_next = job;
        else
                s->pending_head = job;
        job->in_pending = true;
}

void sched_job_lost_pending(Scheduler *s, Job *job) {
        if (job->pending_prev)
                job->pending_prev->pending_next = job->pending_next;
        else
                s->pending_head = job->pending_next;
        if (job->pending_next)
                job->pending_next->pending_prev = job->pending_prev;
        else
                s->pending_tail = job->pending_prev;
        job->pending_prev = job->pending_next = NULL;
        job->in_pending = false;
}

void sched_job_ended(Scheduler *s, Job *job) {
        FIFO_PUSH(s->finished_head, s->finished_tail, finished_next, job);
        job->in_finished = true;
}

Job *scheduler_pop_finished_job(Scheduler *s) {
        Job *job = s ? FIFO_POP(s->finished_head, s->finished_tail, finished_next) : NULL;

        if (job)
                job->in_finished = false;
        return job;
}

static void finished_unlink(Scheduler *s, Job *job) {
        (void) FIFO_REMOVE(s->finished_head, s->finished_tail, finished_next, job);
        job->in_finished = false;
}

int scheduler_submit_job(Scheduler *s, const char *job_id, unsigned n_tasks,
                         const char *const *const *preferred_hosts, unsigned n_preferred,
                         usec_t now, Job **ret) {
        Job *job;
        int r;

        if (!s || isempty(job_id))
                return -EINVAL;
        if (n_tasks > SCHEDULER_TASKS_MAX)
                return -E2BIG;
        if (preferred_hosts && n_preferred != 0 && n_preferred != 1 && n_preferred != n_tasks)
                return -EINVAL;
        if (hashmap_get(s->jobs_by_id, job_id))
                return -EEXIST;

        r = sched_job_new(s, job_id, n_tasks, preferred_hosts, n_preferred, now, &job);
        if (r < 0)
                return r;
        r = hashmap_put(s->jobs_by_id, job->id, job);
        if (r < 0) {
                sched_job_free(job);
                return r;
        }
        job->seq = s->next_seq++;
        job->prev = s->jobs_tail;
        if (s->jobs_tail)
                s->jobs_tail->next = job;
        else
                s->jobs_head = job;
        s->jobs_tail = job;

        s->n_pending += n_tasks;
        if (n_tasks > 0)
                sched_job_gained_pending(s, job);
        else
                sched_job_check_done(job, now);
        if (ret)
                *ret = job;
        return 0;
}

Job *scheduler_find_job(const Scheduler *s, const char *job_id) {
        if (!s || !job_id)
                return NULL;
        return hashmap_get(s->jobs_by_id, job_id);
}

Job *scheduler_first_job(const Scheduler *s) {
        return s ? s->jobs_head : NULL;
}

Job *scheduler_next_job(const Job *job) {
        return job ? job->next : NULL;
}

int scheduler_remove_job(Scheduler *s, Job *job) {
        if (!s || !job)
                return -EINVAL;
        if (job->state == JOB_RUNNING)
                return -EBUSY;
        sched_job_release_slots(job);
        if (job->in_finished)
                finished_unlink(s, job);
        if (job->prev)
                job->prev->next = job->next;
        else
                s->jobs_head = job->next;
        if (job->next)
                job->next->prev = job->prev;
        else
                s->jobs_tail = job->prev;
        hashmap_remove(s->jobs_by_id, job->id);
        sched_job_free(job);
        return 0;
}

/* ---- offers, results, kills ---- */

int scheduler_offer(Scheduler *s, int executor_id, int free_slots, usec_t now,
                    TaskAssignment *out, size_t max_out) {
        SchedExecutor *e = executor_get(s, executor_id);
        long room;
        size_t budget, n = 0;

        if (!e)
                return -ENOENT;
        if (free_slots < 0 || (!out && max_out > 0))
                return -EINVAL;
        if (e->draining)
                return 0;
        room = (long) e->cores + (long) s->config.executor_prefetch - (long) e->n_running;
        if (room <= 0)
                return 0;
        budget = MIN(MIN((size_t) free_slots, max_out), (size_t) room);

        for (Job *j = s->pending_head, *next; j && n < budget; j = next) {
                int r;

                next = j->pending_next;  /* j may leave the list */
                r = sched_job_offer(j, e, now, out + n, budget - n);
                if (r < 0)
                        return n > 0 ? (int) n : r;
                n += (size_t) r;
        }
        return (int) n;
}

usec_t scheduler_next_locality_deadline(Scheduler *s, usec_t now) {
        usec_t next = USEC_INFINITY;

        for (Job *j = s ? s->pending_head : NULL; j; j = j->pending_next) {
                usec_t d;

                if (sched_job_waits_for_locality(j, now, &d))
                        next = MIN(next, d);
        }
        return next;
}

size_t scheduler_n_pending(const Scheduler *s) {
        return s ? s->n_pending : 0;
}

int scheduler_task_finished(Scheduler *s, Job *job, unsigned index, unsigned attempt,
                            int executor_id, bool success, uint64_t result_bytes,
                            const char *error, usec_t now) {
        if (!s || !job || job->scheduler != s)
                return -EINVAL;
        return sched_job_task_finished(job, index, attempt, executor_id, success, result_bytes, error, now);
}

int scheduler_cancel_job(Scheduler *s, Job *job, usec_t now) {
        if (!s || !job || job->scheduler != s)
                return -EINVAL;
        return sched_job_cancel(job, now);
}

int scheduler_kill_task(Scheduler *s, Job *job, unsigned index, usec_t now, TaskAssignment *ret) {
        if (!s || !job || job->scheduler != s)
                return -EINVAL;
        return sched_job_kill_task(job, index, now, ret);
}

int scheduler_task_restore(Scheduler *s, Job *job, unsigned index, unsigned attempts, uint64_t result_bytes,
                           usec_t now) {
        if (!s || !job || job->scheduler != s)
                return -EINVAL;
        return sched_job_task_restore(job, index, attempts, result_bytes, now);
}

size_t scheduler_job_in_flight(const Scheduler *s, const Job *job, TaskAssignment *out, size_t max) {
        size_t n = 0;

        if (!s || !job || job->n_in_flight == 0)
                return 0;
        for (uint32_t i = 0; i < s->n_executors; i++)
                n = list_running(s->executors[i], job, out, max, n);
        return n;
}

/* ---- job queries ---- */

const char *scheduler_job_id(const Job *job) {
        return job ? job->id : NULL;
}

JobState scheduler_job_state(const Job *job) {
        return job ? job->state : _JOB_STATE_INVALID;
}

const char *scheduler_job_reason(const Job *job) {
        if (!job || job->state == JOB_RUNNING || job->state == JOB_SUCCEEDED)
                return NULL;
        return job->reason ?: job_state_to_string(job->state);
}

unsigned scheduler_job_n_tasks(const Job *job) {
        return job ? job->n_tasks : 0;
}

void scheduler_job_counts(const Job *job, JobCounts *ret) {
        if (!job) {
                *ret = (JobCounts) {};
                return;
        }
        *ret = (JobCounts) {
                .tasks = job->n_tasks,
                .pending = job->n_pending,
                .running = job->n_running,
                .succeeded = job->n_succeeded,
                .failed = job->n_failed,
                .killed = job->n_killed,
                .in_flight = job->n_in_flight,
        };
}

usec_t scheduler_job_submitted_at(const Job *job) {
        return job ? job->submitted_at : 0;
}

usec_t scheduler_job_finished_at(const Job *job) {
        return job ? job->finished_at : 0;
}
