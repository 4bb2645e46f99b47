/* The workers as placement sees them, kept as they change: a dense array of
 * every worker in the cluster's table beside its placement view (free
 * cores and memory, usable), and their pooled capacity (cluster-pool.h).
 * Placement reads the view as it is, instead of walking the worker hashmap
 * and every Worker for each application placed: at 10,000 workers that
 * walk was most of a one-executor placement. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "hashmap.h"
#include "cluster-pool.h"
#include "placement.h"

typedef struct WorkerTable {
        Worker **workers;          /* w->table_index is its place */
        PlacementWorker *view;     /* of workers[i], current */
        size_t n, workers_allocated, view_allocated;
        ClusterPool pool;
        /* scratch for one placement (worker_table_scratch()) */
        PlacementWorker *app_view; /* the view with one app's labels and named resources */
        size_t *order;
        int *result;
        size_t app_view_allocated, order_allocated, result_allocated;
} WorkerTable;

/* Adds w, new to the cluster (its pooled part still zero); -ENOMEM, and the
 * table unchanged, if it cannot grow. */
int worker_table_add(WorkerTable *t, Worker *w);
void worker_table_remove(WorkerTable *t, Worker *w);
/* After any change of w's state, size, use or launch backoff. */
void worker_table_update(WorkerTable *t, Worker *w);
/* Whether t holds exactly the workers of the hashmap, each at its index
 * with its view current, and its pool is their sum: for the tests, and
 * for the sanitizer build, which checks it before each placement. */
bool worker_table_matches(const WorkerTable *t, Hashmap *workers);
/* Room in the scratch for a placement over the whole table. */
int worker_table_scratch(WorkerTable *t);
void worker_table_done(WorkerTable *t);
