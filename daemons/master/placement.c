/* See placement.h.  Follows Spark's Master.scheduleExecutorsOnWorkers():
 * usable workers sorted by free cores; in spread-out mode each pass gives one
 * executor to every worker that can still take one; otherwise each worker is
 * filled before moving on.  Memory is checked for every new executor. */
#include <errno.h>
#include <stdlib.h>

#include "placement.h"

static int by_free_cores_desc(const void *a, const void *b, void *userdata) {
        const PlacementWorker *workers = userdata;
        const PlacementWorker *wa = &workers[*(const size_t *) a];
        const PlacementWorker *wb = &workers[*(const size_t *) b];

        if (wa->cores_free != wb->cores_free)
                return wa->cores_free > wb->cores_free ? -1 : 1;
        /* stable order among equals: lower index first */
        return *(const size_t *) a < *(const size_t *) b ? -1 : 1;
}

static bool can_launch(const PlacementRequest *req, const PlacementWorker *w, int executors_here,
                       int cores_left, int executors_left) {
        int64_t cores_used_here = (int64_t) executors_here * req->cores_per_executor;
        int64_t memory_used_here = (int64_t) executors_here * req->memory_per_executor_mb;

        return cores_left >= req->cores_per_executor && executors_left > 0 &&
               w->cores_free - cores_used_here >= req->cores_per_executor &&
               w->memory_free_mb - memory_used_here >= req->memory_per_executor_mb;
}

int placement_schedule(const PlacementRequest *req, const PlacementWorker *workers, size_t n,
                       size_t *order, int *executors) {
        size_t usable = 0;
        int64_t free_total = 0;
        int cores_left, executors_left, placed = 0;
        bool progress;

        if (!req || req->cores_per_executor < 1 || req->memory_per_executor_mb < 0 ||
            req->cores_wanted < 0 || req->executors_allowed < 0 || (n > 0 && (!workers || !order || !executors)))
                return -EINVAL;

        for (size_t i = 0; i < n; i++) {
                executors[i] = 0;
                if (workers[i].usable && workers[i].cores_free >= req->cores_per_executor &&
                    workers[i].memory_free_mb >= req->memory_per_executor_mb) {
                        order[usable++] = i;
                        free_total += workers[i].cores_free;
                }
        }
        if (usable == 0)
                return 0;

        qsort_r(order, usable, sizeof(size_t), by_free_cores_desc, (void *) workers);

        cores_left = (int) (free_total < req->cores_wanted ? free_total : req->cores_wanted);
        executors_left = req->executors_allowed;

        do {
                progress = false;
                for (size_t k = 0; k < usable; k++) {
                        size_t i = order[k];
                        while (can_launch(req, &workers[i], executors[i], cores_left, executors_left)) {
                                executors[i]++;
                                cores_left -= req->cores_per_executor;
                                executors_left--;
                                placed++;
                                progress = true;
                                if (req->spread_out)
                                        break;
                        }
                }
        } while (progress && req->spread_out);

        return placed;
}
