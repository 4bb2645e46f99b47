/* One task on its way through the executor: the TaskLaunch it came in (kept
 * inside the PollReply it arrived with, so nothing is copied), its place in
 * the runner's lists, and its outcome, which becomes a TaskResult. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "codec.h"
#include "macro.h"

typedef enum TaskState {
        TASK_STATE_QUEUED,
        TASK_STATE_RUNNING,
        TASK_STATE_DONE,
        _TASK_STATE_MAX,
        _TASK_STATE_INVALID = -EINVAL,
} TaskState;

const char *task_state_to_string(TaskState s);

/* What a task produced: status, exit code, output and error as they go
 * back to the driver.  output and error are malloc()ed (or NULL). */
typedef struct TaskOutcome {
        Spark__TaskStatus status;
        int exit_code;
        void *output;
        size_t output_len;
        char *error;
} TaskOutcome;

void task_outcome_done(TaskOutcome *o);
/* Replaces the outcome by a failure with a formatted reason. */
void task_outcome_fail(TaskOutcome *o, int exit_code, const char *fmt, ...) _printf_(3, 4);
/* Replaces the outcome by TASK_KILLED, dropping any output. */
void task_outcome_kill(TaskOutcome *o, const char *reason);

typedef struct TaskBatch TaskBatch;

typedef struct Task {
        struct Task *next;               /* in the runner's queue or result list */
        const Spark__TaskLaunch *launch; /* owned by batch */
        TaskBatch *batch;
        /* Guarded by the runner's lock. */
        TaskState state;
        bool killed;
        pid_t pid;                       /* a running command's process group */
        TaskOutcome outcome;             /* written by the thread running it */
        uint64_t run_usec;               /* how long it ran (CLOCK_MONOTONIC), by the same thread */
} Task;

/* The tasks of one PollReply, allocated together; the reply envelope lives
 * as long as any of its tasks has not been released. */
struct TaskBatch {
        Envelope *reply;
        size_t n_tasks;
        size_t n_unreleased;
        Task tasks[];
};

/* Takes ownership of reply (a PollReply) on success, and then always frees
 * it through the batch.  A reply without tasks gives -ENODATA and stays the
 * caller's. */
int task_batch_new(Envelope *reply, TaskBatch **ret);

/* Drops a task whose result has been sent (or will never be): frees its
 * outcome, and the batch with the last of its tasks. */
void task_release(Task *t);

bool task_matches(const Task *t, const char *job_id, int32_t index);

/* About the bytes this task's result adds to a Poll, for batching. */
size_t task_result_size(const Task *t);

/* Protobuf strings must be UTF-8; a command's stderr or a library's error
 * need not be.  Replaces every byte that is not part of a well-formed UTF-8
 * sequence with '?', in place. */
void utf8_sanitize(char *s);
