/* executor_write_usage() writes a line that executor_usage_parse() reads
 * back, with the CPU time this process has used so far (at least what a
 * busy loop here burnt) and a peak memory size; malformed lines are
 * -EBADMSG and change nothing. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "alloc-util.h"
#include "check-run.h"
#include "executor-usage.h"
#include "fileio.h"
#include "macro.h"
#include "rm-rf.h"

static char root[] = "/tmp/test-executor-usage.XXXXXX";

static void setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void) {
        (void) rm_rf_at(AT_FDCWD, root);
        snprintf(root, sizeof(root), "/tmp/test-executor-usage.XXXXXX");
}

static uint64_t cpu_now_ns(void) {
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

START_TEST(test_round_trip) {
        _cleanup_free_ char *text = NULL;
        volatile uint64_t sink = 0;
        uint64_t cpu = 0, peak = 0, burnt;
        char path[256];

        while (cpu_now_ns() < 50000000u)  /* 50 ms of CPU */
                sink += 1;
        burnt = cpu_now_ns();
        ck_assert_int_eq(executor_write_usage(root), 0);
        snprintf(path, sizeof(path), "%s/" EXECUTOR_USAGE_FILE, root);
        ck_assert_int_eq(read_full_file(path, 0, EXECUTOR_USAGE_MAX, &text, NULL), 0);
        ck_assert_int_eq(executor_usage_parse(text, &cpu, &peak), 0);
        /* getrusage's granularity is coarser than the clock's: a tick */
        ck_assert_uint_ge(cpu + 10000000u, burnt);
        ck_assert_uint_gt(peak, 1024 * 1024);
        snprintf(path, sizeof(path), "%s/" EXECUTOR_USAGE_FILE ".tmp", root);
        ck_assert_int_eq(access(path, F_OK), -1);
        ck_assert_int_eq(executor_write_usage("/nonexistent/dir"), -ENOENT);
}
END_TEST

START_TEST(test_parse) {
        static const char *const bad[] = {
                "", "spark-usage", "spark-usage 1\n", "spark-usage 1 2", "spark-usage 1 2\nx",
                "spark-usage -1 2\n", "spark-usage 1 x\n", "spark-usage 1  2\n", "usage 1 2\n",
                "spark-usage 99999999999999999999999 2\n",
        };
        uint64_t cpu = 7, peak = 8;

        ck_assert_int_eq(executor_usage_parse("spark-usage 123 456\n", &cpu, &peak), 0);
        ck_assert_uint_eq(cpu, 123);
        ck_assert_uint_eq(peak, 456);
        cpu = 7, peak = 8;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(executor_usage_parse(bad[i], &cpu, &peak) == -EBADMSG, "accepted \"%s\"", bad[i]);
        ck_assert_uint_eq(cpu, 7);
        ck_assert_uint_eq(peak, 8);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_round_trip,
                test_parse,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown };

        return check_run_tests("executor-usage", &options, tests);
}
