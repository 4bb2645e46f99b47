/* The list of the apps that may take more executors (cluster-wanting.h),
 * which a FIFO placement walks instead of every app: it keeps registration
 * order as apps come back onto it, and, kept by the cluster as apps,
 * workers and executors change, it always holds exactly the apps that want
 * more, so that a placement pass over it leaves nothing placeable behind. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-run.h"
#include "cluster-internal.h"
#include "cluster-wanting.h"
#include "log.h"
#include "macro.h"
#include "test-cluster-helpers.h"

/* ------------------------------------------------------- the list alone */

static void assert_list(const AppsWanting *q, const App *const *want, size_t n) {
        const App *a = q->head, *prev = NULL;

        for (size_t i = 0; i < n; i++, prev = a, a = a->wanting_next) {
                ck_assert_ptr_eq(a, want[i]);
                ck_assert_ptr_eq(a->wanting_prev, prev);
                ck_assert(a->wanting);
        }
        ck_assert_ptr_null(a);
        ck_assert_ptr_eq(q->tail, prev);
}

START_TEST(test_list_keeps_registration_order) {
        AppsWanting q = {};
        App apps[5] = {};

        for (size_t i = 0; i < ELEMENTSOF(apps); i++) {
                apps[i] = (App) { .state = SPARK__APP_STATE__APP_WAITING, .cores_per_executor = 1,
                                  .max_cores = 2, .executor_limit = INT32_MAX };
                apps_wanting_number(&q, &apps[i]);
                apps_wanting_update(&q, &apps[i]);
        }
        assert_list(&q, (const App *[]) { &apps[0], &apps[1], &apps[2], &apps[3], &apps[4] }, 5);

        /* full (its cap), at its limit, ended: off the list */
        apps[1].cores_granted = 2;
        apps_wanting_update(&q, &apps[1]);
        apps[3].executor_limit = 0;
        apps_wanting_update(&q, &apps[3]);
        apps[0].state = SPARK__APP_STATE__APP_FINISHED;
        apps_wanting_update(&q, &apps[0]);
        assert_list(&q, (const App *[]) { &apps[2], &apps[4] }, 2);
        ck_assert_ptr_eq(apps_wanting_after(&q, 0), &apps[2]);
        ck_assert_ptr_eq(apps_wanting_after(&q, apps[1].seq), &apps[2]);
        ck_assert_ptr_eq(apps_wanting_after(&q, apps[2].seq), &apps[4]);
        ck_assert_ptr_null(apps_wanting_after(&q, apps[4].seq));

        /* back on it, each in its place: between, at the head, at the tail */
        apps[3].executor_limit = 5;
        apps_wanting_update(&q, &apps[3]);
        apps[1].cores_granted = 1;
        apps_wanting_update(&q, &apps[1]);
        assert_list(&q, (const App *[]) { &apps[1], &apps[2], &apps[3], &apps[4] }, 4);
        /* one core short of another executor of 2 */
        apps[4].cores_per_executor = 2;
        apps[4].cores_granted = 1;
        apps_wanting_update(&q, &apps[4]);
        assert_list(&q, (const App *[]) { &apps[1], &apps[2], &apps[3] }, 3);
        /* an update that changes nothing, and a removal of one not on it */
        apps_wanting_update(&q, &apps[2]);
        apps_wanting_remove(&q, &apps[4]);
        assert_list(&q, (const App *[]) { &apps[1], &apps[2], &apps[3] }, 3);
        apps_wanting_remove(&q, &apps[1]);
        apps_wanting_remove(&q, &apps[3]);
        apps_wanting_remove(&q, &apps[2]);
        assert_list(&q, NULL, 0);
}
END_TEST

/* ------------------------------------------------- kept by the cluster */

/* After a whole pass, no live app, on the list or off it, finds a place
 * for one more executor: the list left nothing behind. */
static void assert_nothing_left_to_place(Cluster *c) {
        cluster_schedule(c);
        ck_assert(cluster_apps_wanting_ok(c));
        for (App *a = cluster_apps(c); a; a = a->next)
                if (app_is_live(a))
                        ck_assert_int_eq(cluster_schedule_app(c, a, INT32_MAX), 0);
}

START_TEST(test_cluster_keeps_the_list) {
        unsigned seed = 20261205;

        for (int round = 0; round < 20; round++) {
                /* FIFO: the list is its walk (fair share walks all apps) */
                Cluster *c = new_cluster(false);
                char apps[RANDOM_APPS][APP_ID_MAX] = {};

                for (int step = 0; step < 300; step++) {
                        random_cluster_change(c, &seed, step, apps);
                        ck_assert(cluster_apps_wanting_ok(c));
                        if (step % 3 == 0)
                                assert_nothing_left_to_place(c);
                }
                cluster_free(c);
        }
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_list_keeps_registration_order,
                test_cluster_keeps_the_list,
                NULL,
        };

        log_set_max_level(LOG_ERR);
        return check_run_tests("cluster-wanting", NULL, tests);
}
