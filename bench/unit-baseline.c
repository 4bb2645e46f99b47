/* unit-baseline: the raw systemd mechanism under an executor's start — one
 * StartTransientUnit over sd-bus (the user bus, as the bench's workers
 * use), timed from just before the call to the first instruction of the
 * unit's process (bench/stamp writes CLOCK_MONOTONIC into a FIFO).
 *
 *   unit-baseline STAMP_BINARY COUNT PAUSE_MS [SLICE]
 *
 * PAUSE_MS is the idle time before each start.  It decides what is
 * measured: moving the new process into its cgroup takes the kernel's
 * cgroup_threadgroup_rwsem for writing, and the first writer after a quiet
 * spell waits for an RCU grace period (one or two scheduler-tick quanta,
 * about 12 or 24 ms on these 250 Hz VMs); starts back to back (PAUSE_MS 0)
 * find it still in its writer-friendly state and skip that wait.  An
 * application's first executor comes after such a quiet spell, so its
 * baseline is a start after a pause; the back-to-back figure is the
 * mechanism at its best.
 *
 * With SLICE, the unit gets the properties the worker gives an executor
 * (daemons/worker/unit-properties.c: Type=exec, the slice, MemoryMax,
 * CPUQuota, CPUWeight, Environment, KillMode, LogExtraFields, ...): what those cost over
 * the bare call.  Prints unit_start_us_p50, unit_start_us_p99,
 * unit_start_us_mean ("key value" lines), and unit_active_us_p50/p99: the
 * call → the PropertiesChanged signal that says the unit is active (what
 * the worker waits for before it reports an executor RUNNING), with the
 * matches added and Subscribe called beforehand, as the worker does.  The
 * units are transient with CollectMode=inactive-or-failed, so nothing is
 * left behind. */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bench-util.h"
#include "macro.h"

typedef struct Watch {
        uint64_t active_at;
} Watch;

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Watch *w = userdata;
        const char *iface, *prop, *state = NULL;
        int r;
        (void) ret_error;

        r = sd_bus_message_read(m, "s", &iface);
        if (r < 0 || !streq(iface, "org.freedesktop.systemd1.Unit"))
                return 0;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &prop);
                if (r >= 0 && streq(prop, "ActiveState"))
                        r = sd_bus_message_read(m, "v", "s", &state);
                else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = 1;
        }
        /* a short-lived unit may be reported active, or already past it */
        if (state && !streq(state, "activating") && w->active_at == 0)
                w->active_at = bench_now_usec();
        return 0;
}

static int append_executor_properties(sd_bus_message *m, const char *slice) {
        int r;

        r = sd_bus_message_append(m, "(sv)", "Type", "s", "exec");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "Slice", "s", slice);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "WorkingDirectory", "s", "/tmp");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "Environment", "as", 4, "SPARK_APP_ID=app-20261129000000-0001",
                                          "SPARK_EXECUTOR_ID=1", "SPARK_WORKER_ID=worker-bench",
                                          "SPARK_DRIVER_URL=tcp://127.0.0.1:9");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "MemoryAccounting", "b", 1);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "MemoryMax", "t", (uint64_t) 256 << 20);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "CPUQuotaPerSecUSec", "t", (uint64_t) 1000000);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "CPUWeight", "t", (uint64_t) 100);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "KillMode", "s", "control-group");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "TimeoutStopUSec", "t", (uint64_t) 10000000);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "SyslogIdentifier", "s", "spark-executor");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "LogExtraFields");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "aay");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "ay");
        for (const char *const *f = (const char *const[]) { "SPARK_APP_ID=app-20261129000000-0001",
                                                             "SPARK_EXECUTOR_ID=1", "SPARK_WORKER_ID=worker-bench",
                                                             NULL };
             r >= 0 && *f; f++)
                r = sd_bus_message_append_array(m, 'y', *f, strlen(*f));
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static int start_unit(sd_bus *bus, const char *name, const char *stamp, const char *fifo, const char *slice) {
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
                r = sd_bus_message_append(m, "(sv)", "ExecStart", "a(sasb)", 1, stamp, 3, stamp, fifo, "100", 0);
        if (r >= 0 && slice)
                r = append_executor_properties(m, slice);
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
        _cleanup_free_ uint64_t *samples = NULL, *active = NULL;
        char fifo[] = "/tmp/spark-bench-stamp.XXXXXX";
        char path[sizeof(fifo) + 8];
        int count, pause_ms, r, fd;

        if ((argc != 4 && argc != 5) || (count = atoi(argv[2])) < 1 || (pause_ms = atoi(argv[3])) < 0) {
                fprintf(stderr, "usage: unit-baseline STAMP_BINARY COUNT PAUSE_MS [SLICE]\n");
                return 2;
        }
        samples = calloc((size_t) count, sizeof(*samples));
        active = calloc((size_t) count, sizeof(*active));
        if (!samples || !active || !mkdtemp(fifo))
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
        r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "Subscribe", NULL, NULL, NULL);
        if (r < 0)
                return 1;
        for (int i = -2; i < count; i++) {
                _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
                _cleanup_free_ char *unit_path = NULL;
                char name[96], buf[64];
                Watch w = {};
                uint64_t t0, t1, deadline;
                ssize_t n;

                snprintf(name, sizeof(name), "spark-bench-baseline-%d-%d.service", (int) getpid(), i + 2);
                r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", name, &unit_path);
                if (r >= 0)
                        r = sd_bus_match_signal(bus, &slot, "org.freedesktop.systemd1", unit_path,
                                                "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                                on_properties_changed, &w);
                if (r < 0)
                        return 1;
                if (pause_ms > 0)
                        (void) usleep((useconds_t) pause_ms * 1000);
                t0 = bench_now_usec();
                r = start_unit(bus, name, argv[1], path, argc == 5 ? argv[4] : NULL);
                if (r < 0)
                        return 1;
                n = read(fd, buf, sizeof(buf) - 1);
                if (n <= 0)
                        return 1;
                buf[n] = 0;
                t1 = strtoull(buf, NULL, 10);
                deadline = bench_now_usec() + 5000000;
                while (w.active_at == 0 && bench_now_usec() < deadline) {
                        r = sd_bus_process(bus, NULL);
                        if (r < 0)
                                return 1;
                        if (r == 0)
                                (void) sd_bus_wait(bus, 100000);
                }
                if (i >= 0) {
                        samples[i] = t1 > t0 ? t1 - t0 : 0;
                        active[i] = w.active_at > t0 ? w.active_at - t0 : UINT64_MAX / 2;
                }
        }
        close(fd);
        unlink(path);
        rmdir(fifo);
        bench_sort_u64(samples, (size_t) count);
        printf("unit_start_us_p50 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 50));
        printf("unit_start_us_p99 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 99));
        printf("unit_start_us_mean %.0f\n", bench_mean_u64(samples, (size_t) count));
        bench_sort_u64(active, (size_t) count);
        printf("unit_active_us_p50 %" PRIu64 "\n", bench_percentile_u64(active, (size_t) count, 50));
        printf("unit_active_us_p99 %" PRIu64 "\n", bench_percentile_u64(active, (size_t) count, 99));
        return 0;
}
