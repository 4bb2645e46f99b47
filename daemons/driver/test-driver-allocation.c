/* Elastic executors, the policy: growth by the backlog (1, 2, 4, ... up to
 * what the tasks can use and max_executors), the first task of an idle
 * application asking at once, idle executors released down to
 * min_executors, and the deadlines the caller's timer follows. */
#include <check.h>

#include "check-run.h"
#include "driver-allocation.h"
#include "macro.h"

#define MS USEC_PER_MSEC
#define T0 (1000 * USEC_PER_SEC)

static Allocation make(unsigned min, unsigned max, unsigned cores) {
        AllocationConfig cfg = {
                .min_executors = min,
                .max_executors = max,
                .cores_per_executor = cores,
                .idle_timeout = 2000 * MS,
                .backlog_timeout = 1000 * MS,
        };
        Allocation a;

        ck_assert_int_eq(allocation_init(&a, &cfg), 0);
        return a;
}

START_TEST(test_bad_config) {
        AllocationConfig cfg = { .cores_per_executor = 0, .idle_timeout = 1, .backlog_timeout = 1 };
        Allocation a;

        ck_assert_int_eq(allocation_init(&a, &cfg), -EINVAL);
        cfg.cores_per_executor = 1;
        cfg.idle_timeout = 0;
        ck_assert_int_eq(allocation_init(&a, &cfg), -EINVAL);
        cfg.idle_timeout = 1;
        ck_assert_int_eq(allocation_init(&a, &cfg), 0);
        cfg.backlog_timeout = 0;
        ck_assert_int_eq(allocation_set_config(&a, &cfg), -EINVAL);
        ck_assert_int_eq(a.cfg.backlog_timeout, 1);  /* unchanged */
}
END_TEST

START_TEST(test_needed) {
        Allocation a = make(0, 0, 4);

        ck_assert_uint_eq(allocation_needed(&a, 0, 0), 0);
        ck_assert_uint_eq(allocation_needed(&a, 1, 0), 1);
        ck_assert_uint_eq(allocation_needed(&a, 4, 0), 1);
        ck_assert_uint_eq(allocation_needed(&a, 4, 1), 2);
        ck_assert_uint_eq(allocation_needed(&a, 1000, 0), 250);
        a = make(3, 10, 1);
        ck_assert_uint_eq(allocation_needed(&a, 0, 0), 3);
        ck_assert_uint_eq(allocation_needed(&a, 1000, 0), 10);
}
END_TEST

/* From 0 executors the first task asks at once, then the backlog grows the
 * target 1 → 3 → 7 → 15, each backlog_timeout, and not before. */
START_TEST(test_first_task_at_once_then_exponential) {
        Allocation a = make(0, 0, 1);
        usec_t now = T0;

        ck_assert(!allocation_update(&a, 0, 0, 0, now));
        ck_assert_uint_eq(a.target, 0);
        ck_assert(allocation_update(&a, 100, 0, 0, now));
        ck_assert_uint_eq(a.target, 1);
        /* still waiting, but within the backlog timeout: nothing more */
        ck_assert(!allocation_update(&a, 100, 0, 0, now + 999 * MS));
        ck_assert_uint_eq(a.target, 1);
        ck_assert(allocation_update(&a, 99, 1, 1, now + 1000 * MS));
        ck_assert_uint_eq(a.target, 3);
        ck_assert(!allocation_update(&a, 97, 3, 3, now + 1500 * MS));
        ck_assert(allocation_update(&a, 97, 3, 3, now + 2000 * MS));
        ck_assert_uint_eq(a.target, 7);
        ck_assert(allocation_update(&a, 93, 7, 7, now + 3000 * MS));
        ck_assert_uint_eq(a.target, 15);
}
END_TEST

/* With executors already, a backlog waits out backlog_timeout first. */
START_TEST(test_backlog_waits_with_executors) {
        Allocation a = make(1, 0, 2);
        usec_t now = T0;

        ck_assert_uint_eq(a.target, 1);
        ck_assert(!allocation_update(&a, 10, 2, 1, now));
        ck_assert_uint_eq(a.target, 1);
        ck_assert(!allocation_update(&a, 10, 2, 1, now + 999 * MS));
        ck_assert(allocation_update(&a, 10, 2, 1, now + 1000 * MS));
        ck_assert_uint_eq(a.target, 2);
        /* the backlog clears: the next one waits the whole timeout again */
        ck_assert(!allocation_update(&a, 0, 4, 2, now + 1100 * MS));
        ck_assert_uint_eq(a.add_at, 0);
        ck_assert(!allocation_update(&a, 5, 4, 2, now + 1200 * MS));
        ck_assert(!allocation_update(&a, 5, 4, 2, now + 2100 * MS));
        ck_assert(allocation_update(&a, 5, 4, 2, now + 2200 * MS));
        ck_assert_uint_eq(a.target, 3);  /* the step started at 1 again */
}
END_TEST

/* Growth stops at what the tasks can use and at max_executors; a step cut
 * short starts the doubling again at 1. */
START_TEST(test_caps) {
        Allocation a = make(0, 5, 1);
        usec_t now = T0;

        ck_assert(allocation_update(&a, 4, 0, 0, now));
        ck_assert_uint_eq(a.target, 1);
        ck_assert(allocation_update(&a, 3, 1, 1, now + 1000 * MS));
        ck_assert_uint_eq(a.target, 3);
        ck_assert(allocation_update(&a, 1, 3, 3, now + 2000 * MS));
        ck_assert_uint_eq(a.target, 4);   /* needed: 4 tasks, not 3 + 4 */
        ck_assert_uint_eq(a.add_step, 1);
        ck_assert(allocation_update(&a, 100, 4, 4, now + 3000 * MS));
        ck_assert_uint_eq(a.target, 5);   /* max_executors */
        ck_assert(!allocation_update(&a, 100, 5, 5, now + 4000 * MS));
        ck_assert_uint_eq(a.target, 5);
        /* tasks done: the target falls to what they use, not below min */
        ck_assert(allocation_update(&a, 0, 2, 5, now + 4100 * MS));
        ck_assert_uint_eq(a.target, 2);
        ck_assert(allocation_update(&a, 0, 0, 5, now + 4200 * MS));
        ck_assert_uint_eq(a.target, 0);

        a = make(2, 0, 1);
        ck_assert(!allocation_update(&a, 0, 0, 0, now));
        ck_assert_uint_eq(a.target, 2);
}
END_TEST

START_TEST(test_release_idle) {
        Allocation a = make(1, 0, 1);
        usec_t now = T0 + 10000 * MS;
        AllocationExecutor ex[] = {
                { .id = 1, .tasks = 0, .busy_at = now - 5000 * MS },
                { .id = 2, .tasks = 1, .busy_at = now - 9000 * MS },  /* busy: stays */
                { .id = 3, .tasks = 0, .busy_at = now - 1999 * MS },  /* not idle long enough */
                { .id = 4, .tasks = 0, .busy_at = now - 7000 * MS },
        };
        int out[8];

        ck_assert(allocation_update(&a, 0, 1, 4, now) == false);
        ck_assert_uint_eq(a.target, 1);
        /* oldest idle first */
        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 4, now, out, 8), 2);
        ck_assert_int_eq(out[0], 4);
        ck_assert_int_eq(out[1], 1);
        /* at most max at a time */
        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 4, now, out, 1), 1);
        ck_assert_int_eq(out[0], 4);
        /* the next decision: executor 3's expiry */
        ck_assert_uint_eq(allocation_next_deadline(&a, 0, &ex[1], 2, now), now + 1 * MS);
        ck_assert_uint_eq(allocation_next_deadline(&a, 0, ex, 4, now), now + 1 * MS);
}
END_TEST

/* Never below min_executors, nor below the target while it is wanted. */
START_TEST(test_release_keeps_min_and_target) {
        Allocation a = make(2, 0, 1);
        usec_t now = T0 + 10000 * MS;
        AllocationExecutor ex[] = {
                { .id = 1, .tasks = 0, .busy_at = now - 5000 * MS },
                { .id = 2, .tasks = 0, .busy_at = now - 6000 * MS },
                { .id = 3, .tasks = 0, .busy_at = now - 7000 * MS },
        };
        int out[8];

        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 3, now, out, 8), 1);
        ck_assert_int_eq(out[0], 3);
        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 2, now, out, 8), 0);
        ck_assert_uint_eq(allocation_next_deadline(&a, 0, ex, 2, now), USEC_INFINITY);

        a = make(0, 0, 1);
        a.target = 3;  /* asked for, while a backlog lasts */
        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 3, now, out, 8), 0);
        a.target = 1;
        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 3, now, out, 8), 2);
        ck_assert_uint_eq(a.target, 1);
}
END_TEST

/* Scale to zero and back: idle executors all go, and a new task asks for
 * one at once. */
START_TEST(test_scale_to_zero_and_back) {
        Allocation a = make(0, 0, 1);
        usec_t now = T0;
        AllocationExecutor ex[] = {
                { .id = 1, .tasks = 0, .busy_at = now },
                { .id = 2, .tasks = 0, .busy_at = now + 100 * MS },
        };
        int out[4];

        a.target = 2;
        ck_assert(allocation_update(&a, 0, 0, 2, now + 200 * MS));
        ck_assert_uint_eq(a.target, 0);
        ck_assert_uint_eq(allocation_next_deadline(&a, 0, ex, 2, now + 200 * MS), now + 2000 * MS);
        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 2, now + 2000 * MS, out, 4), 1);
        ck_assert_int_eq(out[0], 1);
        ck_assert_uint_eq(allocation_pick_idle(&a, ex, 2, now + 2100 * MS, out, 4), 2);
        ck_assert(allocation_update(&a, 1, 0, 0, now + 5000 * MS));
        ck_assert_uint_eq(a.target, 1);
        ck_assert_uint_eq(allocation_next_deadline(&a, 1, NULL, 0, now + 5000 * MS), now + 6000 * MS);
}
END_TEST

/* A lowered max_executors (a reload) pulls the target down at once. */
START_TEST(test_reload_lowers_target) {
        Allocation a = make(0, 0, 1);
        AllocationConfig cfg = a.cfg;

        a.target = 8;
        cfg.max_executors = 3;
        ck_assert_int_eq(allocation_set_config(&a, &cfg), 0);
        ck_assert(allocation_update(&a, 100, 8, 8, T0));
        ck_assert_uint_eq(a.target, 3);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_bad_config,
                test_needed,
                test_first_task_at_once_then_exponential,
                test_backlog_waits_with_executors,
                test_caps,
                test_release_idle,
                test_release_keeps_min_and_target,
                test_scale_to_zero_and_back,
                test_reload_lowers_target,
                NULL,
        };

        return check_run_tests("driver-allocation", NULL, tests);
}
