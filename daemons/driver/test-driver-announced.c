/* The executors a driver accepts: what the master announced, with the
 * worker each was started on; hostile ids and names refused; bounded. */
#include <check.h>
#include <stdio.h>

#include "check-run.h"
#include "driver.h"
#include "macro.h"

#define W1 "worker-20261129172233-host-1-7078"
#define W2 "worker-20261129172233-host-2-7079"

static Driver *new_driver(void) {
        Driver *d = calloc(1, sizeof(*d));

        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(hashmap_new(&d->announced), 0);
        snprintf(d->app_id, sizeof(d->app_id), "app-20261129172233-0001");
        return d;
}

static void free_driver(Driver *d) {
        driver_forget_all_announced(d);
        hashmap_free(d->announced);
        free(d);
}

START_TEST(test_announce_and_forget) {
        Driver *d = new_driver();

        ck_assert_ptr_null(driver_announced_worker(d, 1));
        ck_assert_int_eq(driver_announce_executor(d, 1, W1), 0);
        ck_assert_int_eq(driver_announce_executor(d, 2, W2), 0);
        ck_assert_str_eq(driver_announced_worker(d, 1), W1);
        ck_assert_str_eq(driver_announced_worker(d, 2), W2);
        ck_assert_ptr_null(driver_announced_worker(d, 3));

        /* announced again from another worker (one that re-adopted it) */
        ck_assert_int_eq(driver_announce_executor(d, 1, W2), 0);
        ck_assert_str_eq(driver_announced_worker(d, 1), W2);
        ck_assert_uint_eq(hashmap_size(d->announced), 2);

        driver_forget_announced(d, 1);
        driver_forget_announced(d, 1);
        driver_forget_announced(d, 99);
        ck_assert_ptr_null(driver_announced_worker(d, 1));
        ck_assert_str_eq(driver_announced_worker(d, 2), W2);

        /* a snapshot replaces the whole set */
        driver_forget_all_announced(d);
        ck_assert_ptr_null(driver_announced_worker(d, 2));
        ck_assert_uint_eq(hashmap_size(d->announced), 0);
        ck_assert_int_eq(driver_announce_executor(d, 7, W1), 0);
        ck_assert_str_eq(driver_announced_worker(d, 7), W1);
        free_driver(d);
}
END_TEST

START_TEST(test_hostile_announcements) {
        Driver *d = new_driver();
        char long_name[WORKER_ID_MAX + 8];

        memset(long_name, 'w', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = 0;
        ck_assert_int_eq(driver_announce_executor(d, 0, W1), -EINVAL);
        ck_assert_int_eq(driver_announce_executor(d, -1, W1), -EINVAL);
        ck_assert_int_eq(driver_announce_executor(d, DRIVER_MAX_EXECUTOR_ID + 1, W1), -EINVAL);
        ck_assert_int_eq(driver_announce_executor(d, 1, ""), -EINVAL);
        ck_assert_int_eq(driver_announce_executor(d, 1, NULL), -EINVAL);
        ck_assert_int_eq(driver_announce_executor(d, 1, "w;rm -rf"), -EINVAL);
        ck_assert_int_eq(driver_announce_executor(d, 1, "w\nx"), -EINVAL);
        ck_assert_int_eq(driver_announce_executor(d, 1, long_name), -EINVAL);
        ck_assert_uint_eq(hashmap_size(d->announced), 0);
        ck_assert_ptr_null(driver_announced_worker(d, 1));
        ck_assert_ptr_null(driver_announced_worker(d, -1));
        free_driver(d);
}
END_TEST

START_TEST(test_bounded) {
        Driver *d = new_driver();

        for (int id = 1; id <= DRIVER_MAX_ANNOUNCED; id++)
                ck_assert_int_eq(driver_announce_executor(d, id, W1), 0);
        ck_assert_int_eq(driver_announce_executor(d, DRIVER_MAX_ANNOUNCED + 1, W1), -ENOSPC);
        ck_assert_ptr_null(driver_announced_worker(d, DRIVER_MAX_ANNOUNCED + 1));
        /* one already there may still move */
        ck_assert_int_eq(driver_announce_executor(d, 5, W2), 0);
        ck_assert_str_eq(driver_announced_worker(d, 5), W2);
        driver_forget_announced(d, 5);
        ck_assert_int_eq(driver_announce_executor(d, DRIVER_MAX_ANNOUNCED + 1, W1), 0);
        free_driver(d);
}
END_TEST

/* The worker's event endpoint waits with its executor for the
 * registration; it goes with the executor, and a hostile one is refused. */
START_TEST(test_worker_events) {
        Driver *d = new_driver();
        char long_url[DRIVER_MAX_EVENTS_URL + 2];

        memset(long_url, 'u', sizeof(long_url) - 1);
        long_url[sizeof(long_url) - 1] = 0;
        ck_assert_int_eq(driver_announce_worker_events(d, 1, "tls+tcp://host-1:7079"), -ENOENT);
        ck_assert_int_eq(driver_announce_executor(d, 1, W1), 0);
        ck_assert_ptr_null(driver_announced_worker_events(d, 1));
        ck_assert_int_eq(driver_announce_worker_events(d, 1, "tls+tcp://host-1:7079"), 0);
        ck_assert_str_eq(driver_announced_worker_events(d, 1), "tls+tcp://host-1:7079");
        /* a worker re-adopting it announces its own */
        ck_assert_int_eq(driver_announce_executor(d, 1, W2), 0);
        ck_assert_int_eq(driver_announce_worker_events(d, 1, "tls+tcp://host-2:7079"), 0);
        ck_assert_str_eq(driver_announced_worker_events(d, 1), "tls+tcp://host-2:7079");
        ck_assert_int_eq(driver_announce_worker_events(d, 1, ""), -EINVAL);
        ck_assert_int_eq(driver_announce_worker_events(d, 1, NULL), -EINVAL);
        ck_assert_int_eq(driver_announce_worker_events(d, 1, long_url), -EINVAL);
        ck_assert_str_eq(driver_announced_worker_events(d, 1), "tls+tcp://host-2:7079");
        ck_assert_ptr_null(driver_announced_worker_events(d, 2));
        driver_forget_announced(d, 1);
        ck_assert_ptr_null(driver_announced_worker_events(d, 1));
        ck_assert_int_eq(driver_announce_executor(d, 3, W1), 0);
        ck_assert_int_eq(driver_announce_worker_events(d, 3, "tls+tcp://host-1:7079"), 0);
        driver_forget_all_announced(d);
        ck_assert_ptr_null(driver_announced_worker_events(d, 3));
        free_driver(d);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_announce_and_forget,
                test_hostile_announcements,
                test_bounded,
                test_worker_events,
                NULL,
        };

        return check_run_tests("driver-announced", NULL, tests);
}
