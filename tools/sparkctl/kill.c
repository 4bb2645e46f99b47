/* See kill.h. */
#include "kill.h"
#include "sparkctl.h"

int run_kill_executor(const Daemon *master, const char *app_id, int32_t executor_id) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__KillExecutor req = SPARK__KILL_EXECUTOR__INIT;
        Envelope env = ENVELOPE_INIT;

        req.app_id = (char *) app_id;
        req.executor_id = executor_id;
        req.reason = (char *) "killed with sparkctl";
        ENVELOPE_SET(&env, KILL_EXECUTOR, kill_executor, &req);
        return call_daemon(master, &env, SPARK__ENVELOPE__BODY__NOT_SET, &reply);
}

int run_drain(const Daemon *master, const char *worker_id, int32_t timeout_ms, bool undrain) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__DrainWorker req = SPARK__DRAIN_WORKER__INIT;
        Envelope env = ENVELOPE_INIT;

        req.worker_id = (char *) worker_id;
        req.timeout_ms = timeout_ms;
        req.undrain = undrain;
        ENVELOPE_SET(&env, DRAIN_WORKER, drain_worker, &req);
        return call_daemon(master, &env, SPARK__ENVELOPE__BODY__NOT_SET, &reply);
}

int run_kill_app(const Daemon *master, const char *app_id) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__KillApplication req = SPARK__KILL_APPLICATION__INIT;
        Envelope env = ENVELOPE_INIT;

        req.app_id = (char *) app_id;
        ENVELOPE_SET(&env, KILL_APPLICATION, kill_application, &req);
        return call_daemon(master, &env, SPARK__ENVELOPE__BODY__NOT_SET, &reply);
}
