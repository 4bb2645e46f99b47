/* stamp: the process a transient unit runs in the StartTransientUnit
 * baseline.  Its first act is to read CLOCK_MONOTONIC; it writes that (in
 * µs) to the FIFO or file named by its argument and exits (after ARG2
 * milliseconds, if given: a unit seen active needs a process).  Started as
 * an executor is (unit-baseline with the worker's full property set, its
 * arguments the executor's), it takes both from its environment instead:
 * SPARK_BENCH_STAMP and SPARK_BENCH_STAMP_MS.  Linked statically so that
 * the dynamic loader's work is not counted as systemd's. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct timespec ts;
        char buf[32];
        int fd, n;

        const char *path, *ms_arg;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        path = getenv("SPARK_BENCH_STAMP");
        if (path)
                ms_arg = getenv("SPARK_BENCH_STAMP_MS");
        else if (argc == 2 || argc == 3) {
                path = argv[1];
                ms_arg = argc == 3 ? argv[2] : NULL;
        } else
                return 2;
        n = snprintf(buf, sizeof(buf), "%llu\n",
                     (unsigned long long) ts.tv_sec * 1000000ull + (unsigned long long) ts.tv_nsec / 1000u);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return 1;
        if (write(fd, buf, (size_t) n) != n)
                return 1;
        if (close(fd) < 0)
                return 1;
        if (ms_arg) {
                long ms = atol(ms_arg);
                struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
                nanosleep(&d, NULL);
        }
        return 0;
}
