/* The main() of every libcheck test program: it names its suite and lists
 * its tests, and says what they need around them (a fixture, a timeout);
 * the suite is built and run here, and its failures turned into the exit
 * status (0: all passed).
 *
 *         int main(void) {
 *                 const TTest *tests[] = { test_a, test_b, NULL };
 *                 const CheckOptions options = { .setup = setup, .timeout = 60 };
 *
 *                 return check_run_tests("name", &options, tests);
 *         }
 *
 * START_TEST's test_a is a static variable, not a constant, so the list is
 * built in main().  A suite of several cases, each with its own fixture,
 * adds them with check_add_case() and runs with check_run(). */
#pragma once

#include <check.h>

typedef struct CheckOptions {
        /* a checked fixture: run in each test's own process, around it */
        SFun setup, teardown;
        /* seconds each test may take; 0: libcheck's default, 4 s */
        int timeout;
} CheckOptions;

/* Adds a test case of the NULL-terminated tests to s; options may be NULL. */
static inline void check_add_case(Suite *s, const char *name, const CheckOptions *options,
                                  const TTest *const *tests) {
        TCase *tc = tcase_create(name);

        if (options && (options->setup || options->teardown))
                tcase_add_checked_fixture(tc, options->setup, options->teardown);
        if (options && options->timeout > 0)
                tcase_set_timeout(tc, options->timeout);
        for (; *tests; tests++)
                tcase_add_test(tc, *tests);
        suite_add_tcase(s, tc);
}

static inline int check_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? 0 : 1;
}

/* Runs the suite of one test case, both named name. */
static inline int check_run_tests(const char *name, const CheckOptions *options, const TTest *const *tests) {
        Suite *s = suite_create(name);

        check_add_case(s, name, options, tests);
        return check_run(s);
}
