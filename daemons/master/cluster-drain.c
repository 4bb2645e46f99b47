/* Draining a worker (docs/DESIGN.md "Drain"): a decommission that loses no
 * work.  The master only stops placing there and tells the drivers, through
 * the draining flag of each executor's record (events and snapshots alike,
 * so a driver that missed the event learns it on its next resync); each
 * driver gives those executors no new task and kills each one when it holds
 * none, and the master places its replacement elsewhere as for any executor
 * that ended.  The deadline is the only time the master kills a draining
 * executor itself; drivers re-queue what ran there without counting a
 * failure, since the executor's flag says why it went. */
#include <inttypes.h>

#include "cluster-internal.h"
#include "log.h"
#include "wire-names.h"

bool worker_is_draining(const Worker *w) {
        return w->state == SPARK__WORKER_STATE__WORKER_DRAINING || w->state == SPARK__WORKER_STATE__WORKER_DRAINED;
}

bool worker_is_up(const Worker *w) {
        return w->state == SPARK__WORKER_STATE__WORKER_ALIVE || worker_is_draining(w);
}

int64_t worker_drain_left_ms(const Worker *w, usec_t now) {
        if (w->state != SPARK__WORKER_STATE__WORKER_DRAINING || w->drain_deadline == 0)
                return 0;
        if (w->drain_deadline <= now)
                return 1;
        return (int64_t) MAX((w->drain_deadline - now) / USEC_PER_MSEC, (usec_t) 1);
}

/* Tells the drivers of w's executors that the flag changed. */
static void worker_updated_executors(Cluster *c, Worker *w) {
        void *userdata;
        const ClusterEffects *fx = cluster_effects(c, &userdata);

        if (!fx->executor_updated)
                return;
        for (ClusterExecutor *e = w->executors; e; e = e->worker_next)
                fx->executor_updated(c, e, userdata);
}

void cluster_drain_progress(Cluster *c, Worker *w) {
        if (w->state != SPARK__WORKER_STATE__WORKER_DRAINING || w->n_executors > 0)
                return;
        w->state = SPARK__WORKER_STATE__WORKER_DRAINED;
        cluster_worker_changed(c, w);
        w->drain_deadline = 0;
        log_struct(LOG_NOTICE, LOG_FIELDS(.worker_id = w->id, .message_id = SPARK_MESSAGE_WORKER_DRAINED),
                   "Worker %s drained: no executors left", w->id);
}

int cluster_drain_worker(Cluster *c, const char *worker_id, usec_t timeout, usec_t now) {
        Worker *w = cluster_worker(c, worker_id);

        if (!w || !worker_is_up(w))
                return -ENOENT;
        if (w->state == SPARK__WORKER_STATE__WORKER_DRAINED)
                return 0;
        /* Asked again (a resent request, or a new timeout): the last one counts. */
        w->drain_deadline = timeout > 0 ? now + timeout : 0;
        w->drain_timed_out = false;
        if (w->state != SPARK__WORKER_STATE__WORKER_DRAINING) {
                w->state = SPARK__WORKER_STATE__WORKER_DRAINING;
                cluster_worker_changed(c, w);
                log_struct(LOG_NOTICE, LOG_FIELDS(.worker_id = w->id, .message_id = SPARK_MESSAGE_WORKER_DRAINING),
                           "Worker %s draining: %zu executors, timeout %s%" PRIu64 " ms", w->id, w->n_executors,
                           timeout > 0 ? "" : "none, ", (uint64_t) (timeout / USEC_PER_MSEC));
                worker_updated_executors(c, w);
        }
        cluster_drain_progress(c, w);
        return 0;
}

int cluster_undrain_worker(Cluster *c, const char *worker_id) {
        Worker *w = cluster_worker(c, worker_id);

        if (!w || !worker_is_up(w))
                return -ENOENT;
        if (!worker_is_draining(w))
                return 0;
        w->state = SPARK__WORKER_STATE__WORKER_ALIVE;
        cluster_worker_changed(c, w);
        w->drain_deadline = 0;
        w->drain_timed_out = false;
        log_struct(LOG_NOTICE, LOG_FIELDS(.worker_id = w->id),
                   "Worker %s undrained: it takes executors again (%zu still there)", w->id, w->n_executors);
        worker_updated_executors(c, w);
        cluster_schedule_soon(c);
        return 0;
}

void cluster_check_drains(Cluster *c, usec_t now, usec_t *next) {
        void *userdata, *v;
        const ClusterEffects *fx = cluster_effects(c, &userdata);
        size_t i = 0;

        while (hashmap_iterate(cluster_workers(c), &i, &v, NULL)) {
                Worker *w = v;

                if (w->state != SPARK__WORKER_STATE__WORKER_DRAINING || w->drain_deadline == 0 || w->drain_timed_out)
                        continue;
                if (w->drain_deadline > now) {
                        *next = MIN(*next, w->drain_deadline);
                        continue;
                }
                /* The kills only go out; the workers' reports of the units'
                 * ends change the state, as for any kill. */
                w->drain_timed_out = true;
                log_struct(LOG_WARNING, LOG_FIELDS(.worker_id = w->id),
                           "Worker %s: drain timeout, stopping its %zu executors; their running tasks go elsewhere",
                           w->id, w->n_executors);
                for (ClusterExecutor *e = w->executors; e && fx->kill_executor; e = e->worker_next)
                        fx->kill_executor(c, w, e, "drain timeout", userdata);
        }
}
