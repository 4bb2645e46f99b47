/* The exposition writer: escaping of label values and HELP text, sample and
 * histogram lines exactly as Prometheus's text format 0.0.4 has them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check-run.h"
#include "macro.h"
#include "prom-writer.h"

typedef struct Mem {
        char *buf;
        size_t size;
        FILE *f;
} Mem;

static void mem_open(Mem *m) {
        m->f = open_memstream(&m->buf, &m->size);
        ck_assert_ptr_nonnull(m->f);
}

static char *mem_take(Mem *m) {
        ck_assert_int_eq(fclose(m->f), 0);
        return m->buf;
}

START_TEST(test_escape_label) {
        Mem m;
        _cleanup_free_ char *s = NULL;

        mem_open(&m);
        prom_escape_label(m.f, "a\"b\\c\nd\te");
        s = mem_take(&m);
        ck_assert_str_eq(s, "a\\\"b\\\\c\\nd\te");
}
END_TEST

START_TEST(test_family_and_samples) {
        Mem m;
        _cleanup_free_ char *s = NULL;

        mem_open(&m);
        prom_family(m.f, "spark_workers", "gauge", "Workers by state, with a \\ and a\nnewline.");
        prom_sample(m.f, "spark_workers", (const char *const[]) { "state", "alive", NULL }, 2);
        prom_sample(m.f, "spark_up", NULL, 1);
        prom_sample(m.f, "spark_x", (const char *const[]) { "a", "q\"uote", "b", "back\\slash\nline", NULL }, 0.5);
        prom_sample_u64(m.f, "spark_tasks_total", (const char *const[]) { "result", "ok", NULL },
                        UINT64_C(18446744073709551615));
        s = mem_take(&m);
        ck_assert_str_eq(s, "# HELP spark_workers Workers by state, with a \\\\ and a\\nnewline.\n"
                            "# TYPE spark_workers gauge\n"
                            "spark_workers{state=\"alive\"} 2\n"
                            "spark_up 1\n"
                            "spark_x{a=\"q\\\"uote\",b=\"back\\\\slash\\nline\"} 0.5\n"
                            "spark_tasks_total{result=\"ok\"} 18446744073709551615\n");
}
END_TEST

START_TEST(test_histogram) {
        static const double bounds[] = { 0.001, 0.01, 1 };
        PromHistogram h;
        Mem m;
        _cleanup_free_ char *s = NULL;

        ck_assert_int_eq(prom_histogram_init(&h, bounds, 3), 0);
        prom_histogram_observe(&h, 0.0005);
        prom_histogram_observe(&h, 0.001); /* le: the bound itself is in */
        prom_histogram_observe(&h, 0.5);
        prom_histogram_observe(&h, 7);
        mem_open(&m);
        prom_histogram_write(m.f, "spark_d_seconds", (const char *const[]) { "type", "x", NULL }, &h);
        s = mem_take(&m);
        ck_assert_str_eq(s, "spark_d_seconds_bucket{type=\"x\",le=\"0.001\"} 2\n"
                            "spark_d_seconds_bucket{type=\"x\",le=\"0.01\"} 2\n"
                            "spark_d_seconds_bucket{type=\"x\",le=\"1\"} 3\n"
                            "spark_d_seconds_bucket{type=\"x\",le=\"+Inf\"} 4\n"
                            "spark_d_seconds_sum{type=\"x\"} 7.5015000000000001\n"
                            "spark_d_seconds_count{type=\"x\"} 4\n");
        prom_histogram_done(&h);
}
END_TEST

START_TEST(test_bucket_sets_ascend) {
        const struct {
                const double *b;
                size_t n;
        } sets[] = { { prom_buckets_rpc, prom_buckets_rpc_n },
                     { prom_buckets_start, prom_buckets_start_n },
                     { prom_buckets_task, prom_buckets_task_n } };

        for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                for (size_t j = 1; j < sets[i].n; j++)
                        ck_assert(sets[i].b[j] > sets[i].b[j - 1]);
        ck_assert(prom_buckets_rpc[0] <= 0.00001);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_escape_label,
                test_family_and_samples,
                test_histogram,
                test_bucket_sets_ascend,
                NULL,
        };

        return check_run_tests("prom-writer", NULL, tests);
}
