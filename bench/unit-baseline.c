/* unit-baseline: the raw systemd mechanism under an executor's start — one
 * StartTransientUnit over sd-bus (the user bus, as the bench's workers
 * use), timed from just before the call to the first instruction of the
 * unit's process (bench/stamp writes CLOCK_MONOTONIC into a FIFO).
 *
 *   unit-baseline STAMP_BINARY COUNT PAUSE_MS [SLICE [WORK_DIR]]
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
 * With SLICE, the unit gets some of the properties the worker gives an
 * executor (Type=exec, the slice, MemoryMax, CPUQuota, CPUWeight,
 * Environment, KillMode, LogExtraFields, ...); with SLICE and WORK_DIR, all
 * of them, sandbox included: the worker's own property builder
 * (daemons/worker/unit-properties.c, executor_unit_append_properties())
 * makes the array for STAMP_BINARY as the executor binary, with a work dir
 * per start under WORK_DIR, a secret file for LoadCredential= and
 * InaccessiblePaths= as a bench worker's (its master's state dir, the
 * default one, its secrets dir).  stamp then finds its FIFO, under the work
 * dir (the sandbox's PrivateTmp= hides /tmp), in SPARK_BENCH_STAMP, passed
 * as an app's executor_env is.  That is the baseline of an application's
 * first executor.  Prints unit_start_us_p50, unit_start_us_p99,
 * unit_start_us_mean ("key value" lines), unit_start_us_samples (every
 * sample, in the order taken), and unit_active_us_p50/p99: the
 * call → the PropertiesChanged signal that says the unit is active (what
 * the worker waits for before it reports an executor RUNNING), with the
 * matches added and Subscribe called beforehand, as the worker does.  The
 * units are transient with CollectMode=inactive-or-failed, so nothing is
 * left behind.
 *
 * With UNIT_BASELINE_AT_ONCE=2 (full property set only), each sample is two
 * such units whose StartTransientUnit calls go out together, as two workers
 * on this one host send theirs for an application of two executors: the
 * time to the first instruction of whichever comes first
 * (unit_first_of_2_us_p50/p99, and unit_first_of_2_us_samples).  On a
 * real cluster the two are on two hosts with a manager each; here they
 * share one manager and the same cores. */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bench-util.h"
#include "macro.h"
#include "unit-properties.h"

#define BENCH_APP_ID "app-20261129000000-0001"

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
                r = unit_property_open_array(m, "LogExtraFields", "ay");
        for (const char *const *f = (const char *const[]) { "SPARK_APP_ID=app-20261129000000-0001",
                                                             "SPARK_EXECUTOR_ID=1", "SPARK_WORKER_ID=worker-bench",
                                                             NULL };
             r >= 0 && *f; f++)
                r = sd_bus_message_append_array(m, 'y', *f, strlen(*f));
        if (r >= 0)
                r = unit_property_close_array(m);
        return r;
}

/* The properties of executor id of a worker whose work dir is work_root:
 * the worker's builder, sandbox included.  Makes the executor's work dir
 * (as the worker does before its call) and leaves the FIFO's path, in it,
 * in fifo. */
static int append_full_executor_properties(sd_bus_message *m, const char *stamp, const char *slice,
                                           const char *work_root, int id, char *fifo, size_t fifo_size) {
        char work_dir[PATH_MAX], secrets[PATH_MAX], state[PATH_MAX], secret[PATH_MAX + 16], env0[PATH_MAX + 32];
        const char *env[] = { env0, "SPARK_BENCH_STAMP_MS=100" };
        const char *hidden[3];
        char why[256] = "";
        ExecutorUnitSpec spec;
        int r, fd;

        if (strlen(work_root) > PATH_MAX / 2)
                return -ENAMETOOLONG;
        snprintf(secrets, sizeof(secrets), "%s/secrets", work_root);
        snprintf(state, sizeof(state), "%s/master-state", work_root);
        snprintf(secret, sizeof(secret), "%s/secrets/secret", work_root);
        (void) mkdir(secrets, 0700);
        (void) mkdir(state, 0700);
        /* its content does not matter: systemd reads it into the unit's
         * credentials, which stamp never looks at */
        fd = open(secret, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        close(fd);
        hidden[0] = state;
        hidden[1] = "/var/lib/spark/master";
        hidden[2] = secrets;
        spec = (ExecutorUnitSpec) {
                .app_id = BENCH_APP_ID,
                .executor_id = id,
                .worker_id = "worker-20261129000000-127.0.0.1-7078",
                .cores = 1,
                .memory_mb = 256,
                .driver_url = "tcp://127.0.0.1:9",
                .env = env,
                .n_env = ELEMENTSOF(env),
                .secret_file = secret,
                .executor_binary = stamp,
                .work_dir = work_root,
                .slice = slice,
                .hidden_paths = hidden,
                .n_hidden_paths = ELEMENTSOF(hidden),
        };
        r = executor_unit_make_work_dir(&spec, false, work_dir, sizeof(work_dir));
        if (r < 0)
                return r;
        if ((size_t) snprintf(fifo, fifo_size, "%s/stamp.fifo", work_dir) >= fifo_size)
                return -ENAMETOOLONG;
        snprintf(env0, sizeof(env0), "SPARK_BENCH_STAMP=%s", fifo);
        if (mkfifo(fifo, 0666) < 0 && errno != EEXIST)
                return -errno;
        r = executor_unit_spec_validate(&spec, false, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "unit-baseline: %s\n", why);
                return r;
        }
        return executor_unit_append_properties(m, &spec, false, work_dir);
}

/* The StartTransientUnit call for unit name: the bare unit running stamp
 * (fifo as its argument), with some of an executor's properties (slice),
 * or with all of them (work_root: then *fifo is set, see above). */
static int build_call(sd_bus *bus, const char *name, int id, const char *stamp, char *fifo, size_t fifo_size,
                      const char *slice, const char *work_root, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", name, "fail");
        if (r >= 0 && work_root)
                r = append_full_executor_properties(m, stamp, slice, work_root, id, fifo, fifo_size);
        else {
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "(sv)");
                if (r >= 0)
                        r = sd_bus_message_append(m, "(sv)", "Description", "s", "spark bench baseline");
                if (r >= 0)
                        r = sd_bus_message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
                if (r >= 0)
                        r = sd_bus_message_append(m, "(sv)", "ExecStart", "a(sasb)", 1, stamp, 3, stamp, fifo, "100",
                                                  0);
                if (r >= 0 && slice)
                        r = append_executor_properties(m, slice);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int call_start(sd_bus *bus, sd_bus_message *m) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call(bus, m, 10 * 1000000ULL, &err, &reply);
        if (r < 0)
                fprintf(stderr, "unit-baseline: StartTransientUnit: %s\n", err.message ? err.message : strerror(-r));
        sd_bus_error_free(&err);
        return r;
}

/* Sorts samples and prints KEY_p50 and KEY_p99 ("key value" lines). */
/* Every sample, in the order taken (KEY_samples): the bench pools the
 * samples of runs made at different moments of its run. */
static void print_samples(const char *key, const uint64_t *samples, size_t n) {
        printf("%s_samples", key);
        for (size_t i = 0; i < n; i++)
                printf(" %" PRIu64, samples[i]);
        printf("\n");
}

static void print_p50_p99(const char *key, uint64_t *samples, size_t n) {
        bench_sort_u64(samples, n);
        printf("%s_p50 %" PRIu64 "\n", key, bench_percentile_u64(samples, n, 50));
        printf("%s_p99 %" PRIu64 "\n", key, bench_percentile_u64(samples, n, 99));
}

/* Waits for one of two FIFOs to hold a stamp; returns the earlier stamp
 * read, and reads the other too, so that the next sample starts clean. */
static int read_first_of_two(int fds[2], uint64_t *ret) {
        uint64_t stamps[2] = { 0, 0 };
        bool got[2] = { false, false };

        while (!got[0] || !got[1]) {
                struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN }, { .fd = fds[1], .events = POLLIN } };
                char buf[64];

                if (poll(p, 2, 10000) <= 0)
                        return -ETIMEDOUT;
                for (int k = 0; k < 2; k++) {
                        ssize_t n;

                        if (got[k] || !(p[k].revents & POLLIN))
                                continue;
                        n = read(fds[k], buf, sizeof(buf) - 1);
                        if (n <= 0)
                                return -EIO;
                        buf[n] = 0;
                        stamps[k] = strtoull(buf, NULL, 10);
                        got[k] = true;
                }
        }
        *ret = MIN(stamps[0], stamps[1]);
        return 0;
}

/* One sample of UNIT_BASELINE_AT_ONCE=2: two full-property units started
 * together; the time from the calls to the first one's first instruction. */
static int measure_two_at_once(sd_bus *bus, const char *stamp, const char *slice, const char *work_root, int sample,
                               int pause_ms, uint64_t *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m0 = NULL, *m1 = NULL;
        sd_bus_message **m[2] = { &m0, &m1 };
        _cleanup_close_ int fd0 = -1, fd1 = -1;
        char fifo[2][PATH_MAX];
        uint64_t t0, t1;
        int fds[2], r;

        for (int k = 0; k < 2; k++) {
                char name[96];

                snprintf(name, sizeof(name), "spark-bench-baseline-%d-%d-%d.service", (int) getpid(), sample, k);
                /* executor ids 3, 4, 5, ...: a work dir each */
                r = build_call(bus, name, 2 * sample + k + 3, stamp, fifo[k], sizeof(fifo[k]), slice, work_root,
                               m[k]);
                if (r < 0)
                        return r;
        }
        fd0 = open(fifo[0], O_RDWR | O_CLOEXEC);
        fd1 = open(fifo[1], O_RDWR | O_CLOEXEC);
        if (fd0 < 0 || fd1 < 0)
                return -errno;
        if (pause_ms > 0)
                (void) usleep((useconds_t) pause_ms * 1000);
        t0 = bench_now_usec();
        r = sd_bus_call_async(bus, NULL, m0, NULL, NULL, 10 * 1000000ULL);
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, m1, NULL, NULL, 10 * 1000000ULL);
        if (r >= 0)
                r = sd_bus_flush(bus);
        if (r < 0)
                return r;
        fds[0] = fd0;
        fds[1] = fd1;
        r = read_first_of_two(fds, &t1);
        if (r < 0)
                return r;
        /* the replies (systemd sends them before it forks): dropped, as
         * the calls' slots are floating */
        while ((r = sd_bus_process(bus, NULL)) > 0)
                ;
        if (r < 0)
                return r;
        *ret = t1 > t0 ? t1 - t0 : 0;
        return 0;
}

int main(int argc, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ uint64_t *samples = NULL, *active = NULL;
        char fifo[] = "/tmp/spark-bench-stamp.XXXXXX";
        char path[PATH_MAX];
        const char *slice = argc >= 5 ? argv[4] : NULL, *work_root = argc >= 6 ? argv[5] : NULL;
        const char *at_once_env = getenv("UNIT_BASELINE_AT_ONCE");
        int at_once = at_once_env ? atoi(at_once_env) : 1;
        int count, pause_ms, r, fd;

        if (argc < 4 || argc > 6 || (count = atoi(argv[2])) < 1 || (pause_ms = atoi(argv[3])) < 0 ||
            (at_once != 1 && (at_once != 2 || !work_root))) {
                fprintf(stderr, "usage: [UNIT_BASELINE_AT_ONCE=2] unit-baseline STAMP_BINARY COUNT PAUSE_MS "
                                "[SLICE [WORK_DIR]]\n(two at once: with WORK_DIR only)\n");
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
        if (at_once == 2) {
                for (int i = -2; i < count; i++) {
                        uint64_t us = 0;

                        r = measure_two_at_once(bus, argv[1], slice, work_root, i + 2, pause_ms, &us);
                        if (r < 0) {
                                fprintf(stderr, "unit-baseline: two at once: %s\n", strerror(-r));
                                return 1;
                        }
                        if (i >= 0)
                                samples[i] = us;
                }
                close(fd);
                unlink(path);
                rmdir(fifo);
                print_samples("unit_first_of_2_us", samples, (size_t) count);
                print_p50_p99("unit_first_of_2_us", samples, (size_t) count);
                return 0;
        }
        for (int i = -2; i < count; i++) {
                _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                _cleanup_free_ char *unit_path = NULL;
                _cleanup_close_ int unit_fd = -1;
                char unit_fifo[PATH_MAX];
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
                snprintf(unit_fifo, sizeof(unit_fifo), "%s", path);
                r = build_call(bus, name, i + 3, argv[1], unit_fifo, sizeof(unit_fifo), slice, work_root, &m);
                if (r < 0) {
                        fprintf(stderr, "unit-baseline: cannot make the call: %s\n", strerror(-r));
                        return 1;
                }
                if (work_root) {
                        unit_fd = open(unit_fifo, O_RDWR | O_CLOEXEC);
                        if (unit_fd < 0)
                                return 1;
                }
                if (pause_ms > 0)
                        (void) usleep((useconds_t) pause_ms * 1000);
                t0 = bench_now_usec();
                r = call_start(bus, m);
                if (r < 0)
                        return 1;
                n = read(unit_fd >= 0 ? unit_fd : fd, buf, sizeof(buf) - 1);
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
        print_samples("unit_start_us", samples, (size_t) count);
        print_p50_p99("unit_start_us", samples, (size_t) count);
        printf("unit_start_us_mean %.0f\n", bench_mean_u64(samples, (size_t) count));
        print_p50_p99("unit_active_us", active, (size_t) count);
        return 0;
}
