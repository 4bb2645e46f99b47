/* Where an application's executors go: Spark standalone's
 * scheduleExecutorsOnWorkers(), as pure code. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct PlacementWorker {
        int cores_free;
        int64_t memory_free_mb;
        bool usable;             /* alive and accepting executors */
        /* At most this many new executors of the app fit by its named
         * resources (cluster-resources.h); 0: no such limit. */
        int resource_executors_max;
} PlacementWorker;

typedef struct PlacementRequest {
        int cores_wanted;        /* cores the app may still be given */
        int cores_per_executor;  /* >= 1 */
        int64_t memory_per_executor_mb;
        int executors_allowed;   /* how many more executors it may have */
        bool spread_out;         /* round-robin across workers, else fill one first */
} PlacementRequest;

/* Fills executors[i] with the number of new executors (each of
 * cores_per_executor cores) to launch on workers[i].  Workers are visited in
 * order of free cores, most first, as Spark does.  order is scratch space for
 * n indices.  Returns the number of executors placed, or -EINVAL. */
int placement_schedule(const PlacementRequest *req, const PlacementWorker *workers, size_t n,
                       size_t *order, int *executors);
