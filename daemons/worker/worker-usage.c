/* What each executor uses, for its application's chargeback (spark-master(8),
 * "History") and for /metrics (worker-http.c): once a second the worker
 * reads CPUUsageNSec and MemoryCurrent of every running executor's unit and
 * keeps the last figures, the CPU time and the highest memory seen; the
 * latter go to the master with the executor's end.  Sampled,
 * because systemd 252 keeps no peak (MemoryPeak= came later) and a unit's
 * counters are gone once it is collected at its end: the CPU time is that of
 * the last sample (up to a second short), the peak the highest sample.
 * CPU time comes from the unit (CPUUsageNSec) or, where the unit has no CPU
 * accounting, from its main process and the children it waited for. */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "executor-usage.h"
#include "fileio.h"
#include "log.h"
#include "worker.h"

typedef struct UsageCall {
        WorkerManager *w;
        char key[APP_ID_MAX + 16];
        bool memory;    /* MemoryCurrent, else CPUUsageNSec */
} UsageCall;

static int on_property(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        UsageCall *call = userdata;
        LocalExecutor *e;
        uint64_t v = 0;
        int r;
        (void) ret_error;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                log_debug("Cannot read %s of executor %s: %s", call->memory ? "MemoryCurrent" : "CPUUsageNSec",
                          call->key, sd_bus_message_get_error(reply)->message);
                return 0;  /* gone */
        }
        r = sd_bus_message_read(reply, "v", "t", &v);
        if (r < 0)
                return 0;
        e = hashmap_get(call->w->executors, call->key);
        if (!e || e->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING)
                return 0;
        /* the unit's own figure, UINT64_MAX without accounting: /metrics
         * leaves such an executor out rather than show a guess */
        if (call->memory)
                e->memory_bytes = v;
        else
                e->cpu_nsec = v;
        if (v == UINT64_MAX)
                return 0;  /* no accounting: nothing learnt */
        if (call->memory)
                e->memory_peak_bytes = MAX(e->memory_peak_bytes, v);
        else
                e->cpu_usage_ns = MAX(e->cpu_usage_ns, v);
        return 0;
}

static void read_property(WorkerManager *w, sd_bus *bus, const char *path, const LocalExecutor *e, bool memory) {
        sd_bus_slot *slot = NULL;
        UsageCall *call;
        int r;

        call = calloc(1, sizeof(*call));
        if (!call)
                return;
        call->w = w;
        call->memory = memory;
        snprintf(call->key, sizeof(call->key), "%s", e->key);
        r = sd_bus_call_method_async(bus, &slot, "org.freedesktop.systemd1", path, "org.freedesktop.DBus.Properties",
                                     "Get", on_property, call, "ss", "org.freedesktop.systemd1.Service",
                                     memory ? "MemoryCurrent" : "CPUUsageNSec");
        if (r < 0) {
                free(call);
                return;
        }
        /* the call frees itself when it is answered or the bus goes */
        (void) sd_bus_slot_set_destroy_callback(slot, free);
        (void) sd_bus_slot_set_floating(slot, 1);
        sd_bus_slot_unref(slot);
}

/* The CPU time of the executor's process and of the children it waited
 * for (its command tasks), as getrusage() would give it at its exit, from
 * /proc/PID/stat: it needs no CPU accounting, which a cgroup v1 host gives
 * a user manager's units none of.  0: not known. */
static uint64_t process_cpu_ns(int64_t pid) {
        _cleanup_free_ char *buf = NULL;
        char path[64], *p;
        unsigned long long utime, stime;
        long long cutime, cstime;
        long ticks = sysconf(_SC_CLK_TCK);

        if (pid <= 0 || ticks <= 0)
                return 0;
        snprintf(path, sizeof(path), "/proc/%" PRIi64 "/stat", pid);
        if (read_full_file(path, 0, 4096, &buf, NULL) < 0)
                return 0;
        /* the command name may hold anything: the fields start after its ')' */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &utime, &stime,
                         &cutime, &cstime) != 4 || cutime < 0 || cstime < 0)
                return 0;
        return (uint64_t) (utime + stime + (unsigned long long) cutime + (unsigned long long) cstime) *
               (UINT64_C(1000000000) / (uint64_t) ticks);
}

void worker_sample_usage(WorkerManager *w) {
        sd_bus *bus = unit_manager_bus(w->units);
        size_t i = 0;
        void *v;

        if (!bus)
                return;
        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;
                char unit[UNIT_NAME_MAX];
                _cleanup_free_ char *path = NULL;

                if (e->state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING)
                        e->cpu_usage_ns = MAX(e->cpu_usage_ns, process_cpu_ns(e->pid));
                if (e->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING ||
                    executor_unit_name(unit, sizeof(unit), e->app_id, e->executor_id) < 0 ||
                    sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path) < 0)
                        continue;
                read_property(w, bus, path, e, false);
                read_property(w, bus, path, e, true);
        }
}

/* At the executor's end: what it wrote from its own getrusage()
 * (executor-usage.h), which covers the last second the samples missed.
 * The file is in a directory the executor (any code of its application)
 * can write: not followed if it is a link, read up to a few bytes, and it
 * can only raise the figures, never lower what was sampled. */
void worker_read_exit_usage(WorkerManager *w, LocalExecutor *e) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        uint64_t cpu_ns, peak_bytes;
        int r;

        if (asprintf(&path, "%s/%s/%d/" EXECUTOR_USAGE_FILE, w->config.worker.work_dir, e->app_id,
                     e->executor_id) < 0)
                return;
        r = read_full_file(path, READ_FILE_NOFOLLOW | READ_FILE_REGULAR, EXECUTOR_USAGE_MAX, &text, NULL);
        if (r < 0)
                return;  /* killed before it could write it, or an older executor */
        if (executor_usage_parse(text, &cpu_ns, &peak_bytes) < 0) {
                log_struct(LOG_WARNING, LOG_FIELDS(.app_id = e->app_id, .executor_id = e->executor_id),
                           "%s is not an executor's usage line, ignoring it", path);
                return;
        }
        e->cpu_usage_ns = MAX(e->cpu_usage_ns, cpu_ns);
        e->memory_peak_bytes = MAX(e->memory_peak_bytes, peak_bytes);
        (void) unlink(path);
}
