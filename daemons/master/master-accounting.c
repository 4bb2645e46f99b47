/* History and chargeback (spark-master(8), "History"): an application that
 * ends goes into the history with who submitted it, its times, final state
 * and reason, and what its executors used; a lost worker goes there with
 * its reason.  An executor's use (the CPU time and the highest memory its
 * worker sampled from its unit) comes with the report of its end, which for
 * the executors stopped by the app's removal arrives after the app left:
 * the history entry waits for them (executors_ending) and the chargeback
 * line is logged once the last one is in. */
#include <inttypes.h>

#include "log.h"
#include "master.h"
#include "wire-names.h"

static int64_t now_ms(void) {
        return (int64_t) (now_real_usec() / USEC_PER_MSEC);
}

static void log_chargeback(const Spark__AppInfo *ai) {
        double seconds = ai->end_time_ms > ai->start_time_ms && ai->start_time_ms > 0
                                 ? (double) (ai->end_time_ms - ai->start_time_ms) / 1000.0
                                 : 0.0;

        log_struct(LOG_INFO, LOG_FIELDS(.app_id = ai->app_id, .message_id = SPARK_MESSAGE_APP_USAGE),
                   "Application %s (%s) submitted by %s, %s after %.1f s: %.3f CPU seconds, peak memory %.1f MiB",
                   ai->app_id, strempty(ai->name), isempty(ai->submitted_by) ? "unknown" : ai->submitted_by,
                   wire_app_state_to_string(ai->state), seconds, (double) ai->cpu_usage_ns / 1e9,
                   (double) ai->memory_peak_bytes / (1024.0 * 1024.0));
}

void master_account_app_removed(Master *m, App *a) {
        Spark__AppInfo ai;
        int r;

        app_info_fill(m->cluster, a, &ai);
        ai.end_time_ms = now_ms();
        ai.executors_ending = a->executors_stopping;
        r = history_add_app(&m->history, &ai, (size_t) m->config.master.retained_apps);
        if (r < 0)
                log_struct_errno(LOG_WARNING, r, LOG_FIELDS(.app_id = a->id),
                                 "Failed to keep application %s in the history, ignoring: %m", a->id);
        /* the use of executors still stopping is logged when they are in,
         * unless the app is not kept to wait for them */
        if (ai.executors_ending == 0 || r < 0 || m->config.master.retained_apps == 0)
                log_chargeback(&ai);
}

void master_account_worker_lost(Master *m, Worker *w, const char *reason) {
        Spark__WorkerInfo wi;
        int r;

        spark__worker_info__init(&wi);
        wi.worker_id = w->id;
        wi.host = w->host;
        wi.endpoint = w->endpoint;
        wi.events_endpoint = w->events_endpoint;
        wi.cores = w->cores;
        wi.memory_mb = w->memory_mb;
        wi.state = SPARK__WORKER_STATE__WORKER_LOST;
        wi.reason = (char *) reason;
        wi.end_time_ms = now_ms();
        r = history_add_worker(&m->history, &wi, (size_t) m->config.master.retained_workers);
        if (r < 0)
                log_struct_errno(LOG_WARNING, r, LOG_FIELDS(.worker_id = w->id),
                                 "Failed to keep worker %s in the history, ignoring: %m", w->id);
}

void master_account_executor_end(Master *m, const Spark__ExecutorStateChanged *sc) {
        Spark__AppInfo *ai = NULL;
        int r;

        log_debug("Executor %s/%d used %" PRIu64 " ns CPU, peak %" PRIu64 " bytes", sc->app_id, sc->executor_id,
                  sc->cpu_usage_ns, sc->memory_peak_bytes);
        if (cluster_app(m->cluster, sc->app_id)) {
                cluster_executor_usage(m->cluster, sc->app_id, sc->executor_id, sc->cpu_usage_ns,
                                       sc->memory_peak_bytes);
                return;
        }
        r = history_app_usage(&m->history, sc->app_id, sc->cpu_usage_ns, sc->memory_peak_bytes, &ai);
        if (r < 0)
                log_oom();
        if (r <= 0)
                return;
        log_chargeback(ai);
        spark__app_info__free_unpacked(ai, NULL);
        master_state_changed(m);
}

void master_account_trim(Master *m) {
        history_trim(&m->history, (size_t) m->config.master.retained_apps, (size_t) m->config.master.retained_workers);
}
