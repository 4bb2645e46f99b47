/* Helpers shared by the bench programs: the clock every figure is taken on
 * (CLOCK_MONOTONIC, the same in every process, so a time stamped by one
 * program can be compared with another's), and nearest-rank percentiles. */
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bench_now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static inline int bench_cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

static inline void bench_sort_u64(uint64_t *v, size_t n) {
        qsort(v, n, sizeof(*v), bench_cmp_u64);
}

/* Nearest rank (as ../shared/peers/dask_bench.py): the smallest value with
 * at least q% of the samples at or below it.  v must be sorted. */
static inline uint64_t bench_percentile_u64(const uint64_t *v, size_t n, double q) {
        size_t k;

        if (n == 0)
                return 0;
        k = (size_t) (q / 100.0 * (double) n + 0.999999999);
        k = k < 1 ? 0 : k - 1;
        return v[k < n ? k : n - 1];
}

static inline double bench_mean_u64(const uint64_t *v, size_t n) {
        double s = 0;

        for (size_t i = 0; i < n; i++)
                s += (double) v[i];
        return n ? s / (double) n : 0;
}
