/* What the task threads do for the executor: run a task by its kind, fetch
 * a library from the driver, and wake the loop when results are waiting. */
#include <signal.h>

#include "command-task.h"
#include "executor-driver.h"
#include "executor.h"
#include "function-task.h"
#include "sha256.h"

void executor_notify_results(void *userdata) {
        Executor *e = userdata;

        if (!atomic_exchange(&e->results_item_queued, true))
                loop_queue_push_item(e->queue, &e->results_item);
}

typedef struct CommandContext {
        TaskRunner *runner;
        Task *task;
} CommandContext;

static bool command_started(pid_t pid, void *userdata) {
        CommandContext *c = userdata;

        return task_runner_set_pid(c->runner, c->task, pid);
}

static void command_exiting(pid_t pid, void *userdata) {
        CommandContext *c = userdata;

        (void) pid;
        (void) task_runner_set_pid(c->runner, c->task, 0);
}

static void run_command(Executor *e, TaskRunner *r, Task *t) {
        CommandContext c = { .runner = r, .task = t };
        CommandHooks hooks = { .started = command_started, .exiting = command_exiting, .userdata = &c };
        CommandResult res;
        int k;

        if (isempty(t->launch->command)) {
                task_outcome_fail(&t->outcome, 127, "empty command");
                return;
        }
        k = command_run(t->launch->command, e->max_result_bytes, &hooks, &res);
        if (k < 0) {
                task_outcome_fail(&t->outcome, 127, "cannot start %s: %s", COMMAND_SHELL, strerror(-k));
                return;
        }
        command_result_to_outcome(&res, e->max_result_bytes, &t->outcome);
        command_result_done(&res);
}

static void run_function(Executor *e, Task *t) {
        const Spark__TaskLaunch *l = t->launch;
        bool loaded = false;
        int k;

        k = function_task_run(e->libs, l, e->max_result_bytes, &t->outcome, &loaded);
        if (!loaded)
                return;
        if (k >= 0)
                log_struct(LOG_INFO, EXECUTOR_LOG_FIELDS(e, .job_id = l->job_id), "Loaded library %s for %s.",
                           l->library_hash, l->job_id);
        else
                log_struct(LOG_WARNING, EXECUTOR_LOG_FIELDS(e, .job_id = l->job_id), "Cannot use library for %s: %s",
                           l->job_id, strna(t->outcome.error));
}

void executor_run_task(TaskRunner *r, Task *t, void *userdata) {
        Executor *e = userdata;

        switch (t->launch->kind) {
        case SPARK__TASK_KIND__TASK_FUNCTION:
                run_function(e, t);
                break;
        case SPARK__TASK_KIND__TASK_COMMAND:
                run_command(e, r, t);
                break;
        default:
                task_outcome_fail(&t->outcome, 0, "unknown task kind %d", (int) t->launch->kind);
        }
}

int executor_fetch_library(const char *hash, void **ret_data, size_t *ret_len, char *error, size_t error_size,
                           void *userdata) {
        Executor *e = userdata;
        Spark__FetchLibrary fl = SPARK__FETCH_LIBRARY__INIT;
        Envelope env = ENVELOPE_INIT;
        _cleanup_envelope_ Envelope *reply = NULL;
        ProtobufCBinaryData *data;
        int r;

        fl.hash = (char *) hash;
        ENVELOPE_SET(&env, FETCH_LIBRARY, fetch_library, &fl);
        /* the first fetch of an executor that registered on the task
         * channel opens nng (executor-nng.c) */
        r = executor_nng_open(e);
        if (r >= 0)
                r = executor_driver_call_sync(e->sock, &env, EXECUTOR_FETCH_TIMEOUT_MS, EXECUTOR_MAX_MESSAGE_BYTES,
                                              &reply);
        if (r < 0 && reply) {
                snprintf(error, error_size, "driver cannot send library %s: %s", hash, strna(reply->error->message));
                return r;
        }
        if (r < 0) {
                snprintf(error, error_size, "fetching library %s from the driver: %s", hash, strerror(-r));
                return r;
        }
        if (reply->body_case != SPARK__ENVELOPE__BODY_FETCH_LIBRARY_REPLY) {
                snprintf(error, error_size, "driver answered FetchLibrary with %s", envelope_body_name(reply));
                return -EBADMSG;
        }

        /* Take the bytes out of the reply instead of copying them: protobuf-c
         * allocated them with malloc() and skips a NULL on free. */
        data = &reply->fetch_library_reply->data;
        *ret_len = data->len;
        *ret_data = data->data ? data->data : malloc(1);
        data->data = NULL;
        data->len = 0;
        if (!*ret_data) {
                snprintf(error, error_size, "out of memory");
                return -ENOMEM;
        }
        log_struct(LOG_DEBUG, EXECUTOR_LOG_FIELDS(e), "Fetched library %s (%zu bytes) from the driver.", hash, *ret_len);
        return 0;
}
