/* The scheduler's data structures, shared by scheduler.c (executors, hosts,
 * offers, the job lists) and scheduler-job.c (one job's tasks and queues). */
#pragma once

#include "hashmap.h"
#include "scheduler-map.h"
#include "scheduler.h"

typedef struct SchedExecutor SchedExecutor;

/* A host name interned to a small id, so that locality is an array lookup. */
typedef struct Host {
        char *name;
        uint32_t id;
        unsigned n_executors;  /* live executors on it */
} Host;

/* An attempt holding a slot on an executor; the task records its position
 * so that it leaves the executor's vector in O(1). */
typedef struct RunEntry {
        Job *job;
        uint32_t index;
} RunEntry;

struct SchedExecutor {
        int id;
        uint32_t host;
        int cores;
        uint32_t slot;          /* position in Scheduler.executors */
        RunEntry *running;      /* attempts holding slots, killed ones included */
        uint32_t n_running, cap_running;
        bool draining;          /* offered nothing; its loss costs no attempt */
};

/* Pending task indices: first the retried ones (consumed from head), then
 * the fresh ones, fresh[fresh_next..fresh_end) or, when fresh is NULL, the
 * indices fresh_next..fresh_end themselves (a job's tasks in order, without
 * storing them).  Entries are removed lazily: a task that is no longer
 * pending is skipped when met, so a task may sit in several queues (its
 * hosts' and the job's) and leave all of them by launching once. */
typedef struct TaskQueue {
        uint32_t *retried;
        uint32_t head, len, cap;
        uint32_t *fresh;
        uint32_t fresh_next, fresh_end;
} TaskQueue;

/* 16 bytes: a job of ten million tasks keeps them in 160 MB. */
typedef struct Task {
        uint32_t executor;      /* 1 + the id of the executor where the current attempt holds a slot; 0: none */
        uint32_t run_pos;       /* index in executor->running */
        uint32_t last_error;    /* 1 + index of the newest TaskError in job->errors, 0: none */
        uint16_t attempts;
        uint16_t failures : 12; /* at most task_max_failures (1000) */
        uint16_t state : 4;     /* TaskState */
} Task;
_Static_assert(sizeof(Task) == 16, "a task's bookkeeping is 16 bytes");

typedef struct TaskError {
        char *message;          /* NULL if it could not be stored */
        uint32_t prev;          /* the task's previous error, same encoding as last_error */
} TaskError;

typedef enum Locality {
        LOCALITY_NODE,
        LOCALITY_ANY,
} Locality;

struct Job {
        Scheduler *scheduler;
        char *id;
        uint64_t seq;           /* submission order */
        JobState state;
        char *reason;
        usec_t submitted_at, finished_at;
        uint64_t result_bytes;

        uint32_t n_tasks;
        Task *tasks;
        uint32_t n_pending, n_running, n_succeeded, n_failed, n_killed, n_in_flight;

        TaskError *errors;
        uint32_t n_errors, cap_errors;

        /* Every pending task; tasks that failed come before fresh ones. */
        TaskQueue any;

        /* Locality, only when some task prefers a host. */
        bool has_prefs;
        TaskQueue no_prefs;         /* tasks without preference */
        uint32_t *pref_off;         /* task i prefers pref_hosts[pref_off[i]..pref_off[i+1]); NULL: shared */
        uint32_t *pref_hosts;       /* host ids; when shared, the one list of every task */
        uint32_t n_shared_prefs;
        int32_t *queue_of_host;     /* host id -> index in host_queues, -1; n_host_ids entries */
        uint32_t n_host_ids;
        TaskQueue *host_queues;
        uint32_t *queue_host;       /* index in host_queues -> host id */
        uint32_t n_host_queues;
        Locality locality;
        usec_t locality_since;      /* submission or last launch at the current level */

        Job *prev, *next;                   /* Scheduler.jobs, submission order */
        Job *pending_prev, *pending_next;   /* Scheduler.pending_jobs: jobs with pending tasks */
        bool in_pending;
        Job *finished_next;                 /* Scheduler.finished queue */
        bool in_finished;
};

struct Scheduler {
        SchedulerConfig config;

        SchedMap executors_by_id;
        SchedExecutor **executors;
        uint32_t n_executors, cap_executors;
        long total_cores;

        Hashmap *hosts_by_name;
        Host **hosts;
        uint32_t n_hosts, cap_hosts;
        uint32_t *host_marks;       /* scratch for de-duplicating host lists */
        uint32_t cap_host_marks, mark_gen;

        Hashmap *jobs_by_id;
        Job *jobs_head, *jobs_tail;
        Job *pending_head, *pending_tail;
        Job *finished_head, *finished_tail;
        uint64_t next_seq;
        size_t n_pending;
};

/* The executor where task t's attempt holds a slot (NULL: none), and its id
 * (-1: none). */
static inline int sched_task_executor_id(const Task *t) {
        return t->executor ? (int) (t->executor - 1) : -1;
}

static inline SchedExecutor *sched_task_executor(const Scheduler *s, const Task *t) {
        return t->executor ? sched_map_get(&s->executors_by_id, (int64_t) t->executor - 1) : NULL;
}

/* scheduler.c */
int sched_intern_host(Scheduler *s, const char *name, uint32_t *ret);
uint32_t sched_host_marks_begin(Scheduler *s);
bool sched_host_mark(Scheduler *s, uint32_t host, uint32_t gen);
int sched_executor_reserve_slot(SchedExecutor *e);
void sched_executor_attach(SchedExecutor *e, Job *job, uint32_t index);
void sched_executor_detach(SchedExecutor *e, Job *job, uint32_t index);
void sched_job_gained_pending(Scheduler *s, Job *job);
void sched_job_lost_pending(Scheduler *s, Job *job);
void sched_job_ended(Scheduler *s, Job *job);

/* scheduler-job.c */
int sched_job_new(Scheduler *s, const char *id, uint32_t n_tasks,
                  const char *const *const *preferred_hosts, unsigned n_preferred, usec_t now, Job **ret);
Job *sched_job_free(Job *job);
void sched_job_check_done(Job *job, usec_t now);
int sched_job_offer(Job *job, SchedExecutor *e, usec_t now, TaskAssignment *out, size_t max);
bool sched_job_waits_for_locality(Job *job, usec_t now, usec_t *ret_deadline);
/* counted false: the attempt is re-queued without counting as a failure
 * (its executor was drained). */
void sched_job_attempt_lost(Job *job, uint32_t index, const char *message, bool counted, usec_t now);
int sched_job_task_finished(Job *job, uint32_t index, unsigned attempt, int executor_id,
                            bool success, uint64_t result_bytes, const char *error, usec_t now);
int sched_job_cancel(Job *job, usec_t now);
int sched_job_kill_task(Job *job, uint32_t index, usec_t now, TaskAssignment *ret);
int sched_job_task_restore(Job *job, uint32_t index, unsigned attempts, uint64_t result_bytes, usec_t now);
void sched_job_release_slots(Job *job);
