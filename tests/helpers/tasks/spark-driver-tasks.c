/* Function tasks for the driver's black-box tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <spark/task.h>

SPARK_TASK_ABI;

#define EXPORT __attribute__((visibility("default")))

static long input_number(const spark_task_input *in) {
        char buf[32];

        snprintf(buf, sizeof(buf), "%.*s", (int) (in->len < 31 ? in->len : 31), (const char *) in->data);
        return atol(buf);
}

static int print_out(spark_task_output *out, const char *fmt, long long a) {
        char *s = malloc(64);

        if (!s)
                return 1;
        out->len = (size_t) snprintf(s, 64, fmt, a);
        out->data = s;
        return 0;
}

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) != 0)
                ;
}

/* The square of the input number, as text. */
EXPORT int square(const spark_task_input *in, spark_task_output *out) {
        long n = input_number(in);
        return print_out(out, "%lld\n", (long long) n * n);
}

/* The same, after 20 ms: long enough jobs to break executors under. */
EXPORT int slow_square(const spark_task_input *in, spark_task_output *out) {
        sleep_ms(20);
        return square(in, out);
}

/* Fails on the first two attempts, succeeds on the third. */
EXPORT int third_time_lucky(const spark_task_input *in, spark_task_output *out) {
        if (in->attempt < 3) {
                snprintf(out->error, sizeof(out->error), "unlucky attempt %d", (int) in->attempt);
                return 1;
        }
        return print_out(out, "lucky on attempt %lld\n", in->attempt);
}

/* Always fails, naming the attempt. */
EXPORT int always_fail(const spark_task_input *in, spark_task_output *out) {
        snprintf(out->error, sizeof(out->error), "boom on attempt %d", (int) in->attempt);
        return 2;
}
