/* Advertised endpoints. */
#include <check.h>

#include "check-run.h"
#include "endpoint.h"
#include "macro.h"

START_TEST(test_advertise) {
        /* a listen endpoint and what node-1 advertises for it */
        static const struct {
                const char *listen, *advertised;
        } cases[] = {
                { "tcp://0.0.0.0:7081", "tcp://node-1:7081" },
                { "tls+tcp://0.0.0.0:7081", "tls+tcp://node-1:7081" },
                { "tcp://127.0.0.1:7081", "tcp://127.0.0.1:7081" },
                { "ipc:///run/spark/w.sock", "ipc:///run/spark/w.sock" },
        };
        char *s = NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ck_assert_int_eq(endpoint_advertise(cases[i].listen, "node-1", &s), 0);
                ck_assert_str_eq(s, cases[i].advertised);
                free(s);
        }
        ck_assert_int_eq(endpoint_advertise("bogus", "x", &s), -EINVAL);
        ck_assert_uint_eq(endpoint_port("tcp://h:7081"), 7081);
        ck_assert_uint_eq(endpoint_port("ipc:///x"), 0);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_advertise,
                NULL,
        };

        return check_run_tests("endpoint", NULL, tests);
}
