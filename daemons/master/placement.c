/* See placement.h.  Follows Spark's Master.scheduleExecutorsOnWorkers():
 * usable workers sorted by free cores; in spread-out mode each pass gives one
 * executor to every worker that can still take one; otherwise each worker is
 * filled before moving on.  Memory is checked for every new executor.
 *
 * At most k = min(executors allowed, cores wanted / cores per executor)
 * executors are placed, and every usable worker can take one, so both modes
 * use only the first k workers of that order: when k is smaller than the
 * number of usable workers (a small app on a large cluster, or one slice of
 * a large app) those k are selected in linear time and only they are
 * sorted — not all 10,000 workers for each small app. */
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

static inline int order_cmp(const PlacementWorker *workers, size_t a, size_t b) {
        return by_free_cores_desc(&a, &b, (void *) workers);
}

static void swap_idx(size_t *order, size_t i, size_t j) {
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
}

/* Rearranges order[0..n) so that its first k entries are the k first in
 * by_free_cores_desc() order (in no particular order among themselves):
 * quickselect with a median-of-three pivot, expected O(n). */
static void select_first(const PlacementWorker *workers, size_t *order, size_t n, size_t k) {
        size_t lo = 0, hi = n; /* the boundary k lies in [lo, hi) */

        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2, store = lo;

                /* median of three to the end, as the pivot */
                if (order_cmp(workers, order[mid], order[lo]) < 0)
                        swap_idx(order, mid, lo);
                if (order_cmp(workers, order[hi - 1], order[lo]) < 0)
                        swap_idx(order, hi - 1, lo);
                if (order_cmp(workers, order[mid], order[hi - 1]) < 0)
                        swap_idx(order, mid, hi - 1);

                for (size_t i = lo; i < hi - 1; i++)
                        if (order_cmp(workers, order[i], order[hi - 1]) < 0)
                                swap_idx(order, i, store++);
                swap_idx(order, store, hi - 1);

                /* order[store] is in its final place */
                if (store == k || store + 1 == k)
                        return;
                if (store > k)
                        hi = store;
                else
                        lo = store + 1;
        }
}

static bool can_launch(const PlacementRequest *req, const PlacementWorker *w, int executors_here,
                       int cores_left, int executors_left) {
        int64_t cores_used_here = (int64_t) executors_here * req->cores_per_executor;
        int64_t memory_used_here = (int64_t) executors_here * req->memory_per_executor_mb;

        return cores_left >= req->cores_per_executor && executors_left > 0 &&
               (w->resource_executors_max <= 0 || executors_here < w->resource_executors_max) &&
               w->cores_free - cores_used_here >= req->cores_per_executor &&
               w->memory_free_mb - memory_used_here >= req->memory_per_executor_mb;
}

int placement_schedule(const PlacementRequest *req, const PlacementWorker *workers, size_t n,
                       size_t *order, int *executors) {
        size_t usable = 0;
        int64_t free_total = 0;
        int cores_left, executors_left, at_most, placed = 0;
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

        cores_left = (int) (free_total < req->cores_wanted ? free_total : req->cores_wanted);
        executors_left = req->executors_allowed;

        at_most = cores_left / req->cores_per_executor;
        if (executors_left < at_most)
                at_most = executors_left;
        if (at_most <= 0)
                return 0;
        if ((size_t) at_most < usable) {
                select_first(workers, order, usable, (size_t) at_most);
                usable = (size_t) at_most;
        }
        qsort_r(order, usable, sizeof(size_t), by_free_cores_desc, (void *) workers);

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
