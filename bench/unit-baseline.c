/* unit-baseline: the raw systemd mechanism under an executor's start — one
 * StartTransientUnit over sd-bus (the user bus, as the bench's workers
 * use), timed from just before the call to the first instruction of the
 * unit's process (bench/stamp writes CLOCK_MONOTONIC into a FIFO).
 *
 *   unit-baseline STAMP_BINARY COUNT
 *
 * Prints unit_start_us_p50, unit_start_us_p99, unit_start_us_mean
 * ("key value" lines).  The units are transient with
 * CollectMode=inactive-or-failed, so nothing is left behind. */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include <systemd/sd-bus.h>

#include "bench-util.h"
#include "macro.h"

static int start_unit(sd_bus *bus, const char *name, const char *stamp, const char *fifo) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", name, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "Description", "s", "spark bench baseline");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "ExecStart", "a(sasb)", 1, stamp, 2, stamp, fifo, 0);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;
        r = sd_bus_call(bus, m, 10 * 1000000ULL, &err, &reply);
        if (r < 0)
                fprintf(stderr, "unit-baseline: StartTransientUnit: %s\n", err.message ? err.message : strerror(-r));
        sd_bus_error_free(&err);
        return r;
}

int main(int argc, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ uint64_t *samples = NULL;
        char fifo[] = "/tmp/spark-bench-stamp.XXXXXX";
        char path[sizeof(fifo) + 8];
        int count, r, fd;

        if (argc != 3 || (count = atoi(argv[2])) < 1) {
                fprintf(stderr, "usage: unit-baseline STAMP_BINARY COUNT\n");
                return 2;
        }
        samples = calloc((size_t) count, sizeof(*samples));
        if (!samples || !mkdtemp(fifo))
                return 1;
        snprintf(path, sizeof(path), "%s/fifo", fifo);
        if (mkfifo(path, 0600) < 0)
                return 1;
        /* O_RDWR: the open does not wait for a writer, and read() blocks
         * until the unit's process has written its stamp */
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return 1;
        r = sd_bus_open_user(&bus);
        if (r < 0) {
                fprintf(stderr, "unit-baseline: cannot connect to the user bus: %s\n", strerror(-r));
                return 1;
        }
        for (int i = -2; i < count; i++) {
                char name[96], buf[64];
                uint64_t t0, t1;
                ssize_t n;

                snprintf(name, sizeof(name), "spark-bench-baseline-%d-%d.service", (int) getpid(), i + 2);
                t0 = bench_now_usec();
                r = start_unit(bus, name, argv[1], path);
                if (r < 0)
                        return 1;
                n = read(fd, buf, sizeof(buf) - 1);
                if (n <= 0)
                        return 1;
                buf[n] = 0;
                t1 = strtoull(buf, NULL, 10);
                if (i >= 0)
                        samples[i] = t1 > t0 ? t1 - t0 : 0;
        }
        close(fd);
        unlink(path);
        rmdir(fifo);
        bench_sort_u64(samples, (size_t) count);
        printf("unit_start_us_p50 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 50));
        printf("unit_start_us_p99 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 99));
        printf("unit_start_us_mean %.0f\n", bench_mean_u64(samples, (size_t) count));
        return 0;
}
