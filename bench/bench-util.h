/* Helpers shared by the bench programs: the clock every figure is taken on
 * (CLOCK_MONOTONIC, the same in every process, so a time stamped by one
 * program can be compared with another's), nearest-rank percentiles, and a
 * process's context switches. */
#pragma once

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
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

/* Context switches (voluntary and not) of process pid over all its
 * threads, from /proc; with comm_prefix, only the threads whose name starts
 * with it (e.g. "nng:", nng's own threads). */
static inline uint64_t bench_ctxsw_of(pid_t pid, const char *comm_prefix) {
        char path[64];
        uint64_t sum = 0;
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return 0;
        while ((de = readdir(d))) {
                char file[sizeof(path) + sizeof(de->d_name) + 8], line[128];
                unsigned long long n;
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                if (comm_prefix) {
                        snprintf(file, sizeof(file), "%s/%s/comm", path, de->d_name);
                        f = fopen(file, "re");
                        if (!f)
                                continue;
                        if (!fgets(line, sizeof(line), f) || strncmp(line, comm_prefix, strlen(comm_prefix)) != 0) {
                                fclose(f);
                                continue;
                        }
                        fclose(f);
                }
                snprintf(file, sizeof(file), "%s/%s/status", path, de->d_name);
                f = fopen(file, "re");
                if (!f)
                        continue;
                while (fgets(line, sizeof(line), f))
                        if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1 ||
                            sscanf(line, "nonvoluntary_ctxt_switches: %llu", &n) == 1)
                                sum += n;
                fclose(f);
        }
        closedir(d);
        return sum;
}
