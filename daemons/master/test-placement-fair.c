/* Weighted DRF (placement-fair.c): the paper's example, weights, capped
 * demands, and properties on random clusters and demand sets. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "check-run.h"
#include "macro.h"
#include "placement-fair.h"

#define APP(c, m, w, want) { .per_executor = { (c), (m) }, .weight = (w), .wanted = (want) }
#define NOCAP FAIR_EXECUTORS_MAX

/* fair_targets() of apps in cap succeeds and gives app i the target
 * expected[i]. */
static void check_targets(const FairApp *apps, size_t n, const int64_t *cap, const int *expected, size_t n_expected) {
        int t[8];

        ck_assert_uint_le(n, ELEMENTSOF(t));
        ck_assert_uint_eq(n, n_expected);
        ck_assert_int_eq(fair_targets(apps, n, cap, t), 0);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(t[i] == expected[i], "app %zu: target %d, expected %d", i, t[i], expected[i]);
}

/* assert_targets(apps, cap, 2, 4, 6): the targets of an array of three apps */
#define assert_targets(apps, cap, ...)                                                  \
        check_targets(apps, ELEMENTSOF(apps), cap, (const int[]) { __VA_ARGS__ },      \
                      ELEMENTSOF(((const int[]) { __VA_ARGS__ })))

/* The DRF paper's example: 9 CPUs, 18 GB; A's tasks <1 CPU, 4 GB>, B's
 * <3 CPUs, 1 GB>.  A gets 3 tasks, B 2: both dominant shares 2/3. */
START_TEST(test_paper_example) {
        FairApp apps[] = { APP(1, 4, 1, NOCAP), APP(3, 1, 1, NOCAP) };
        int64_t cap[_FAIR_RESOURCES] = { 9, 18 };

        assert_targets(apps, cap, 3, 2);
        ck_assert_int_eq(fair_share_cmp(fair_share_of(&apps[0], 3, cap), fair_share_of(&apps[1], 2, cap)), 0);
}
END_TEST

START_TEST(test_equal_apps_split_evenly) {
        FairApp apps[] = { APP(1, 1024, 1, NOCAP), APP(1, 1024, 1, NOCAP), APP(1, 1024, 1, NOCAP) };
        int64_t cap[_FAIR_RESOURCES] = { 12, 65536 };

        assert_targets(apps, cap, 4, 4, 4);
        /* 13 cores: the spare one goes to the earliest */
        cap[0] = 13;
        assert_targets(apps, cap, 5, 4, 4);
}
END_TEST

START_TEST(test_weights) {
        FairApp apps[] = { APP(1, 100, 1, NOCAP), APP(1, 100, 2, NOCAP), APP(1, 100, 3, NOCAP) };
        int64_t cap[_FAIR_RESOURCES] = { 12, 1 << 20 };

        assert_targets(apps, cap, 2, 4, 6);
}
END_TEST

/* A named resource (a gpu, in the first named slot) is one more dimension:
 * 8 cores and 2 gpus; A's executors take 1 core and 1 gpu, B's 1 core.  A's
 * dominant resource is the gpu: A gets both gpus (share 1/2 each), B 6
 * cores; C needs a resource the cluster has none of and gets nothing. */
START_TEST(test_named_resource) {
        FairApp apps[] = {
                { .per_executor = { [FAIR_CORES] = 1, [FAIR_NAMED_FIRST] = 1 }, .weight = 1, .wanted = NOCAP },
                { .per_executor = { [FAIR_CORES] = 1 }, .weight = 1, .wanted = NOCAP },
                { .per_executor = { [FAIR_CORES] = 1, [FAIR_NAMED_FIRST + 1] = 1 }, .weight = 1, .wanted = NOCAP },
        };
        int64_t cap[_FAIR_RESOURCES] = { [FAIR_CORES] = 8, [FAIR_NAMED_FIRST] = 2 };

        assert_targets(apps, cap, 2, 6, 0);
        ck_assert_int_eq(fair_share_cmp(fair_share_of(&apps[0], 1, cap), fair_share_of(&apps[1], 4, cap)), 0);
        ck_assert_int_gt(fair_share_cmp(fair_share_of(&apps[2], 0, cap), fair_share_of(&apps[1], 8, cap)), 0);
}
END_TEST

/* A capped app takes its demand; the rest goes to the others. */
START_TEST(test_capped_demand) {
        FairApp apps[] = { APP(1, 100, 1, 2), APP(1, 100, 1, NOCAP), APP(2, 100, 1, 0) };
        int64_t cap[_FAIR_RESOURCES] = { 10, 1 << 20 };

        assert_targets(apps, cap, 2, 8, 0);
}
END_TEST

/* Memory-heavy apps are held back by memory, and cores go to the others. */
START_TEST(test_memory_dominant) {
        FairApp apps[] = { APP(1, 4096, 1, NOCAP), APP(1, 256, 1, NOCAP) };
        int64_t cap[_FAIR_RESOURCES] = { 16, 16384 };
        int t[2];

        ck_assert_int_eq(fair_targets(apps, 2, cap, t), 0);
        /* A: 1/4 of the memory per executor, B: 1/16 of the cores; A
         * stops at 3 (a 4th does not fit beside B's), B fills the cores */
        ck_assert_int_eq(t[0], 3);
        ck_assert_int_eq(t[1], 13);
        ck_assert_int_le(t[0] * 4096 + t[1] * 256, 16384);
}
END_TEST

START_TEST(test_next_and_bad_input) {
        FairApp apps[] = { APP(1, 100, 1, NOCAP), APP(1, 100, 1, NOCAP), APP(1, 100, 1, 1) };
        int64_t cap[_FAIR_RESOURCES] = { 10, 1000 };
        bool skip[3] = { false, true, false };
        int t[3];

        apps[0].held = 3;
        apps[1].held = 1;
        apps[2].held = 1;  /* has all it wants */
        ck_assert_int_eq(fair_next(apps, 3, cap, NULL), 1);
        ck_assert_int_eq(fair_next(apps, 3, cap, skip), 0);
        skip[0] = true;
        ck_assert_int_eq(fair_next(apps, 3, cap, skip), -1);

        apps[1].weight = 0;
        ck_assert_int_eq(fair_targets(apps, 3, cap, t), -EINVAL);
        apps[1].weight = 1;
        apps[1].per_executor[0] = apps[1].per_executor[1] = 0;
        ck_assert_int_eq(fair_targets(apps, 3, cap, t), -EINVAL);
        apps[1].per_executor[0] = -1;
        ck_assert_int_eq(fair_targets(apps, 3, cap, t), -EINVAL);
        apps[1].per_executor[0] = 1;
        cap[1] = -5;
        ck_assert_int_eq(fair_targets(apps, 3, cap, t), -EINVAL);
        cap[1] = FAIR_CAPACITY_MAX + 1;
        ck_assert_int_eq(fair_targets(apps, 3, cap, t), -EINVAL);
        /* a resource the cluster has none of: only the app that needs
         * none of it gets anything */
        cap[1] = 0;
        assert_targets(apps, cap, 0, 10, 0);
}
END_TEST

/* A large cluster, one app alone: everything at once, not one by one. */
START_TEST(test_large_single_app) {
        FairApp apps[] = { APP(1, 1024, 1, NOCAP) };
        int64_t cap[_FAIR_RESOURCES] = { 640000, INT64_C(1024) * 1000000 };

        assert_targets(apps, cap, 640000);
}
END_TEST

/* ------------------------------------------------------ property tests */

static bool fits_in(const FairApp *a, const int64_t *left) {
        for (int r = 0; r < _FAIR_RESOURCES; r++)
                if (a->per_executor[r] > left[r])
                        return false;
        return true;
}

/* Checks that t is weighted DRF's allocation of apps in cap:
 * - feasible: within capacity and demands;
 * - non-wasteful: an app short of its demand cannot fit one more executor
 *   in what is left;
 * - DRF's max-min property, in whole executors: an app short of its demand
 *   cannot get one more executor even if every other app whose weighted
 *   dominant share is above what it would then have gave up executors as
 *   long as it stayed at or above that share.  Only apps with an equal or
 *   lower share would have to lose one. */
static void check_drf(const FairApp *apps, size_t n, const int64_t *cap, const int *t, int round) {
        int64_t left[_FAIR_RESOURCES];

        for (int r = 0; r < _FAIR_RESOURCES; r++) {
                left[r] = cap[r];
                for (size_t i = 0; i < n; i++)
                        left[r] -= (int64_t) t[i] * apps[i].per_executor[r];
                ck_assert_msg(left[r] >= 0, "round %d: resource %d over capacity", round, r);
        }
        for (size_t i = 0; i < n; i++) {
                int64_t freed[_FAIR_RESOURCES];
                FairShare up;

                ck_assert_msg(t[i] >= 0 && t[i] <= apps[i].wanted, "round %d: app %zu beyond its demand", round, i);
                if (t[i] == apps[i].wanted)
                        continue;
                ck_assert_msg(!fits_in(&apps[i], left), "round %d: app %zu could take one more", round, i);

                up = fair_share_of(&apps[i], t[i] + 1, cap);
                for (int r = 0; r < _FAIR_RESOURCES; r++)
                        freed[r] = left[r];
                for (size_t j = 0; j < n; j++) {
                        int k = t[j];
                        if (j == i)
                                continue;
                        /* j may give up executors while it stays at or above up */
                        while (k > 0 && fair_share_cmp(fair_share_of(&apps[j], k - 1, cap), up) >= 0)
                                k--;
                        for (int r = 0; r < _FAIR_RESOURCES; r++)
                                freed[r] += (int64_t) (t[j] - k) * apps[j].per_executor[r];
                }
                ck_assert_msg(!fits_in(&apps[i], freed),
                              "round %d: app %zu could grow by taking only from richer apps", round, i);
        }
}

START_TEST(test_random_clusters_are_drf) {
        unsigned seed = 42;

        for (int round = 0; round < 3000; round++) {
                FairApp apps[12];
                int t[12];
                size_t n = 1 + (size_t) (rand_r(&seed) % 12);
                int64_t cap[_FAIR_RESOURCES] = {
                        1 + rand_r(&seed) % 200,
                        1024 + (int64_t) (rand_r(&seed) % 400) * 256,
                };

                for (size_t i = 0; i < n; i++) {
                        int cap_kind = rand_r(&seed) % 3;
                        apps[i] = (FairApp) {
                                .per_executor = { 1 + rand_r(&seed) % 8, 64 * (1 + rand_r(&seed) % 64) },
                                .weight = 1 + rand_r(&seed) % 4,
                                .wanted = cap_kind == 0 ? NOCAP : rand_r(&seed) % 40,
                        };
                }
                ck_assert_int_eq(fair_targets(apps, n, cap, t), 0);
                check_drf(apps, n, cap, t, round);
        }
}
END_TEST

/* Scaling every weight alike, or the order of apps of distinct shares,
 * changes nothing; doubling the cluster never lowers an app's target when
 * no demand is capped below it. */
START_TEST(test_random_invariants) {
        unsigned seed = 7;

        for (int round = 0; round < 500; round++) {
                FairApp apps[6], scaled[6];
                int t[6], ts[6], t2[6];
                size_t n = 1 + (size_t) (rand_r(&seed) % 6);
                int64_t cap[_FAIR_RESOURCES] = { 8 + rand_r(&seed) % 64, 4096 + rand_r(&seed) % 65536 };
                int64_t cap2[_FAIR_RESOURCES] = { cap[0] * 2, cap[1] * 2 };

                for (size_t i = 0; i < n; i++) {
                        apps[i] = (FairApp) {
                                .per_executor = { 1 + rand_r(&seed) % 4, 128 * (1 + rand_r(&seed) % 16) },
                                .weight = 1 + rand_r(&seed) % 3,
                                .wanted = NOCAP,
                        };
                        scaled[i] = apps[i];
                        scaled[i].weight *= 5;
                }
                ck_assert_int_eq(fair_targets(apps, n, cap, t), 0);
                ck_assert_int_eq(fair_targets(scaled, n, cap, ts), 0);
                for (size_t i = 0; i < n; i++)
                        ck_assert_int_eq(t[i], ts[i]);
                ck_assert_int_eq(fair_targets(apps, n, cap2, t2), 0);
                check_drf(apps, n, cap2, t2, round);
        }
}
END_TEST

/* Preemption's order among an app's executors: fewest running tasks first
 * when counts are known; not running, then youngest, on a tie and when
 * counts are unknown. */
START_TEST(test_victim_order) {
        FairVictim idle = { .running_tasks = 0, .running_since = 100 };
        FairVictim busy_young = { .running_tasks = 3, .running_since = 900 };
        FairVictim one = { .running_tasks = 1, .running_since = 50 };
        FairVictim launching = { .running_tasks = -1, .launching = true };
        FairVictim old_unknown = { .running_tasks = -1, .running_since = 100 };
        FairVictim young_unknown = { .running_tasks = -1, .running_since = 900 };
        FairVictim idle_young = { .running_tasks = 0, .running_since = 900 };
        /* a launching executor holds no task whatever is reported */
        FairVictim launching_reported = { .running_tasks = 4, .launching = true };

        /* counts known: the least busy first, however old */
        ck_assert_int_lt(fair_victim_cmp(&idle, &busy_young), 0);
        ck_assert_int_gt(fair_victim_cmp(&busy_young, &idle), 0);
        ck_assert_int_lt(fair_victim_cmp(&one, &busy_young), 0);
        ck_assert_int_lt(fair_victim_cmp(&idle, &one), 0);
        /* a tie on tasks: not running first, then the youngest */
        ck_assert_int_lt(fair_victim_cmp(&launching, &idle), 0);
        ck_assert_int_lt(fair_victim_cmp(&launching_reported, &idle), 0);
        ck_assert_int_lt(fair_victim_cmp(&idle_young, &idle), 0);
        ck_assert_int_eq(fair_victim_cmp(&idle, &idle), 0);
        /* counts unknown: the old order, not running then youngest */
        ck_assert_int_lt(fair_victim_cmp(&launching, &old_unknown), 0);
        ck_assert_int_lt(fair_victim_cmp(&young_unknown, &old_unknown), 0);
        ck_assert_int_gt(fair_victim_cmp(&old_unknown, &young_unknown), 0);
        /* known counts come before unknown ones */
        ck_assert_int_lt(fair_victim_cmp(&busy_young, &young_unknown), 0);
        ck_assert_int_gt(fair_victim_cmp(&old_unknown, &busy_young), 0);
}
END_TEST

/* The order is a total one: antisymmetric and transitive on random sets. */
START_TEST(test_victim_order_is_total) {
        unsigned seed = 7;

        for (int round = 0; round < 2000; round++) {
                FairVictim v[3];

                for (int i = 0; i < 3; i++)
                        v[i] = (FairVictim) { .running_tasks = rand_r(&seed) % 4 - 1,
                                              .launching = rand_r(&seed) % 4 == 0,
                                              .running_since = (uint64_t) (rand_r(&seed) % 3) };
                for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++) {
                                int ij = fair_victim_cmp(&v[i], &v[j]), ji = fair_victim_cmp(&v[j], &v[i]);

                                ck_assert_int_eq(ij < 0, ji > 0);
                                ck_assert_int_eq(ij == 0, ji == 0);
                                for (int k = 0; k < 3; k++)
                                        if (ij < 0 && fair_victim_cmp(&v[j], &v[k]) < 0)
                                                ck_assert_int_lt(fair_victim_cmp(&v[i], &v[k]), 0);
                        }
        }
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_paper_example,
                test_equal_apps_split_evenly,
                test_weights,
                test_capped_demand,
                test_named_resource,
                test_memory_dominant,
                test_next_and_bad_input,
                test_large_single_app,
                test_random_clusters_are_drf,
                test_random_invariants,
                test_victim_order,
                test_victim_order_is_total,
                NULL,
        };

        return check_run_tests("placement-fair", NULL, tests);
}
