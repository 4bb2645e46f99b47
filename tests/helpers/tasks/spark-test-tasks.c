/* Function tasks for the executor's tests (built as a shared object, see
 * daemons/executor/test-helpers.h).  Each implements include/spark/task.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <spark/task.h>

SPARK_TASK_ABI;

#define EXPORT __attribute__((visibility("default")))

static int copy_out(spark_task_output *out, const void *data, size_t len) {
        out->data = malloc(len > 0 ? len : 1);
        if (!out->data) {
                snprintf(out->error, sizeof(out->error), "out of memory");
                return 1;
        }
        memcpy(out->data, data, len);
        out->len = len;
        return 0;
}

/* Nothing in, nothing out: the cheapest task there is. */
EXPORT int empty(const spark_task_input *in, spark_task_output *out) {
        (void) in;
        (void) out;
        return 0;
}

EXPORT int echo(const spark_task_input *in, spark_task_output *out) {
        return copy_out(out, in->data, in->len);
}

EXPORT int upper(const spark_task_input *in, spark_task_output *out) {
        const unsigned char *p = in->data;
        char *b = malloc(in->len > 0 ? in->len : 1);

        if (!b)
                return 1;
        for (size_t i = 0; i < in->len; i++)
                b[i] = (char) toupper(p[i]);
        out->data = b;
        out->len = in->len;
        return 0;
}

/* "index=I attempt=A input=..." */
EXPORT int describe(const spark_task_input *in, spark_task_output *out) {
        char buf[512];
        int n = snprintf(buf, sizeof(buf), "index=%lld attempt=%d input=%.*s", (long long) in->index, (int) in->attempt,
                         (int) (in->len < 256 ? in->len : 256), (const char *) in->data);

        return copy_out(out, buf, (size_t) n);
}

EXPORT int fail(const spark_task_input *in, spark_task_output *out) {
        snprintf(out->error, sizeof(out->error), "asked to fail: %.*s", (int) (in->len < 200 ? in->len : 200),
                 (const char *) in->data);
        return 3;
}

EXPORT int fail_silently(const spark_task_input *in, spark_task_output *out) {
        (void) in;
        (void) out;
        return 7;
}

/* Sleeps for the number of milliseconds in the input. */
EXPORT int sleep_ms(const spark_task_input *in, spark_task_output *out) {
        char buf[32];
        long ms;
        struct timespec ts;

        snprintf(buf, sizeof(buf), "%.*s", (int) (in->len < 31 ? in->len : 31), (const char *) in->data);
        ms = atol(buf);
        ts.tv_sec = ms / 1000;
        ts.tv_nsec = (ms % 1000) * 1000000L;
        while (nanosleep(&ts, &ts) != 0)
                ;
        return copy_out(out, "slept", 5);
}

/* Outputs as many 'x' as the input says. */
EXPORT int big(const spark_task_input *in, spark_task_output *out) {
        char buf[32];
        size_t n;

        snprintf(buf, sizeof(buf), "%.*s", (int) (in->len < 31 ? in->len : 31), (const char *) in->data);
        n = (size_t) atol(buf);
        out->data = malloc(n > 0 ? n : 1);
        if (!out->data)
                return 1;
        memset(out->data, 'x', n);
        out->len = n;
        return 0;
}
