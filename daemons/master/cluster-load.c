/* How busy each executor is, as its application's driver reports it
 * (ExecutorLoad, docs/DESIGN.md "Fair share"): preemption takes back the
 * executors with the fewest running tasks first.  The counts are the
 * driver's word about its own executors only, and are never trusted
 * further than that: the whole report is checked before anything changes,
 * and a count is at most the executor's cores, which is what it can run
 * at once. */
#include <errno.h>

#include "cluster-internal.h"
#include "macro.h"

static ClusterExecutor *app_executor(App *a, int32_t id) {
        return id >= 0 && (size_t) id < a->n_executors_allocated ? a->executors[id] : NULL;
}

int cluster_report_executor_load(Cluster *c, const char *app_id, const int32_t *ids, const int32_t *counts,
                                 size_t n, int *ret_bad) {
        App *a = cluster_app(c, app_id);
        int changed = 0;

        if (ret_bad)
                *ret_bad = 0;
        if (!a)
                return -ENOENT;
        /* one entry per executor it ever had, at most (ids start at 1) */
        if (n > (size_t) MAX(a->next_executor_id - 1, 0))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!app_executor(a, ids[i])) {
                        if (ret_bad)
                                *ret_bad = ids[i];
                        return -ENOENT;
                }
                if (counts[i] < 0) {
                        if (ret_bad)
                                *ret_bad = ids[i];
                        return -EINVAL;
                }
        }

        for (size_t i = 0; i < n; i++) {
                ClusterExecutor *e = app_executor(a, ids[i]);
                int tasks = MIN(counts[i], MAX(e->cores, 1));

                if (executor_state_is_terminal(e->state) || e->running_tasks == tasks)
                        continue;
                e->running_tasks = tasks;
                changed++;
        }
        return changed;
}
