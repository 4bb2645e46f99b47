/* The driver's task scheduler: which task runs where and when, with no I/O and
 * no clock of its own (every call that needs the time takes `now`).
 *
 * The shape is Spark 0.8's StandaloneSchedulerBackend + ClusterScheduler +
 * TaskSetManager: executors register with their host and cores; the driver
 * asks for work with scheduler_offer() when an executor registers, when it
 * has finished tasks and on the revive timer; the scheduler hands out
 * (job, task index, attempt) triples; results come back through
 * scheduler_task_finished(), which says whether a result is the one to keep.
 * Task payloads (inputs, outputs) stay with the caller.
 *
 * What the caller must do:
 *  - After scheduler_submit_job(), after a failure was re-queued
 *    (TASK_RESULT_RETRYING) and after scheduler_remove_executor(), tasks may
 *    be pending: offer to executors with free slots (parked polls).
 *  - Arm the revive timer at scheduler_next_locality_deadline() and offer to
 *    every executor with free slots when it fires (delay scheduling).
 *  - After every call that may end a job (task_finished, remove_executor,
 *    cancel_job, kill_task), drain scheduler_pop_finished_job(): for each job
 *    that ended, tell its clients and send TaskKill for every attempt that
 *    scheduler_job_in_flight() still lists.
 *  - An executor reports the end of every attempt it was given, killed ones
 *    included: a killed attempt holds its executor slot until then (so a slot
 *    is never handed out twice), or until its executor or its job is removed.
 *
 * Counting: total cores are the sum of the live executors' cores; removing
 * an executor subtracts its *total* cores (Spark 0.8 subtracted its free
 * cores, which let the total drift upward).
 *
 * Failures: an attempt fails when its executor reports a failure or when its
 * executor is lost.  Both count toward task_max_failures.  Spark 0.8 did not
 * count a lost executor (executorLost re-queued with state KILLED, which it
 * never counted); but a function task runs inside the executor process, so a
 * task that crashes its executor would be retried for ever, taking an
 * executor down each time (later Spark counts such losses too).  The task
 * fails after task_max_failures failed attempts (Spark 0.8 allowed one more)
 * and its job fails at once (Spark's abort): its other pending tasks end
 * KILLED and its running attempts are killed.  Each failed attempt's reason
 * is kept.  Within a job, re-queued tasks run before fresh ones.  The one
 * loss that costs no attempt is that of a draining executor (its worker was
 * drained, docs/DESIGN.md "Drain"): its tasks did nothing wrong.
 *
 * Exactly one result per task: a result is accepted only from the task's
 * current attempt, while that attempt is running, on the executor it was
 * launched on.  Anything else (an attempt superseded after its executor was
 * lost, a duplicate, a killed attempt, a cancelled or finished job) is
 * TASK_RESULT_DROPPED.
 *
 * Delay scheduling (Spark's TaskSetManager, with two levels NODE_LOCAL and
 * ANY): a job starts at NODE_LOCAL.  At NODE_LOCAL it launches only tasks that
 * prefer the offering executor's host and tasks with no preference.  It moves
 * to ANY once locality_wait has passed since it was submitted or since it
 * last launched a task on a preferred host, and then launches anything; a
 * later launch on a preferred host brings it back to NODE_LOCAL.  When none of
 * a job's pending tasks prefers a host that has a live executor, waiting
 * cannot help and the job behaves as ANY (later Spark does the same).  The
 * wait is per job, not per task.  Jobs are served first-in first-out: a job
 * waiting for locality lets later jobs use the slot.
 *
 * Cost: offering and finishing are O(1) amortised per task (per-job pending
 * queues with lazy removal, running attempts indexed per executor); nothing
 * is allocated per task on the hot path once the vectors have grown.
 * Submitting or ending a job is O(tasks). */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time-util.h"

#define USEC_INFINITY UINT64_MAX

/* Upper bounds on what callers may ask for (hostile input is refused). */
#define SCHEDULER_TASKS_MAX (1U << 28)
#define SCHEDULER_MAX_FAILURES_MAX 1000
#define SCHEDULER_CORES_MAX (1 << 20)

typedef struct Scheduler Scheduler;
typedef struct Job Job;

typedef struct SchedulerConfig {
        unsigned task_max_failures;   /* failed attempts after which a task fails, >= 1 */
        usec_t locality_wait_usec;    /* 0: no delay scheduling */
        unsigned default_parallelism; /* 0: max(total cores, 2) */
        uint64_t max_result_bytes;    /* a job's accepted results in total; 0: no limit */
        unsigned executor_prefetch;   /* tasks an executor may hold beyond its cores */
} SchedulerConfig;

/* The shipped defaults (spark.conf(5)). */
void scheduler_config_default(SchedulerConfig *cfg);

typedef enum JobState {
        JOB_RUNNING,
        JOB_SUCCEEDED,
        JOB_FAILED,    /* a task failed task_max_failures times, or results too large */
        JOB_CANCELLED, /* cancelled, or tasks were killed and the rest succeeded */
        _JOB_STATE_MAX,
        _JOB_STATE_INVALID = -EINVAL,
} JobState;

typedef enum TaskState {
        TASK_PENDING,
        TASK_RUNNING,
        TASK_SUCCEEDED,
        TASK_FAILED,
        TASK_KILLED,   /* killed, cancelled with its job, or dropped when its job failed */
        _TASK_STATE_MAX,
        _TASK_STATE_INVALID = -EINVAL,
} TaskState;

/* What scheduler_task_finished() made of a result. */
typedef enum TaskVerdict {
        TASK_RESULT_ACCEPTED,   /* the task succeeded: keep this output */
        TASK_RESULT_RETRYING,   /* failure recorded, the task is pending again */
        TASK_RESULT_JOB_FAILED, /* this result made the job fail: drop the output */
        TASK_RESULT_DROPPED,    /* not the current attempt (late, duplicate, killed): ignore */
        _TASK_VERDICT_MAX,
        _TASK_VERDICT_INVALID = -EINVAL,
} TaskVerdict;

const char *job_state_to_string(JobState s);
const char *task_state_to_string(TaskState s);
const char *task_verdict_to_string(TaskVerdict v);

/* One attempt of one task on one executor. */
typedef struct TaskAssignment {
        Job *job;
        unsigned index;
        unsigned attempt;  /* 1 for the first attempt */
        int executor_id;
} TaskAssignment;

typedef struct JobCounts {
        unsigned tasks;
        unsigned pending;
        unsigned running;    /* attempts running, not being killed */
        unsigned succeeded;
        unsigned failed;
        unsigned killed;
        unsigned in_flight;  /* attempts holding executor slots, killed ones included */
} JobCounts;

typedef struct TaskInfo {
        TaskState state;
        unsigned attempts;   /* attempts launched */
        unsigned failures;   /* attempts failed (executor loss included) */
        int executor_id;     /* where the current attempt holds a slot, -1: nowhere */
} TaskInfo;

/* cfg NULL: the defaults.  -EINVAL on an out-of-range setting. */
int scheduler_new(const SchedulerConfig *cfg, Scheduler **ret);
Scheduler *scheduler_free(Scheduler *s);
/* A reload: the new settings apply from now on (a task that already failed
 * more often than a lowered task_max_failures fails at its next failure; a
 * changed locality_wait counts from each job's last local launch).
 * -EINVAL leaves the old ones. */
int scheduler_set_config(Scheduler *s, const SchedulerConfig *cfg);

/* ---- executors ---- */

/* -EEXIST if a live executor has this id, -EINVAL on a bad id/host/cores. */
int scheduler_add_executor(Scheduler *s, int executor_id, const char *host, int cores);
/* Every attempt running there fails with "executor N lost: REASON" and is
 * re-queued (or fails its job).  Returns how many running attempts were lost,
 * -ENOENT if the executor is unknown. */
int scheduler_remove_executor(Scheduler *s, int executor_id, const char *reason, usec_t now);
/* A draining executor (its worker is drained) is offered no task; its
 * removal re-queues what runs there without counting failures, since the
 * tasks did nothing wrong.  Returns the attempts it still holds (0: idle,
 * it may go), -ENOENT if unknown. */
int scheduler_set_executor_draining(Scheduler *s, int executor_id, bool draining);
bool scheduler_has_executor(const Scheduler *s, int executor_id);
unsigned scheduler_n_executors(const Scheduler *s);
long scheduler_total_cores(const Scheduler *s);
unsigned scheduler_default_parallelism(const Scheduler *s);
/* Cores not used by an attempt (never negative), -ENOENT if unknown. */
int scheduler_executor_free_cores(const Scheduler *s, int executor_id);
/* Attempts holding slots on the executor: fills up to max, returns the total
 * (may exceed max), -ENOENT if unknown. */
int scheduler_executor_running(const Scheduler *s, int executor_id, TaskAssignment *out, size_t max);

/* ---- offers ---- */

/* Hands the executor up to min(free_slots, its cores + prefetch - attempts it
 * holds, max_out) tasks, FIFO across jobs, with delay scheduling.  Returns how
 * many were written to out; -ENOENT for an unknown executor. */
int scheduler_offer(Scheduler *s, int executor_id, int free_slots, usec_t now,
                    TaskAssignment *out, size_t max_out);
/* When a job waiting for locality will accept any host: the next revive
 * (always > now), or USEC_INFINITY when no job waits. */
usec_t scheduler_next_locality_deadline(Scheduler *s, usec_t now);
/* Tasks pending in all jobs. */
size_t scheduler_n_pending(const Scheduler *s);

/* ---- jobs ---- */

/* preferred_hosts: NULL (n_preferred 0); one NULL-terminated host list shared
 * by every task (n_preferred 1); or one list per task (n_preferred ==
 * n_tasks), where a NULL list means no preference.  A job of 0 tasks
 * succeeds at once.  -EEXIST for a known job id, -EINVAL, -E2BIG, -ENOMEM.
 * The job belongs to the scheduler; *ret stays valid until
 * scheduler_remove_job(). */
int scheduler_submit_job(Scheduler *s, const char *job_id, unsigned n_tasks,
                         const char *const *const *preferred_hosts, unsigned n_preferred,
                         usec_t now, Job **ret);
Job *scheduler_find_job(const Scheduler *s, const char *job_id);
/* Every job, in submission order. */
Job *scheduler_first_job(const Scheduler *s);
Job *scheduler_next_job(const Job *job);
/* Forgets an ended job (-EBUSY while it runs).  Attempts of it still holding
 * executor slots (killed, not yet reported) release them now. */
int scheduler_remove_job(Scheduler *s, Job *job);

/* A result for (job, index, attempt) from executor_id.  result_bytes (the
 * output's size) counts toward max_result_bytes; error is the reason of a
 * failure (NULL: "task failed").  Frees the attempt's slot.  Returns a
 * TaskVerdict, or -EINVAL for an index out of range. */
int scheduler_task_finished(Scheduler *s, Job *job, unsigned index, unsigned attempt,
                            int executor_id, bool success, uint64_t result_bytes,
                            const char *error, usec_t now);

/* Cancels a running job: pending tasks are dropped, running attempts killed
 * (list them with scheduler_job_in_flight() and send TaskKill).  Returns the
 * number of attempts to kill, -EALREADY if the job had ended. */
int scheduler_cancel_job(Scheduler *s, Job *job, usec_t now);
/* Kills one task: a pending task is dropped (returns 0), a running attempt
 * is killed (returns 1 and, if ret, the attempt to send TaskKill for).
 * -EALREADY if the task had ended, -EINVAL for a bad index.  The job goes
 * on; if all its other tasks succeed it ends CANCELLED. */
int scheduler_kill_task(Scheduler *s, Job *job, unsigned index, usec_t now, TaskAssignment *ret);
/* A pending task succeeded before a restart (driver-journal.c): it is done,
 * after that many attempts, with a result of that size.  -EALREADY if the
 * task is not pending. */
int scheduler_task_restore(Scheduler *s, Job *job, unsigned index, unsigned attempts, uint64_t result_bytes,
                           usec_t now);

/* Jobs that ended (any state but RUNNING) since the last call, oldest
 * first, each once; NULL when none. */
Job *scheduler_pop_finished_job(Scheduler *s);

/* Attempts of the job holding executor slots: fills up to max, returns the
 * total (may exceed max).  O(attempts running in the whole scheduler). */
size_t scheduler_job_in_flight(const Scheduler *s, const Job *job, TaskAssignment *out, size_t max);

const char *scheduler_job_id(const Job *job);
JobState scheduler_job_state(const Job *job);
/* Why the job failed or was cancelled; NULL while it runs or if it succeeded. */
const char *scheduler_job_reason(const Job *job);
unsigned scheduler_job_n_tasks(const Job *job);
void scheduler_job_counts(const Job *job, JobCounts *ret);
usec_t scheduler_job_submitted_at(const Job *job);
usec_t scheduler_job_finished_at(const Job *job);  /* 0 while running */
/* -EINVAL for a bad index. */
int scheduler_task_info(const Job *job, unsigned index, TaskInfo *ret);
/* The reason of each failed attempt of the task, oldest first: fills up to
 * max, returns the total (may exceed max) or -EINVAL.  The strings live as
 * long as the job. */
int scheduler_task_errors(const Job *job, unsigned index, const char **out, size_t max);
