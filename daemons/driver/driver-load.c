/* The driver tells the master how many tasks run on each of its executors
 * (ExecutorLoad), so that fair share takes back the least busy executors
 * first (docs/DESIGN.md "Fair share").  Cheap: once a second at most, from
 * the status timer, and only when the counts changed since the master last
 * had them, after we registered again, or after a snapshot of the master's
 * state (a restarted master knows none). */
#include "daemon.h"
#include "driver-executors.h"
#include "log.h"

/* FNV-1a over the (id, count) pairs: enough to see that something changed;
 * never 0, which says nothing was sent. */
static uint64_t load_fingerprint(const int32_t *ids, const int32_t *counts, size_t n) {
        uint64_t h = UINT64_C(14695981039346656037);

        for (size_t i = 0; i < n; i++) {
                uint32_t v[2] = { (uint32_t) ids[i], (uint32_t) counts[i] };
                const uint8_t *p = (const uint8_t *) v;

                for (size_t k = 0; k < sizeof(v); k++)
                        h = (h ^ p[k]) * UINT64_C(1099511628211);
        }
        return h | 1;
}

static void on_load_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        Driver *d = userdata;
        (void) c;

        d->load_in_flight = false;
        if (error == -ECANCELED)
                return;
        if (error == 0 && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                /* an older master, or an executor it does not know yet: sent
                 * again when the counts change */
                log_debug("The master refused the load report of %s: %s", d->app_id, reply->error->message);
        else if (error < 0) {
                log_debug_errno(error, "Failed to send the load report of %s, trying again: %m", d->app_id);
                d->load_sent = 0;
        }
}

void driver_report_load(Driver *d) {
        _cleanup_free_ Spark__ExecutorTasks *entries = NULL;
        _cleanup_free_ Spark__ExecutorTasks **ptrs = NULL;
        _cleanup_free_ int32_t *ids = NULL, *counts = NULL;
        Spark__ExecutorLoad el = SPARK__EXECUTOR_LOAD__INIT;
        Envelope env = ENVELOPE_INIT;
        size_t n = 0;
        uint64_t fp;

        if (!d->registered || d->load_in_flight || !d->master)
                return;
        entries = calloc(d->n_live_executors + 1, sizeof(*entries));
        ptrs = calloc(d->n_live_executors + 1, sizeof(*ptrs));
        ids = calloc(d->n_live_executors + 1, sizeof(*ids));
        counts = calloc(d->n_live_executors + 1, sizeof(*counts));
        if (!entries || !ptrs || !ids || !counts) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < d->n_executors_allocated && n < d->n_live_executors; i++) {
                DriverExecutor *ex = d->executors[i];

                if (!ex || ex->lost)
                        continue;
                ids[n] = ex->id;
                counts[n] = MAX(scheduler_executor_running(d->scheduler, ex->id, NULL, 0), 0);
                n++;
        }
        fp = load_fingerprint(ids, counts, n);
        if (fp == d->load_sent)
                return;
        for (size_t i = 0; i < n; i++) {
                spark__executor_tasks__init(&entries[i]);
                entries[i].executor_id = ids[i];
                entries[i].running_tasks = counts[i];
                ptrs[i] = &entries[i];
        }
        el.app_id = d->app_id;
        el.executors = ptrs;
        el.n_executors = n;
        ENVELOPE_SET(&env, EXECUTOR_LOAD, executor_load, &el);
        if (rpc_client_call(d->master, &env, 5000, on_load_reply, d) < 0)
                return;  /* the next tick tries again */
        d->load_in_flight = true;
        d->load_sent = fp;
}
