/* Placement: Spark's spread-out and consolidate semantics. */
#include <check.h>
#include <stdlib.h>

#include "check-run.h"
#include "macro.h"
#include "placement.h"

#define W(c, m) { .cores_free = (c), .memory_free_mb = (m), .usable = true }

static int run(PlacementRequest req, const PlacementWorker *w, size_t n, int *out) {
        size_t order[64];
        ck_assert(n <= 64);
        return placement_schedule(&req, w, n, order, out);
}

START_TEST(test_spread_out_round_robin) {
        PlacementWorker w[] = { W(4, 8192), W(4, 8192) };
        int ex[2];

        /* 4 cores, 1 per executor: two on each worker */
        ck_assert_int_eq(run((PlacementRequest) { 4, 1, 1024, 100, true }, w, 2, ex), 4);
        ck_assert_int_eq(ex[0], 2);
        ck_assert_int_eq(ex[1], 2);
}
END_TEST

START_TEST(test_consolidate_fills_first) {
        PlacementWorker w[] = { W(4, 8192), W(4, 8192) };
        int ex[2];

        ck_assert_int_eq(run((PlacementRequest) { 4, 1, 1024, 100, false }, w, 2, ex), 4);
        ck_assert_int_eq(ex[0], 4);
        ck_assert_int_eq(ex[1], 0);
}
END_TEST

START_TEST(test_most_free_cores_first) {
        PlacementWorker w[] = { W(2, 8192), W(8, 8192), W(4, 8192) };
        int ex[3];

        ck_assert_int_eq(run((PlacementRequest) { 3, 1, 100, 100, false }, w, 3, ex), 3);
        ck_assert_int_eq(ex[0], 0);
        ck_assert_int_eq(ex[1], 3);
        ck_assert_int_eq(ex[2], 0);

        ck_assert_int_eq(run((PlacementRequest) { 3, 1, 100, 100, true }, w, 3, ex), 3);
        ck_assert_int_eq(ex[0], 1);
        ck_assert_int_eq(ex[1], 1);
        ck_assert_int_eq(ex[2], 1);
}
END_TEST

START_TEST(test_cores_cap_and_cores_per_executor) {
        PlacementWorker w[] = { W(8, 65536), W(8, 65536) };
        int ex[2];

        /* 6 cores wanted, 2 per executor: 3 executors, spread 2+1 */
        ck_assert_int_eq(run((PlacementRequest) { 6, 2, 1024, 100, true }, w, 2, ex), 3);
        ck_assert_int_eq(ex[0] + ex[1], 3);
        ck_assert_int_eq(ex[0], 2);
        /* 5 wanted, 2 per executor: the odd core is never assigned */
        ck_assert_int_eq(run((PlacementRequest) { 5, 2, 1024, 100, true }, w, 2, ex), 2);
        /* a worker with fewer free cores than one executor needs is skipped */
        PlacementWorker small[] = { W(1, 65536), W(3, 65536) };
        ck_assert_int_eq(run((PlacementRequest) { 10, 2, 1024, 100, true }, small, 2, ex), 1);
        ck_assert_int_eq(ex[0], 0);
        ck_assert_int_eq(ex[1], 1);
}
END_TEST

START_TEST(test_memory_must_fit) {
        PlacementWorker w[] = { W(8, 2048), W(8, 500) };
        int ex[2];

        /* 1 GiB each: worker 0 takes two (memory-bound), worker 1 none */
        ck_assert_int_eq(run((PlacementRequest) { 8, 1, 1024, 100, true }, w, 2, ex), 2);
        ck_assert_int_eq(ex[0], 2);
        ck_assert_int_eq(ex[1], 0);
}
END_TEST

START_TEST(test_unusable_and_limits) {
        PlacementWorker w[] = { W(8, 8192), W(8, 8192) };
        int ex[2];

        w[0].usable = false;
        ck_assert_int_eq(run((PlacementRequest) { 4, 1, 1, 100, true }, w, 2, ex), 4);
        ck_assert_int_eq(ex[0], 0);
        ck_assert_int_eq(ex[1], 4);
        w[0].usable = true;
        /* executor limit */
        ck_assert_int_eq(run((PlacementRequest) { 16, 1, 1, 3, true }, w, 2, ex), 3);
        /* nothing wanted */
        ck_assert_int_eq(run((PlacementRequest) { 0, 1, 1, 100, true }, w, 2, ex), 0);
        ck_assert_int_eq(run((PlacementRequest) { 4, 0, 1, 100, true }, w, 2, ex), -EINVAL);
        ck_assert_int_eq(run((PlacementRequest) { -1, 1, 1, 100, true }, w, 2, ex), -EINVAL);
        ck_assert_int_eq(run((PlacementRequest) { 4, 1, 1, 100, true }, w, 0, ex), 0);
}
END_TEST

START_TEST(test_many_workers) {
        enum { NW = 10000 };
        static PlacementWorker w[NW];
        static size_t order[NW];
        static int ex[NW];
        PlacementRequest req = { 20000, 1, 512, 1000000, true };
        int placed, total = 0;

        for (int i = 0; i < NW; i++)
                w[i] = (PlacementWorker) W(1 + i % 4, 4096);
        placed = placement_schedule(&req, w, NW, order, ex);
        for (int i = 0; i < NW; i++) {
                ck_assert(ex[i] <= w[i].cores_free);
                ck_assert(ex[i] * 512 <= 4096);
                total += ex[i];
        }
        ck_assert_int_eq(placed, total);
        ck_assert_int_eq(placed, 20000);
        /* spread out: every worker got at least one before any got three */
        for (int i = 0; i < NW; i++)
                ck_assert_int_ge(ex[i], 1);
}
END_TEST

/* The reference: the algorithm with all usable workers fully sorted, as it
 * was before placement selected the first k in linear time. */
static int ref_cmp(const void *a, const void *b, void *userdata) {
        const PlacementWorker *w = userdata;
        size_t i = *(const size_t *) a, j = *(const size_t *) b;

        if (w[i].cores_free != w[j].cores_free)
                return w[i].cores_free > w[j].cores_free ? -1 : 1;
        return i < j ? -1 : 1;
}

static int reference(const PlacementRequest *req, const PlacementWorker *w, size_t n, int *ex) {
        size_t order[512], usable = 0;
        int64_t free_total = 0;
        int cores_left, left, placed = 0;
        bool progress;

        for (size_t i = 0; i < n; i++) {
                ex[i] = 0;
                if (w[i].usable && w[i].cores_free >= req->cores_per_executor &&
                    w[i].memory_free_mb >= req->memory_per_executor_mb) {
                        order[usable++] = i;
                        free_total += w[i].cores_free;
                }
        }
        if (usable == 0)
                return 0;
        qsort_r(order, usable, sizeof(size_t), ref_cmp, (void *) w);
        cores_left = (int) MIN(free_total, (int64_t) req->cores_wanted);
        left = req->executors_allowed;
        do {
                progress = false;
                for (size_t k = 0; k < usable; k++) {
                        size_t i = order[k];
                        while (cores_left >= req->cores_per_executor && left > 0 &&
                               w[i].cores_free - (int64_t) ex[i] * req->cores_per_executor >= req->cores_per_executor &&
                               w[i].memory_free_mb - (int64_t) ex[i] * req->memory_per_executor_mb >=
                                       req->memory_per_executor_mb) {
                                ex[i]++;
                                cores_left -= req->cores_per_executor;
                                left--;
                                placed++;
                                progress = true;
                                if (req->spread_out)
                                        break;
                        }
                }
        } while (progress && req->spread_out);
        return placed;
}

/* Small apps and slices of large ones on a cluster of many workers (with
 * many ties in free cores): the same placement as with every worker
 * sorted. */
START_TEST(test_selection_matches_full_sort) {
        static PlacementWorker w[512];
        static size_t order[512];
        static int ex[512], want[512];
        unsigned seed = 7;

        for (int round = 0; round < 2000; round++) {
                size_t n = 1 + (size_t) (rand_r(&seed) % 512);
                PlacementRequest req = {
                        .cores_per_executor = 1 + rand_r(&seed) % 4,
                        .memory_per_executor_mb = 1 + rand_r(&seed) % 2048,
                        .spread_out = rand_r(&seed) % 2,
                };
                int got, ref;

                req.cores_wanted = rand_r(&seed) % 3 == 0 ? INT32_MAX : rand_r(&seed) % 64;
                req.executors_allowed = rand_r(&seed) % 3 == 0 ? INT32_MAX : rand_r(&seed) % 40;
                for (size_t i = 0; i < n; i++)
                        w[i] = (PlacementWorker) {
                                .cores_free = rand_r(&seed) % 9,
                                .memory_free_mb = rand_r(&seed) % 8192,
                                .usable = rand_r(&seed) % 8 != 0,
                        };
                ref = reference(&req, w, n, want);
                got = placement_schedule(&req, w, n, order, ex);
                ck_assert_int_eq(got, ref);
                for (size_t i = 0; i < n; i++)
                        ck_assert_msg(ex[i] == want[i], "round %d: worker %zu got %d, expected %d", round, i, ex[i],
                                      want[i]);
        }
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_spread_out_round_robin,
                test_consolidate_fills_first,
                test_most_free_cores_first,
                test_cores_cap_and_cores_per_executor,
                test_memory_must_fit,
                test_unusable_and_limits,
                test_many_workers,
                test_selection_matches_full_sort,
                NULL,
        };

        return check_run_tests("placement", NULL, tests);
}
