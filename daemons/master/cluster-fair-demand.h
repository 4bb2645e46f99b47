/* What the live applications want in all, for fair share's fast path
 * (docs/DESIGN.md "Fair share"): while it fits in the pooled capacity,
 * weighted DRF gives every application all it wants, so a placement pass
 * need only look at the applications that may take more
 * (cluster-wanting.h), not walk all of them.  With 1,000 applications
 * whose executors are all placed, that walk and its per-application shares
 * were what fair share added to placing a new one.  Kept where an
 * application's demand changes, as that list is. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct App App;

/* An application's part in the sums, as last counted. */
typedef struct FairDemandPart {
        bool counted;          /* in the sums, or in n_unsummable */
        bool summable;         /* a cap on its executors, no named resources */
        uint64_t cores, memory_mb;  /* executors wanted × one executor's size */
} FairDemandPart;

typedef struct FairDemand {
        /* over the live summable apps: no overflow, each part < 2^63 */
        unsigned __int128 cores, memory_mb;
        size_t n_unsummable;   /* live apps with no cap, or named resources */
} FairDemand;

/* Counts a as it is now: after any change of its state, executor limit,
 * core cap or size. */
void fair_demand_update(FairDemand *d, App *a);
/* Takes a out of the sums: before it is freed. */
void fair_demand_remove(FairDemand *d, App *a);
/* Whether every live application's whole demand fits in that capacity. */
bool fair_demand_fits(const FairDemand *d, int64_t cores, int64_t memory_mb);
/* Whether the sums are those of the apps of the list from apps_head, linked
 * by next (the sanitizer build's check). */
bool fair_demand_matches(const FairDemand *d, App *apps_head);
