/* Ids and unit names. */
#include <check.h>

#include "check-run.h"
#include "macro.h"
#include "ids.h"

START_TEST(test_app_id) {
        char buf[APP_ID_MAX];

        ck_assert_int_eq(app_id_format(buf, sizeof(buf), 1795972953, 1), 0);
        ck_assert_str_eq(buf, "app-20261129172233-0001");
        ck_assert(app_id_is_valid(buf));
        ck_assert_int_eq(app_id_format(buf, sizeof(buf), 1795972953, 123456), 0);
        ck_assert_str_eq(buf, "app-20261129172233-123456");
        ck_assert(app_id_is_valid(buf));
        ck_assert_int_eq(app_id_format(buf, 10, 1795972953, 1), -ENOBUFS);

        ck_assert(!app_id_is_valid(NULL));
        ck_assert(!app_id_is_valid("app-2026112917223-0001"));
        ck_assert(!app_id_is_valid("app-20261129172233-01"));
        ck_assert(!app_id_is_valid("app-20261129172233-0001/.."));
        ck_assert(!app_id_is_valid("app-20261129172233-00x1"));
        ck_assert(!app_id_is_valid("xpp-20261129172233-0001"));
}
END_TEST

START_TEST(test_worker_id) {
        char buf[WORKER_ID_MAX];

        ck_assert_int_eq(worker_id_format(buf, sizeof(buf), 1795972953, "node-1.lan", 7081), 0);
        ck_assert_str_eq(buf, "worker-20261129172233-node-1.lan-7081");
        ck_assert(worker_id_is_valid(buf));
        ck_assert_int_eq(worker_id_format(buf, sizeof(buf), 0, "a b", 1), -EINVAL);
        ck_assert_int_eq(worker_id_format(buf, sizeof(buf), 0, "", 1), -EINVAL);
        ck_assert(!worker_id_is_valid("worker-a/b"));
        ck_assert(!worker_id_is_valid("worker-a..b"));
        ck_assert(!worker_id_is_valid("worker-"));
        ck_assert(!worker_id_is_valid("w-1"));
}
END_TEST

START_TEST(test_unit_names) {
        char unit[UNIT_NAME_MAX], app[APP_ID_MAX];
        int id = -1;

        ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), "app-20261129172233-0001", 7), 0);
        ck_assert_str_eq(unit, "spark-executor-app-20261129172233-0001-7.service");
        ck_assert_int_eq(executor_unit_parse(unit, app, sizeof(app), &id), 0);
        ck_assert_str_eq(app, "app-20261129172233-0001");
        ck_assert_int_eq(id, 7);

        ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), "app;rm -rf", 1), -EINVAL);
        ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), "app-20261129172233-0001", -1), -EINVAL);
        ck_assert_int_eq(executor_unit_parse("spark-executor-app-20261129172233-0001-.service", app, sizeof(app), &id), -EINVAL);
        ck_assert_int_eq(executor_unit_parse("spark-executor-app-20261129172233-0001-1.scope", app, sizeof(app), &id), -EINVAL);
        ck_assert_int_eq(executor_unit_parse("spark-executor-bogus-1.service", app, sizeof(app), &id), -EINVAL);
        ck_assert_int_eq(executor_unit_parse("spark-master.service", app, sizeof(app), &id), -EINVAL);
        ck_assert_int_eq(executor_unit_parse("spark-executor-app-20261129172233-0001-1.service", app, 5, &id), -ENOBUFS);
}
END_TEST

START_TEST(test_escape) {
        char buf[64];

        ck_assert_int_eq(unit_name_escape("a/b c", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "a-b\\x20c");
        ck_assert_int_eq(unit_name_escape(".hidden", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "\\x2ehidden");
        ck_assert_int_eq(unit_name_escape("x-y", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "x\\x2dy");
        ck_assert_int_eq(unit_name_escape("abcdef", buf, 4), -ENOBUFS);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_app_id,
                test_worker_id,
                test_unit_names,
                test_escape,
                NULL,
        };

        return check_run_tests("ids", NULL, tests);
}
