/* Weighted dominant resource fairness (Ghodsi et al., "Dominant Resource
 * Fairness", NSDI 2011), as pure code: how many executors each application
 * gets out of a cluster's capacity, and which application free capacity
 * goes to next.  docs/DESIGN.md "Fair share".
 *
 * Resources are a fixed vector: cores, memory, then up to FAIR_NAMED_MAX
 * named resources (gpu, ...) in slots the caller assigns names to; a slot
 * no one uses is 0 in the capacity and in every application's need. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FAIR_NAMED_MAX 8

enum {
        FAIR_CORES,
        FAIR_MEMORY_MB,
        FAIR_NAMED_FIRST,
        _FAIR_RESOURCES = FAIR_NAMED_FIRST + FAIR_NAMED_MAX,
};

/* Bounds that let shares be compared exactly, as 128-bit products of
 * counts, amounts and weights: an executor's amount of each resource, the
 * cluster's capacity of each, an app's weight. */
#define FAIR_PER_EXECUTOR_MAX (INT64_C(1) << 32)
#define FAIR_CAPACITY_MAX (INT64_C(1) << 44)
#define FAIR_WEIGHT_MAX 1000
#define FAIR_EXECUTORS_MAX INT32_MAX

typedef struct FairApp {
        int64_t per_executor[_FAIR_RESOURCES];  /* what one executor takes, >= 0, not all 0 */
        int weight;                             /* >= 1 */
        int held;                               /* executors it has now */
        int wanted;                             /* executors it would use in all; FAIR_EXECUTORS_MAX: no cap */
} FairApp;

/* An exact share: num / den; den 0: more than any (the app needs a
 * resource the cluster has none of). */
typedef struct FairShare {
        uint64_t num, den;
} FairShare;

/* The weighted dominant share of app with k executors out of capacity:
 * max over resources of k * per_executor / capacity, divided by weight. */
FairShare fair_share_of(const FairApp *app, int k, const int64_t capacity[_FAIR_RESOURCES]);
/* < 0, 0, > 0 as a is less than, equal to, greater than b. */
int fair_share_cmp(FairShare a, FairShare b);
double fair_share_to_double(FairShare s);

/* Whether fair_targets() takes app: weight, counts and amounts within
 * their bounds, and some amount above 0. */
bool fair_app_is_valid(const FairApp *app);

/* Weighted DRF by progressive filling, in whole executors: starting from
 * none, one executor at a time goes to the application with the lowest
 * weighted dominant share (the earlier one on a tie) among those that want
 * more and whose next executor still fits in what is left of capacity.
 * targets[i] is what apps[i] gets; held is not looked at.  O(E log n) for E
 * executors given.  0, or -EINVAL for bad input. */
int fair_targets(const FairApp *apps, size_t n, const int64_t capacity[_FAIR_RESOURCES], int *targets);

/* The application free capacity goes to: the lowest weighted dominant share
 * at its held executors (the earlier one on a tie) among those with held <
 * wanted and not skip[i] (skip may be NULL).  -1: none. */
ssize_t fair_next(const FairApp *apps, size_t n, const int64_t capacity[_FAIR_RESOURCES], const bool *skip);

/* Which of an app's executors preemption takes back first
 * (docs/DESIGN.md "Fair share"): the one with the fewest running tasks, as
 * its driver last reported them, since its drain then costs the least
 * work; on a tie one not yet running (it holds no task), then the one that
 * has run the shortest time.  An executor whose count is not known (no
 * report yet, or a driver that sends none) comes after those whose count
 * is known, so that a driver that reports nothing gets the order by state
 * and age alone. */
typedef struct FairVictim {
        int running_tasks;       /* as reported; < 0: not known */
        bool launching;          /* not running yet: holds no task whatever is reported */
        uint64_t running_since;  /* when it started running (monotonic µs) */
} FairVictim;

/* < 0: a is taken back before b; > 0: b before a; 0: either. */
int fair_victim_cmp(const FairVictim *a, const FairVictim *b);
