/* See prom-writer.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prom-writer.h"

const double prom_buckets_rpc[] = { 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
                                    0.001,   0.0025,   0.005,   0.01,   0.1,     1 };
const size_t prom_buckets_rpc_n = sizeof(prom_buckets_rpc) / sizeof(prom_buckets_rpc[0]);
const double prom_buckets_start[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10 };
const size_t prom_buckets_start_n = sizeof(prom_buckets_start) / sizeof(prom_buckets_start[0]);
const double prom_buckets_task[] = { 0.0001, 0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800 };
const size_t prom_buckets_task_n = sizeof(prom_buckets_task) / sizeof(prom_buckets_task[0]);

void prom_escape_label(FILE *f, const char *s) {
        for (; s && *s; s++)
                switch (*s) {
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                default:
                        fputc(*s, f);
                }
}

/* HELP text escapes backslash and newline only. */
static void escape_help(FILE *f, const char *s) {
        for (; s && *s; s++)
                if (*s == '\\')
                        fputs("\\\\", f);
                else if (*s == '\n')
                        fputs("\\n", f);
                else
                        fputc(*s, f);
}

void prom_family(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s ", name);
        escape_help(f, help);
        fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void write_labels(FILE *f, const char *const *labels, const char *le) {
        bool any = false;

        for (size_t i = 0; labels && labels[i] && labels[i + 1]; i += 2) {
                fputs(any ? "," : "{", f);
                fprintf(f, "%s=\"", labels[i]);
                prom_escape_label(f, labels[i + 1]);
                fputc('"', f);
                any = true;
        }
        if (le) {
                fprintf(f, "%sle=\"%s\"", any ? "," : "{", le);
                any = true;
        }
        if (any)
                fputc('}', f);
}

static void write_double(FILE *f, double v) {
        if (isnan(v))
                fputs("NaN", f);
        else if (isinf(v))
                fputs(v > 0 ? "+Inf" : "-Inf", f);
        else
                fprintf(f, "%.17g", v);
}

void prom_sample(FILE *f, const char *name, const char *const *labels, double value) {
        fputs(name, f);
        write_labels(f, labels, NULL);
        fputc(' ', f);
        write_double(f, value);
        fputc('\n', f);
}

void prom_sample_u64(FILE *f, const char *name, const char *const *labels, uint64_t value) {
        fputs(name, f);
        write_labels(f, labels, NULL);
        fprintf(f, " %" PRIu64 "\n", value);
}

int prom_histogram_init(PromHistogram *h, const double *bounds, size_t n_bounds) {
        *h = (PromHistogram) { .bounds = bounds, .n_bounds = n_bounds };
        h->counts = calloc(n_bounds + 1, sizeof(*h->counts));
        return h->counts ? 0 : -ENOMEM;
}

void prom_histogram_done(PromHistogram *h) {
        free(h->counts);
        h->counts = NULL;
}

void prom_histogram_observe(PromHistogram *h, double value) {
        size_t i = 0;

        if (!h->counts || isnan(value))
                return;
        while (i < h->n_bounds && value > h->bounds[i])
                i++;
        h->counts[i]++;
        h->count++;
        h->sum += value;
}

void prom_histogram_write(FILE *f, const char *name, const char *const *labels, const PromHistogram *h) {
        size_t n = strlen(name);
        char bucket[n + sizeof("_bucket")], sum[n + sizeof("_sum")], count[n + sizeof("_count")], le[32];
        uint64_t cumulative = 0;

        snprintf(bucket, sizeof(bucket), "%s_bucket", name);
        snprintf(sum, sizeof(sum), "%s_sum", name);
        snprintf(count, sizeof(count), "%s_count", name);
        for (size_t i = 0; i < h->n_bounds; i++) {
                cumulative += h->counts ? h->counts[i] : 0;
                snprintf(le, sizeof(le), "%g", h->bounds[i]);
                fputs(bucket, f);
                write_labels(f, labels, le);
                fprintf(f, " %" PRIu64 "\n", cumulative);
        }
        fputs(bucket, f);
        write_labels(f, labels, "+Inf");
        fprintf(f, " %" PRIu64 "\n", h->count);
        prom_sample(f, sum, labels, h->sum);
        prom_sample_u64(f, count, labels, h->count);
}
