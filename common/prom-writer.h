/* The Prometheus text exposition format (version 0.0.4) for the daemons'
 * /metrics: families with HELP and TYPE, samples with escaped labels, and
 * histograms with cumulative buckets.  docs/observability.md lists the
 * families; names are in base units (seconds, bytes) and counters end in
 * _total, as promtool's linter wants. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes s as the inside of a label value: backslash, double quote and
 * newline escaped (\\, \", \n), everything else as it is. */
void prom_escape_label(FILE *f, const char *s);

/* "# HELP name help\n# TYPE name type\n"; type: "counter", "gauge",
 * "histogram". */
void prom_family(FILE *f, const char *name, const char *type, const char *help);

/* "name{k1="v1",k2="v2"} value\n": labels are NULL-terminated key, value
 * pairs (none: NULL). */
void prom_sample(FILE *f, const char *name, const char *const *labels, double value);
void prom_sample_u64(FILE *f, const char *name, const char *const *labels, uint64_t value);

/* A histogram of values in seconds with fixed upper bounds (ascending,
 * without +Inf). */
typedef struct PromHistogram {
        const double *bounds;
        size_t n_bounds;
        uint64_t *counts; /* n_bounds + 1: the last is above every bound */
        uint64_t count;
        double sum;
} PromHistogram;

int prom_histogram_init(PromHistogram *h, const double *bounds, size_t n_bounds);
void prom_histogram_done(PromHistogram *h);
void prom_histogram_observe(PromHistogram *h, double value);
/* name_bucket{labels...,le="..."} cumulative, name_sum, name_count. */
void prom_histogram_write(FILE *f, const char *name, const char *const *labels, const PromHistogram *h);

/* Buckets that fit the figures (docs/observability.md): tens of µs for
 * RPCs, milliseconds for an executor's start, seconds for tasks. */
extern const double prom_buckets_rpc[];
extern const size_t prom_buckets_rpc_n;
extern const double prom_buckets_start[];
extern const size_t prom_buckets_start_n;
extern const double prom_buckets_task[];
extern const size_t prom_buckets_task_n;
