/* The executor's task threads: a fixed pool (one thread per core, created
 * once) serving one FIFO queue, and the list of finished tasks waiting to be
 * sent.  One mutex guards both; a thread that finishes a task takes the next
 * one under the same lock, and the owner is told that results are waiting
 * only once until it takes them, so a burst of tiny tasks costs no extra
 * wake-ups.
 *
 * Threading: submit, kill, take_results, held and run_here may be called
 * from any one owner thread (the executor's loop); tasks are released by
 * that owner.  The run and notify callbacks run on the task threads (and in
 * run_here, on the owner's) without the lock held. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "executor-task.h"
#include "macro.h"

#define TASK_RUNNER_THREADS_MAX 1024u

typedef struct TaskRunner TaskRunner;

/* Runs t and fills t->outcome.  A command task reports its process through
 * task_runner_set_pid() so that a kill can reach it. */
typedef void (*TaskRunFn)(TaskRunner *r, Task *t, void *userdata);
/* Results are waiting.  Called once, then not again until the owner has
 * called task_runner_take_results(). */
typedef void (*TaskNotifyFn)(void *userdata);

int task_runner_new(unsigned n_threads, TaskRunFn run, TaskNotifyFn notify, void *userdata, TaskRunner **ret);

/* Stops taking tasks, SIGKILLs the running commands' process groups and
 * waits up to timeout_usec for the threads to return.  Returns the number of
 * threads still busy (running a function that does not return): 0 means
 * task_runner_free() may be called. */
unsigned task_runner_stop(TaskRunner *r, uint64_t timeout_usec);

/* Only after task_runner_stop() returned 0 (or if never started).  Tasks
 * still queued or unsent are released. */
TaskRunner *task_runner_free(TaskRunner *r);

/* Appends the n tasks of an array (a TaskBatch's) in order and wakes as
 * many threads as there is work for. */
void task_runner_submit(TaskRunner *r, Task *tasks, size_t n);

/* For the owner: runs t on the calling thread as a task thread would —
 * counted as running, killable, its result among the others — if a core
 * is free and nothing is queued; returns false (t untouched) otherwise.
 * No notification: the caller takes the results right after.  What it
 * saves: the two hand-offs between threads of a task given to an idle task
 * thread. */
bool task_runner_run_here(TaskRunner *r, Task *t);

/* TaskKill: every matching task (index < 0: the whole job) that is queued
 * is finished at once as TASK_KILLED; a running one is marked, its command's
 * process group gets SIGKILL, and it is reported TASK_KILLED when it returns.
 * job_id NULL: every task.  Returns the number of tasks affected. */
unsigned task_runner_kill(TaskRunner *r, const char *job_id, int32_t index);

/* Takes finished tasks in completion order: at most max_n, and stopping
 * before the one that would bring their results past max_bytes (but at least
 * one).  Returns the list (linked by ->next), its length in *ret_n, and
 * queued + running tasks in *ret_held (both may be NULL).  Re-arms the
 * notify callback. */
Task *task_runner_take_results(TaskRunner *r, size_t max_n, size_t max_bytes, size_t *ret_n, size_t *ret_held);

/* Queued + running. */
size_t task_runner_held(TaskRunner *r);

/* Queued, not started yet; and whether results wait to be taken. */
size_t task_runner_queued(TaskRunner *r, bool *ret_results_waiting);

/* For run callbacks: records the process group of a running command.
 * Returns true if the task was killed meanwhile — the caller must then kill
 * it itself.  pid 0 clears it (call before reaping the process). */
bool task_runner_set_pid(TaskRunner *r, Task *t, pid_t pid);

/* For run callbacks: whether the runner is stopping (a long command may
 * look at it). */
bool task_runner_is_stopping(TaskRunner *r);

DEFINE_TRIVIAL_CLEANUP_FUNC(TaskRunner *, task_runner_free);
