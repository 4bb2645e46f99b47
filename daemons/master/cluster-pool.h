/* The pooled capacity of the workers that take executors (alive, not
 * draining) and what of it is used, kept as workers and executors change
 * so that fair share (cluster-fair.c) reads it in O(1) instead of walking
 * every worker for each placement: at 10,000 workers that walk cost twice
 * the placement itself. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"

typedef struct Worker Worker;

typedef struct ClusterPool {
        int64_t cores, cores_used;
        int64_t memory_mb, memory_used_mb;
        /* of those workers, the ones offering named resources: while there
         * are any, fair share still walks the workers for the resources */
        size_t n_offering_resources;
} ClusterPool;

/* Brings w's part of the pool in line with its state, cores, memory and
 * use: called after any of them changed. */
void cluster_pool_update(ClusterPool *pool, Worker *w);
/* Takes w's part out: before w leaves the worker table. */
void cluster_pool_remove(ClusterPool *pool, Worker *w);
/* The pool summed afresh over a worker table: what the kept one must equal. */
ClusterPool cluster_pool_sum(Hashmap *workers);
