/* Advertised endpoints. */
#include <check.h>

#include "check-run.h"
#include "endpoint.h"
#include "macro.h"

START_TEST(test_advertise) {
        char *s = NULL;

        ck_assert_int_eq(endpoint_advertise("tcp://0.0.0.0:7081", "node-1", &s), 0);
        ck_assert_str_eq(s, "tcp://node-1:7081");
        free(s);
        ck_assert_int_eq(endpoint_advertise("tls+tcp://0.0.0.0:7081", "node-1", &s), 0);
        ck_assert_str_eq(s, "tls+tcp://node-1:7081");
        free(s);
        ck_assert_int_eq(endpoint_advertise("tcp://127.0.0.1:7081", "node-1", &s), 0);
        ck_assert_str_eq(s, "tcp://127.0.0.1:7081");
        free(s);
        ck_assert_int_eq(endpoint_advertise("ipc:///run/spark/w.sock", "node-1", &s), 0);
        ck_assert_str_eq(s, "ipc:///run/spark/w.sock");
        free(s);
        ck_assert_int_eq(endpoint_advertise("bogus", "x", &s), -EINVAL);
        ck_assert_uint_eq(endpoint_port("tcp://h:7081"), 7081);
        ck_assert_uint_eq(endpoint_port("ipc:///x"), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("endpoint");
        TCase *tc = tcase_create("endpoint");

        tcase_add_test(tc, test_advertise);
        suite_add_tcase(s, tc);
        return check_run(s);
}
