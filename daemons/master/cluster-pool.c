/* See cluster-pool.h.  Each worker remembers the part it added (Worker's
 * pooled), so an update takes out exactly what went in, whatever changed
 * in between. */
#include "cluster-pool.h"
#include "cluster.h"

static ClusterPool worker_part(const Worker *w) {
        ClusterPool part = {};

        if ((unsigned) w->state < CLUSTER_WORKER_STATES)
                part.workers_by_state[w->state] = 1;
        if (w->state != SPARK__WORKER_STATE__WORKER_ALIVE)
                return part;
        part.cores = w->cores;
        part.cores_used = w->cores_used;
        part.memory_mb = w->memory_mb;
        part.memory_used_mb = w->memory_used_mb;
        part.n_offering_resources = w->n_resources > 0;
        return part;
}

/* *n += part, or -= for sign < 0: counts are size_t, not multiplied by a sign */
static void count_add(size_t *n, size_t part, int sign) {
        if (sign > 0)
                *n += part;
        else
                *n -= part;
}

static void pool_add(ClusterPool *pool, const ClusterPool *part, int sign) {
        pool->cores += sign * part->cores;
        pool->cores_used += sign * part->cores_used;
        pool->memory_mb += sign * part->memory_mb;
        pool->memory_used_mb += sign * part->memory_used_mb;
        count_add(&pool->n_offering_resources, part->n_offering_resources, sign);
        for (size_t s = 0; s < CLUSTER_WORKER_STATES; s++)
                count_add(&pool->workers_by_state[s], part->workers_by_state[s], sign);
}

void cluster_pool_update(ClusterPool *pool, Worker *w) {
        pool_add(pool, &w->pooled, -1);
        w->pooled = worker_part(w);
        pool_add(pool, &w->pooled, +1);
}

void cluster_pool_remove(ClusterPool *pool, Worker *w) {
        pool_add(pool, &w->pooled, -1);
        w->pooled = (ClusterPool) {};
}

ClusterPool cluster_pool_sum(Hashmap *workers) {
        ClusterPool pool = {};
        size_t i = 0;
        void *v;

        while (hashmap_iterate(workers, &i, &v, NULL)) {
                ClusterPool part = worker_part(v);
                pool_add(&pool, &part, +1);
        }
        return pool;
}
