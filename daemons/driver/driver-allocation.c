/* Elastic executors, the policy: see driver-allocation.h and
 * docs/elastic.md. */
#include <errno.h>
#include <stdint.h>

#include "driver-allocation.h"
#include "macro.h"

/* Far beyond any cluster: keeps the doubling from overflowing. */
#define ADD_STEP_MAX (1u << 20)

static bool config_is_valid(const AllocationConfig *cfg) {
        return cfg && cfg->cores_per_executor >= 1 && cfg->idle_timeout > 0 && cfg->backlog_timeout > 0;
}

int allocation_init(Allocation *a, const AllocationConfig *cfg) {
        if (!config_is_valid(cfg))
                return -EINVAL;
        *a = (Allocation) {
                .cfg = *cfg,
                .target = cfg->min_executors,
                .add_step = 1,
        };
        return 0;
}

int allocation_set_config(Allocation *a, const AllocationConfig *cfg) {
        if (!config_is_valid(cfg))
                return -EINVAL;
        a->cfg = *cfg;
        return 0;
}

unsigned allocation_needed(const Allocation *a, size_t pending, size_t running) {
        size_t tasks = pending + running, per = a->cfg.cores_per_executor;
        size_t needed = tasks / per + (tasks % per != 0);

        if (a->cfg.max_executors > 0)
                needed = MIN(needed, (size_t) a->cfg.max_executors);
        needed = MIN(needed, (size_t) UINT32_MAX);
        return MAX((unsigned) needed, a->cfg.min_executors);
}

/* One backlog round: adds the step, or what is left below needed; a step
 * taken whole doubles the next one. */
static void add_round(Allocation *a, unsigned needed) {
        unsigned delta;

        if (a->target >= needed) {
                a->add_step = 1;
                return;
        }
        delta = MIN(a->add_step, needed - a->target);
        a->target += delta;
        a->add_step = delta == a->add_step ? MIN(a->add_step * 2, ADD_STEP_MAX) : 1;
}

bool allocation_update(Allocation *a, size_t pending, size_t running, unsigned n_executors, usec_t now) {
        unsigned needed = allocation_needed(a, pending, running), old = a->target;

        /* More than the tasks can use is never kept asked for: executors
         * that come anyway go idle and are released. */
        a->target = MAX(MIN(a->target, needed), a->cfg.min_executors);

        if (pending == 0) {
                a->add_at = 0;
                a->add_step = 1;
        } else if (n_executors == 0 && a->target == 0) {
                /* Nothing runs and nothing is coming: no point waiting to
                 * see whether the backlog lasts. */
                add_round(a, needed);
                a->add_at = now + a->cfg.backlog_timeout;
        } else if (a->add_at == 0)
                a->add_at = now + a->cfg.backlog_timeout;
        else if (now >= a->add_at) {
                add_round(a, needed);
                a->add_at = now + a->cfg.backlog_timeout;
        }
        return a->target != old;
}

static bool is_idle(const Allocation *a, const AllocationExecutor *e, usec_t now) {
        return e->tasks == 0 && now >= e->busy_at && now - e->busy_at >= a->cfg.idle_timeout;
}

size_t allocation_pick_idle(Allocation *a, const AllocationExecutor *ex, size_t n, usec_t now, int *out,
                            size_t max) {
        size_t keep = MAX(a->target, a->cfg.min_executors), k = 0;

        /* Oldest idle first: a selection, since only a few go at a time. */
        while (n - k > keep && k < max) {
                const AllocationExecutor *best = NULL;

                for (size_t i = 0; i < n; i++) {
                        bool taken = false;

                        if (!is_idle(a, &ex[i], now))
                                continue;
                        for (size_t j = 0; j < k && !taken; j++)
                                taken = out[j] == ex[i].id;
                        if (taken)
                                continue;
                        if (!best || ex[i].busy_at < best->busy_at ||
                            (ex[i].busy_at == best->busy_at && ex[i].id < best->id))
                                best = &ex[i];
                }
                if (!best)
                        break;
                out[k++] = best->id;
        }
        a->target = MIN(a->target, (unsigned) MIN(n - k, (size_t) UINT32_MAX));
        return k;
}

usec_t allocation_next_deadline(const Allocation *a, size_t pending, const AllocationExecutor *ex, size_t n,
                                usec_t now) {
        usec_t next = USEC_INFINITY;

        if (pending > 0 && a->add_at > 0)
                next = a->add_at;
        if (n > MAX(a->target, a->cfg.min_executors))
                for (size_t i = 0; i < n; i++)
                        if (ex[i].tasks == 0)
                                next = MIN(next, ex[i].busy_at + a->cfg.idle_timeout);
        /* never in the past: a decision due now was taken by the caller */
        return next == USEC_INFINITY ? next : MAX(next, now + USEC_PER_MSEC);
}
