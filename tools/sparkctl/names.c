/* See names.h. */
#include "macro.h"
#include "names.h"

static const char *lookup(const char *const *table, size_t n, int v) {
        if (v < 0 || (size_t) v >= n || !table[v])
                return "unknown";
        return table[v];
}

#define LOOKUP(table, v) lookup(table, ELEMENTSOF(table), (int) (v))

const char *worker_state_to_string(Spark__WorkerState s) {
        static const char *const t[] = {
                [SPARK__WORKER_STATE__WORKER_ALIVE] = "alive",
                [SPARK__WORKER_STATE__WORKER_LOST] = "lost",
        };
        return LOOKUP(t, s);
}

const char *app_state_to_string(Spark__AppState s) {
        static const char *const t[] = {
                [SPARK__APP_STATE__APP_WAITING] = "waiting",
                [SPARK__APP_STATE__APP_RUNNING] = "running",
                [SPARK__APP_STATE__APP_FINISHED] = "finished",
                [SPARK__APP_STATE__APP_FAILED] = "failed",
        };
        return LOOKUP(t, s);
}

const char *executor_state_to_string(Spark__ExecutorState s) {
        static const char *const t[] = {
                [SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING] = "launching",
                [SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING] = "running",
                [SPARK__EXECUTOR_STATE__EXECUTOR_EXITED] = "exited",
                [SPARK__EXECUTOR_STATE__EXECUTOR_FAILED] = "failed",
                [SPARK__EXECUTOR_STATE__EXECUTOR_KILLED] = "killed",
                [SPARK__EXECUTOR_STATE__EXECUTOR_LOST] = "lost",
        };
        return LOOKUP(t, s);
}

const char *job_state_to_string(Spark__JobState s) {
        static const char *const t[] = {
                [SPARK__JOB_STATE__JOB_RUNNING] = "running",
                [SPARK__JOB_STATE__JOB_SUCCEEDED] = "succeeded",
                [SPARK__JOB_STATE__JOB_FAILED] = "failed",
                [SPARK__JOB_STATE__JOB_CANCELLED] = "cancelled",
        };
        return LOOKUP(t, s);
}

const char *task_status_to_string(Spark__TaskStatus s) {
        static const char *const t[] = {
                [SPARK__TASK_STATUS__TASK_OK] = "ok",
                [SPARK__TASK_STATUS__TASK_FAILED] = "failed",
                [SPARK__TASK_STATUS__TASK_LOST] = "lost",
                [SPARK__TASK_STATUS__TASK_KILLED] = "killed",
        };
        return LOOKUP(t, s);
}

bool job_state_is_final(Spark__JobState s) {
        return s == SPARK__JOB_STATE__JOB_SUCCEEDED || s == SPARK__JOB_STATE__JOB_FAILED ||
               s == SPARK__JOB_STATE__JOB_CANCELLED;
}
