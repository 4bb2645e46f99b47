/* The pooled capacity of the workers that take executors (alive, not
 * draining) and what of it is used, and the workers by state, kept as
 * workers and executors change so that fair share (cluster-fair.c) and
 * /metrics read them in O(1) instead of walking every worker: at 10,000
 * workers that walk cost twice a placement, and held the loop for a
 * millisecond per scrape. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"

typedef struct Worker Worker;

/* Spark__WorkerState as index: unknown, alive, lost, draining, drained */
#define CLUSTER_WORKER_STATES 5

typedef struct ClusterPool {
        int64_t cores, cores_used;
        int64_t memory_mb, memory_used_mb;
        /* of those workers, the ones offering named resources: while there
         * are any, fair share still walks the workers for the resources */
        size_t n_offering_resources;
        /* every worker of the table, alive or not, by its state */
        size_t workers_by_state[CLUSTER_WORKER_STATES];
} ClusterPool;

/* Brings w's part of the pool in line with its state, cores, memory and
 * use: called after any of them changed. */
void cluster_pool_update(ClusterPool *pool, Worker *w);
/* Takes w's part out: before w leaves the worker table. */
void cluster_pool_remove(ClusterPool *pool, Worker *w);
/* The pool summed afresh over a worker table: what the kept one must equal. */
ClusterPool cluster_pool_sum(Hashmap *workers);
