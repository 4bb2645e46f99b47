/* See cluster-fair-demand.h. */
#include "cluster.h"
#include "cluster-fair-demand.h"
#include "macro.h"
#include "placement-fair.h"

/* a's part as it is now; the same per-executor amounts as the full pass
 * gives fair_targets() (cluster-fair.c), so that "fits" here is its
 * demands_fit() */
static FairDemandPart part_of(const App *a) {
        FairApp fa = {
                .per_executor = { a->cores_per_executor, MIN(a->executor_memory_mb, FAIR_PER_EXECUTOR_MAX) },
                .weight = 1,  /* not in a demand */
                .wanted = app_executors_wanted(a),
        };
        FairDemandPart p = { .counted = app_is_live(a) };

        if (!p.counted)
                return p;
        /* no cap, named resources, or an app fair_targets() refuses: the
         * full pass decides */
        p.summable = fa.wanted != FAIR_EXECUTORS_MAX && a->n_wants == 0 && fair_app_is_valid(&fa);
        if (p.summable) {
                p.cores = (uint64_t) fa.wanted * (uint64_t) fa.per_executor[FAIR_CORES];
                p.memory_mb = (uint64_t) fa.wanted * (uint64_t) fa.per_executor[FAIR_MEMORY_MB];
        }
        return p;
}

static void add(FairDemand *d, const FairDemandPart *p, int sign) {
        if (!p->counted)
                return;
        if (!p->summable) {
                d->n_unsummable += (size_t) sign;
                return;
        }
        if (sign > 0) {
                d->cores += p->cores;
                d->memory_mb += p->memory_mb;
        } else {
                d->cores -= p->cores;
                d->memory_mb -= p->memory_mb;
        }
}

void fair_demand_update(FairDemand *d, App *a) {
        FairDemandPart now = part_of(a);

        add(d, &a->fair_demand, -1);
        add(d, &now, +1);
        a->fair_demand = now;
}

void fair_demand_remove(FairDemand *d, App *a) {
        add(d, &a->fair_demand, -1);
        a->fair_demand = (FairDemandPart) {};
}

bool fair_demand_fits(const FairDemand *d, int64_t cores, int64_t memory_mb) {
        return d->n_unsummable == 0 && d->cores <= (unsigned __int128) MAX(cores, 0) &&
               d->memory_mb <= (unsigned __int128) MAX(memory_mb, 0);
}

bool fair_demand_matches(const FairDemand *d, App *apps_head) {
        FairDemand sum = {};

        for (const App *a = apps_head; a; a = a->next) {
                FairDemandPart p = part_of(a);

                if (p.counted != a->fair_demand.counted || p.summable != a->fair_demand.summable ||
                    p.cores != a->fair_demand.cores || p.memory_mb != a->fair_demand.memory_mb)
                        return false;
                add(&sum, &p, +1);
        }
        return sum.cores == d->cores && sum.memory_mb == d->memory_mb && sum.n_unsummable == d->n_unsummable;
}
