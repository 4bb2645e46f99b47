/* Placement: Spark's spread-out and consolidate semantics. */
#include <check.h>

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

int main(void) {
        Suite *s = suite_create("placement");
        TCase *tc = tcase_create("placement");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_spread_out_round_robin);
        tcase_add_test(tc, test_consolidate_fills_first);
        tcase_add_test(tc, test_most_free_cores_first);
        tcase_add_test(tc, test_cores_cap_and_cores_per_executor);
        tcase_add_test(tc, test_memory_must_fit);
        tcase_add_test(tc, test_unusable_and_limits);
        tcase_add_test(tc, test_many_workers);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? 0 : 1;
}
