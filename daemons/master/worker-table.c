/* See worker-table.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "cluster.h"
#include "macro.h"
#include "worker-table.h"

/* What placement needs to know of w, for any app (an app's labels and
 * named resources are applied to a copy: cluster_schedule_app()). */
static PlacementWorker worker_view(const Worker *w) {
        return (PlacementWorker) {
                .cores_free = w->cores - w->cores_used,
                .memory_free_mb = w->memory_mb - w->memory_used_mb,
                .usable = w->state == SPARK__WORKER_STATE__WORKER_ALIVE && w->launch_backoff_until == 0,
        };
}

int worker_table_add(WorkerTable *t, Worker *w) {
        if (GREEDY_REALLOC(t->workers, t->workers_allocated, t->n + 1) < 0 ||
            GREEDY_REALLOC(t->view, t->view_allocated, t->n + 1) < 0)
                return -ENOMEM;
        w->table_index = t->n;
        t->workers[t->n++] = w;
        worker_table_update(t, w);
        return 0;
}

void worker_table_remove(WorkerTable *t, Worker *w) {
        size_t i = w->table_index;
        Worker *last = t->workers[t->n - 1];

        cluster_pool_remove(&t->pool, w);
        t->workers[i] = last;
        t->view[i] = t->view[t->n - 1];
        last->table_index = i;
        t->n--;
}

void worker_table_update(WorkerTable *t, Worker *w) {
        cluster_pool_update(&t->pool, w);
        t->view[w->table_index] = worker_view(w);
}

static bool view_is(const PlacementWorker *a, const PlacementWorker *b) {
        return a->cores_free == b->cores_free && a->memory_free_mb == b->memory_free_mb && a->usable == b->usable &&
               a->resource_executors_max == b->resource_executors_max;
}

static bool pool_is(const ClusterPool *a, const ClusterPool *b) {
        return a->cores == b->cores && a->cores_used == b->cores_used && a->memory_mb == b->memory_mb &&
               a->memory_used_mb == b->memory_used_mb && a->n_offering_resources == b->n_offering_resources &&
               memcmp(a->workers_by_state, b->workers_by_state, sizeof(a->workers_by_state)) == 0;
}

bool worker_table_matches(const WorkerTable *t, Hashmap *workers) {
        ClusterPool sum = cluster_pool_sum(workers);

        if (t->n != hashmap_size(workers) || !pool_is(&t->pool, &sum))
                return false;
        for (size_t i = 0; i < t->n; i++) {
                const Worker *w = t->workers[i];
                PlacementWorker now = worker_view(w);

                if (w->table_index != i || hashmap_get(workers, w->id) != w || !view_is(&now, &t->view[i]))
                        return false;
        }
        return true;
}

int worker_table_scratch(WorkerTable *t) {
        if (GREEDY_REALLOC(t->app_view, t->app_view_allocated, t->n) < 0 ||
            GREEDY_REALLOC(t->order, t->order_allocated, t->n) < 0 ||
            GREEDY_REALLOC(t->result, t->result_allocated, t->n) < 0)
                return -ENOMEM;
        return 0;
}

void worker_table_done(WorkerTable *t) {
        free(t->workers);
        free(t->view);
        free(t->app_view);
        free(t->order);
        free(t->result);
        *t = (WorkerTable) {};
}
