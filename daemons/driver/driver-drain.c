/* A drained worker, on the driver's side (docs/DESIGN.md "Drain"): the
 * master flags the executors there as draining (in its events and its
 * snapshots); such an executor is offered no new task, and once it holds
 * none we ask the master to stop it, which then places a replacement on
 * another worker.  If the drain times out first, the master stops it
 * anyway and the scheduler re-queues its running tasks without counting a
 * failure (scheduler_set_executor_draining()). */
#include "driver-executors.h"
#include "log.h"

/* A release the master did not act on (a lost request) is sent again
 * after this long, at the executor's next poll. */
#define DRAIN_RELEASE_RETRY_USEC (5 * USEC_PER_SEC)

static void on_release_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        (void) c, (void) userdata;

        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                log_warning("The master refused to stop a drained executor: %s", reply->error->message);
        else if (error < 0 && error != -ECANCELED)
                log_warning_errno(error, "Failed to ask the master to stop a drained executor, retrying: %m");
}

void driver_drain_check(Driver *d, DriverExecutor *ex) {
        Spark__KillExecutor ke = SPARK__KILL_EXECUTOR__INIT;
        Envelope env = ENVELOPE_INIT;
        usec_t now = now_mono_usec();
        int r;

        if (!ex || !ex->draining || ex->lost || !d->registered)
                return;
        if (ex->drain_released_at != 0 && now - ex->drain_released_at < DRAIN_RELEASE_RETRY_USEC)
                return;
        if (scheduler_executor_running(d->scheduler, ex->id, NULL, 0) != 0)
                return;  /* it still holds tasks: they finish first */

        ke.app_id = d->app_id;
        ke.executor_id = ex->id;
        ke.reason = (char *) "drained: idle";
        ENVELOPE_SET(&env, KILL_EXECUTOR, kill_executor, &ke);
        r = rpc_client_call(d->master, &env, 5000, on_release_reply, NULL);
        if (r < 0) {
                log_warning_errno(r, "Failed to ask the master to stop drained executor %d, retrying: %m", ex->id);
                return;
        }
        ex->drain_released_at = now;
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id, .executor_id = ex->id, .worker_id = ex->worker_id),
                   "Executor %d on worker %s, drained (its worker drains, or fair share takes it back), "
                   "is idle: released", ex->id, ex->worker_id);
}

void driver_executor_set_draining(Driver *d, int id, bool draining) {
        DriverExecutor *ex = driver_executor(d, id);

        driver_announce_draining(d, id, draining);
        if (!ex || ex->lost || ex->draining == draining)
                return;
        ex->draining = draining;
        (void) scheduler_set_executor_draining(d->scheduler, id, draining || ex->releasing);
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id, .executor_id = ex->id, .worker_id = ex->worker_id),
                   "Executor %d: worker %s %s", ex->id, ex->worker_id,
                   draining ? "draining, no new tasks for it" : "no longer draining");
        if (draining)
                driver_drain_check(d, ex);
        else {
                ex->drain_released_at = 0;
                driver_wake_parked(d);
        }
}
