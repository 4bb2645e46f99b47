/* Elastic executors, the master's side of a release (docs/elastic.md): a
 * driver gives back executors it has let go idle.  It has stopped giving
 * them tasks already; the master stops their units the graceful way (the
 * worker's KillExecutor, as for a drain), and lowers the app's executor
 * limit to the executors it keeps, so that none is placed in their stead.
 * The whole request is checked before anything changes: one id that is not
 * the app's refuses it all. */
#include "cluster-internal.h"
#include "log.h"

/* More ids than an app ever holds at once in one request is hostile. */
#define RELEASE_IDS_MAX 100000

int cluster_release_executors(Cluster *c, const char *app_id, const int32_t *ids, size_t n_ids, const char *reason,
                              int *ret_bad) {
        App *a = cluster_app(c, app_id);
        void *userdata;
        const ClusterEffects *fx = cluster_effects(c, &userdata);
        int kept = 0, released = 0;

        if (ret_bad)
                *ret_bad = 0;
        if (!a)
                return -ENOENT;
        if (n_ids > RELEASE_IDS_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n_ids; i++)
                if (!cluster_executor(c, app_id, ids[i])) {
                        if (ret_bad)
                                *ret_bad = ids[i];
                        return -ENOENT;
                }

        for (size_t i = 0; i < n_ids; i++) {
                ClusterExecutor *e = cluster_executor(c, app_id, ids[i]);

                if (e->released || executor_state_is_terminal(e->state))
                        continue;  /* a resent request, or it ended anyway */
                e->released = true;
                released++;
                if (e->worker && fx->kill_executor)
                        fx->kill_executor(c, e->worker, e, reason, userdata);
        }

        for (size_t i = 0; i < a->n_executors_allocated; i++) {
                ClusterExecutor *e = a->executors[i];
                if (e && !e->released && !executor_state_is_terminal(e->state))
                        kept++;
        }
        if (released > 0 || a->executor_limit > kept) {
                a->executor_limit = MIN(a->executor_limit, kept);
                cluster_app_demand_changed(c, a);
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = a->id, .message_id = SPARK_MESSAGE_EXECUTORS_RELEASED),
                           "Application %s released %d executors (%s); it keeps %d, and no more are placed for it",
                           a->id, released, reason, kept);
        }
        cluster_schedule_soon(c);
        return released;
}
