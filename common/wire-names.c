/* See wire-names.h. */
#include "macro.h"
#include "wire-names.h"

static const char *const worker_state_table[] = {
        [SPARK__WORKER_STATE__WORKER_ALIVE] = "alive",
        [SPARK__WORKER_STATE__WORKER_LOST] = "lost",
        [SPARK__WORKER_STATE__WORKER_DRAINING] = "draining",
        [SPARK__WORKER_STATE__WORKER_DRAINED] = "drained",
};

static const char *const app_state_table[] = {
        [SPARK__APP_STATE__APP_WAITING] = "waiting",
        [SPARK__APP_STATE__APP_RUNNING] = "running",
        [SPARK__APP_STATE__APP_FINISHED] = "finished",
        [SPARK__APP_STATE__APP_FAILED] = "failed",
};

static const char *const executor_state_table[] = {
        [SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING] = "launching",
        [SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING] = "running",
        [SPARK__EXECUTOR_STATE__EXECUTOR_EXITED] = "exited",
        [SPARK__EXECUTOR_STATE__EXECUTOR_FAILED] = "failed",
        [SPARK__EXECUTOR_STATE__EXECUTOR_KILLED] = "killed",
        [SPARK__EXECUTOR_STATE__EXECUTOR_LOST] = "lost",
};

static const char *const job_state_table[] = {
        [SPARK__JOB_STATE__JOB_RUNNING] = "running",
        [SPARK__JOB_STATE__JOB_SUCCEEDED] = "succeeded",
        [SPARK__JOB_STATE__JOB_FAILED] = "failed",
        [SPARK__JOB_STATE__JOB_CANCELLED] = "cancelled",
};

static const char *const task_status_table[] = {
        [SPARK__TASK_STATUS__TASK_OK] = "ok",
        [SPARK__TASK_STATUS__TASK_FAILED] = "failed",
        [SPARK__TASK_STATUS__TASK_LOST] = "lost",
        [SPARK__TASK_STATUS__TASK_KILLED] = "killed",
};

static const char *lookup(const char *const *table, size_t n, int v) {
        if (v < 0 || (size_t) v >= n || !table[v])
                return "unknown";
        return table[v];
}

#define LOOKUP(table, v) lookup(table, ELEMENTSOF(table), (int) (v))

const char *wire_worker_state_to_string(Spark__WorkerState s) {
        return LOOKUP(worker_state_table, s);
}

const char *wire_app_state_to_string(Spark__AppState s) {
        return LOOKUP(app_state_table, s);
}

const char *wire_executor_state_to_string(Spark__ExecutorState s) {
        return LOOKUP(executor_state_table, s);
}

const char *wire_job_state_to_string(Spark__JobState s) {
        return LOOKUP(job_state_table, s);
}

const char *wire_task_status_to_string(Spark__TaskStatus s) {
        return LOOKUP(task_status_table, s);
}

bool wire_job_state_is_final(Spark__JobState s) {
        return s == SPARK__JOB_STATE__JOB_SUCCEEDED || s == SPARK__JOB_STATE__JOB_FAILED ||
               s == SPARK__JOB_STATE__JOB_CANCELLED;
}
