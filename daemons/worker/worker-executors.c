/* The executors this worker holds, keyed "APP/EXEC".  Every state change goes
 * through worker_executor_set_state(): it logs, publishes the event and
 * queues the report to the master. */
#include <inttypes.h>

#include "log.h"
#include "worker.h"

LocalExecutor *worker_executor(WorkerManager *w, const char *app_id, int executor_id) {
        char key[APP_ID_MAX + 16];

        snprintf(key, sizeof(key), "%s/%d", app_id, executor_id);
        return hashmap_get(w->executors, key);
}

int worker_executor_add(WorkerManager *w, const char *app_id, int executor_id, int cores, int64_t memory_mb,
                        Spark__ExecutorState state, LocalExecutor **ret) {
        LocalExecutor *e;
        int r;

        if (!app_id_is_valid(app_id) || executor_id < 0)
                return -EINVAL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        snprintf(e->key, sizeof(e->key), "%s/%d", app_id, executor_id);
        snprintf(e->app_id, sizeof(e->app_id), "%s", app_id);
        e->executor_id = executor_id;
        e->cpu_nsec = e->memory_bytes = UINT64_MAX;
        e->cores = cores;
        e->memory_mb = memory_mb;
        e->state = state;
        r = hashmap_put(w->executors, e->key, e);
        if (r < 0) {
                free(e);
                return r;
        }
        if (ret)
                *ret = e;
        return 0;
}

void worker_executor_forget(WorkerManager *w, LocalExecutor *e) {
        hashmap_remove(w->executors, e->key);
        free(e);
}

static bool state_is_terminal(Spark__ExecutorState s) {
        return s == SPARK__EXECUTOR_STATE__EXECUTOR_EXITED || s == SPARK__EXECUTOR_STATE__EXECUTOR_FAILED ||
               s == SPARK__EXECUTOR_STATE__EXECUTOR_KILLED || s == SPARK__EXECUTOR_STATE__EXECUTOR_LOST;
}

void worker_executor_state_fill(WorkerManager *w, const LocalExecutor *e, char unit[static UNIT_NAME_MAX],
                                Spark__ExecutorStateChanged *sc) {
        spark__executor_state_changed__init(sc);
        (void) executor_unit_name(unit, UNIT_NAME_MAX, e->app_id, e->executor_id);
        sc->app_id = (char *) e->app_id;
        sc->executor_id = e->executor_id;
        sc->worker_id = w->id;
        sc->state = e->state;
        sc->reason = (char *) e->reason;
        sc->exit_code = e->exit_code;
        sc->unit = unit;
        sc->pid = e->pid;
        sc->cpu_usage_ns = e->cpu_usage_ns;
        sc->memory_peak_bytes = e->memory_peak_bytes;
}

void worker_executor_info_fill(const LocalExecutor *e, Spark__ExecutorInfo *info) {
        spark__executor_info__init(info);
        info->app_id = (char *) e->app_id;
        info->executor_id = e->executor_id;
        info->state = e->state;
        info->cores = e->cores;
        info->memory_mb = e->memory_mb;
}

static void publish_state(WorkerManager *w, LocalExecutor *e) {
        Spark__ExecutorStateChanged sc = SPARK__EXECUTOR_STATE_CHANGED__INIT;
        Envelope env = ENVELOPE_INIT;
        char unit[UNIT_NAME_MAX] = "";
        int r;

        worker_executor_state_fill(w, e, unit, &sc);
        ENVELOPE_SET(&env, EXECUTOR_STATE_CHANGED, executor_state_changed, &sc);
        r = event_pub_send(w->events, &env);
        if (r < 0)
                log_warning_errno(r, "Failed to publish the state of executor %s, ignoring: %m", e->key);
}

void worker_executor_set_state(WorkerManager *w, LocalExecutor *e, Spark__ExecutorState state, const char *reason,
                               int exit_code, int64_t pid) {
        char unit[UNIT_NAME_MAX] = "";

        if (state_is_terminal(e->state) || (e->state == state && state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING))
                return;
        e->state = state;
        snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
        e->exit_code = exit_code;
        if (pid > 0)
                e->pid = pid;

        (void) executor_unit_name(unit, sizeof(unit), e->app_id, e->executor_id);
        if (state_is_terminal(state))
                log_struct(state == SPARK__EXECUTOR_STATE__EXECUTOR_EXITED ? LOG_INFO : LOG_WARNING,
                           LOG_FIELDS(.app_id = e->app_id, .executor_id = e->executor_id, .worker_id = w->id,
                                      .unit = unit, .message_id = SPARK_MESSAGE_EXECUTOR_EXITED),
                           "Executor %s (%s) ended: %s", e->key, unit, e->reason);
        else if (state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING)
                log_struct(LOG_INFO,
                           LOG_FIELDS(.app_id = e->app_id, .executor_id = e->executor_id, .worker_id = w->id,
                                      .unit = unit),
                           "Executor %s running as %s, pid %" PRIi64, e->key, unit, e->pid);

        /* systemd copied it into the unit when it started */
        if (state_is_terminal(state)) {
                worker_read_exit_usage(w, e);
                worker_secret_remove(w, e->app_id, e->executor_id);
                worker_work_dir_touch(w, e->app_id);
        }
        publish_state(w, e);
        e->report_pending = true;
        worker_report(w, e);
}

void worker_on_unit_state(UnitManager *m, const char *app_id, int executor_id, const UnitOutcome *o, void *userdata) {
        WorkerManager *w = userdata;
        LocalExecutor *e = worker_executor(w, app_id, executor_id);
        (void) m;

        if (!e) {
                /* a unit we watch but did not record (adopted, then forgotten) */
                if (worker_executor_add(w, app_id, executor_id, 0, 0, SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING, &e) < 0)
                        return;
        }
        worker_executor_set_state(w, e, o->state, o->reason, o->exit_code, o->pid);
}
