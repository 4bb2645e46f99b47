/* Elastic executors, the policy (docs/elastic.md): how many executors the
 * application asks the master for, and which idle ones it gives back.  Pure
 * code, no I/O and no clock of its own: the caller passes the backlog, the
 * executors and `now`, and does what the answers say.
 *
 * The shape is Spark's ExecutorAllocationManager:
 *  - The target is never above what the waiting and running tasks can use
 *    (ceil(tasks / cores per executor)), nor above max_executors, nor below
 *    min_executors.
 *  - While tasks have waited for backlog_timeout, the target grows by 1,
 *    then 2, 4, ... each backlog_timeout (the step doubles while each step is
 *    taken whole, and falls back to 1 when the cap cuts it short or the
 *    backlog ends).
 *  - With no executor and none asked for, the first waiting task asks for
 *    one at once: an application idle at 0 executors pays one executor start
 *    for its next job, not the backlog timeout as well.
 *  - An executor that has held no task for idle_timeout is released, oldest
 *    idle first, as long as the executors left are at least the target and
 *    min_executors.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "scheduler.h"  /* USEC_INFINITY */
#include "time-util.h"

typedef struct AllocationConfig {
        unsigned min_executors;
        unsigned max_executors;      /* 0: no cap */
        unsigned cores_per_executor; /* tasks one executor runs at once, >= 1 */
        usec_t idle_timeout;
        usec_t backlog_timeout;
} AllocationConfig;

typedef struct Allocation {
        AllocationConfig cfg;
        unsigned target;          /* executors to ask the master for */
        unsigned add_step;        /* what the next backlog round adds */
        usec_t add_at;            /* the next backlog round; 0: no backlog */
} Allocation;

/* One executor of the application, as the policy sees it. */
typedef struct AllocationExecutor {
        int id;
        unsigned tasks;           /* attempts it holds */
        usec_t busy_at;           /* when it last held or returned a task (or registered) */
} AllocationExecutor;

/* -EINVAL on a setting out of range (cores 0, a zero timeout). */
int allocation_init(Allocation *a, const AllocationConfig *cfg);
/* A reload: the target is clamped to the new bounds at the next update. */
int allocation_set_config(Allocation *a, const AllocationConfig *cfg);

/* What the waiting and running tasks can use, within the bounds. */
unsigned allocation_needed(const Allocation *a, size_t pending, size_t running);

/* Moves the target by the backlog; n_executors are the executors the
 * application has (registered, not being released).  Returns true if the
 * target changed (the caller tells the master). */
bool allocation_update(Allocation *a, size_t pending, size_t running, unsigned n_executors, usec_t now);

/* The executors of ex[] to release now, their ids written to out (at most
 * max); returns how many.  The target drops to what is left if it was
 * above it. */
size_t allocation_pick_idle(Allocation *a, const AllocationExecutor *ex, size_t n, usec_t now, int *out,
                            size_t max);

/* When the policy may next decide something without a new event: the next
 * backlog round or the next idle expiry; USEC_INFINITY: never. */
usec_t allocation_next_deadline(const Allocation *a, size_t pending, const AllocationExecutor *ex, size_t n,
                                usec_t now);
