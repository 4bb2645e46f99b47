/* See status.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "state-json.h"
#include "wire-names.h"
#include "sparkctl.h"
#include "status.h"

/* A worker id in a table: "worker-YYYYMMDDhhmmss-HOST-PORT" without its
 * "worker-YYYYMMDDhhmmss-", unless another worker of cs would then look the
 * same (a host whose worker restarted with a new id).  A suffix of id. */
const char *worker_id_short(const Spark__ClusterState *cs, const char *id) {
        const char *p = id;
        size_t prefix = strlen("worker-");

        if (!id || strncmp(id, "worker-", prefix) != 0)
                return id;
        p = id + prefix;
        for (size_t i = 0; i < 14; i++)
                if (p[i] < '0' || p[i] > '9')
                        return id;
        if (p[14] != '-' || p[15] == '\0')
                return id;
        p += 15;
        for (size_t i = 0; cs && i < cs->n_workers; i++) {
                const char *other = cs->workers[i]->worker_id;
                size_t lo = other ? strlen(other) : 0, lp = strlen(p);

                if (other && !streq(other, id) && lo >= lp && streq(other + lo - lp, p))
                        return id;
        }
        return p;
}

static int worker_compare(const void *a, const void *b) {
        const Spark__WorkerInfo *x = *(Spark__WorkerInfo *const *) a, *y = *(Spark__WorkerInfo *const *) b;
        return strcmp(x->worker_id, y->worker_id);
}

static int print_workers(const Spark__ClusterState *cs, FILE *f) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ Spark__WorkerInfo **sorted = NULL;
        char a[FORMAT_SHORT_MAX], b[FORMAT_SHORT_MAX];

        t = table_new("WORKER", "HOST", "STATE", "CORES", "MEMORY", "HEARTBEAT", NULL);
        sorted = calloc(cs->n_workers + 1, sizeof(*sorted));
        if (!t || !sorted)
                return -ENOMEM;
        /* the master hands them out in hash order: sort for a stable view */
        if (cs->n_workers > 0)
                memcpy(sorted, cs->workers, cs->n_workers * sizeof(*sorted));
        qsort(sorted, cs->n_workers, sizeof(*sorted), worker_compare);

        for (size_t i = 0; i < cs->n_workers; i++) {
                const Spark__WorkerInfo *w = sorted[i];

                table_add(t, worker_id_short(cs, w->worker_id));
                table_add(t, w->host);
                table_add(t, wire_worker_state_to_string(w->state));
                table_addf(t, "%d/%d", w->cores_used, w->cores);
                table_addf(t, "%s/%s", format_mib(a, sizeof(a), w->memory_used_mb),
                           format_mib(b, sizeof(b), w->memory_mb));
                table_addf(t, "%s ago", format_duration_ms(a, sizeof(a), w->last_heartbeat_ms_ago));
        }
        return table_print(t, f);
}

static int print_apps(const Spark__ClusterState *cs, FILE *f) {
        _cleanup_(table_freep) Table *t = NULL;

        t = table_new("APPLICATION", "NAME", "STATE", "CORES", "DRIVER", "REASON", NULL);
        if (!t)
                return -ENOMEM;
        table_set_optional(t, 5);
        for (size_t i = 0; i < cs->n_apps; i++) {
                const Spark__AppInfo *a = cs->apps[i];

                table_add(t, a->app_id);
                table_add(t, isempty(a->name) ? "-" : a->name);
                table_add(t, wire_app_state_to_string(a->state));
                if (a->max_cores > 0)
                        table_addf(t, "%d/%d", a->cores_granted, a->max_cores);
                else
                        table_addf(t, "%d", a->cores_granted);
                table_add(t, a->driver_url);
                table_add(t, a->reason);
        }
        return table_print(t, f);
}

static int print_executors(const Spark__ClusterState *cs, FILE *f) {
        _cleanup_(table_freep) Table *t = NULL;
        char m[FORMAT_SHORT_MAX];

        t = table_new("EXECUTOR", "WORKER", "HOST", "STATE", "CORES", "MEMORY", "UNIT", "REASON", NULL);
        if (!t)
                return -ENOMEM;
        table_set_optional(t, 7);
        for (size_t i = 0; i < cs->n_executors; i++) {
                const Spark__ExecutorInfo *e = cs->executors[i];

                table_addf(t, "%s/%d", e->app_id, e->executor_id);
                table_add(t, isempty(e->worker_id) ? "-" : worker_id_short(cs, e->worker_id));
                table_add(t, isempty(e->host) ? "-" : e->host);
                table_add(t, wire_executor_state_to_string(e->state));
                table_addf(t, "%d", e->cores);
                table_add(t, format_mib(m, sizeof(m), e->memory_mb));
                table_add(t, isempty(e->unit) ? "-" : e->unit);
                table_add(t, e->reason);
        }
        return table_print(t, f);
}

static const char *plural(size_t n, const char *one, const char *many) {
        return n == 1 ? one : many;
}

int status_print_tables(const Spark__ClusterState *cs, FILE *f) {
        char id[256];
        int r;

        fprintf(f, "Master %s: %zu %s, %zu %s, %zu %s\n", string_sanitize(cs->master_id, id, sizeof(id)),
                cs->n_workers, plural(cs->n_workers, "worker", "workers"), cs->n_apps,
                plural(cs->n_apps, "application", "applications"), cs->n_executors,
                plural(cs->n_executors, "executor", "executors"));
        if (cs->n_workers > 0) {
                fputc('\n', f);
                r = print_workers(cs, f);
                if (r < 0)
                        return r;
        }
        if (cs->n_apps > 0) {
                fputc('\n', f);
                r = print_apps(cs, f);
                if (r < 0)
                        return r;
        }
        if (cs->n_executors > 0) {
                fputc('\n', f);
                r = print_executors(cs, f);
                if (r < 0)
                        return r;
        }
        return 0;
}

void status_print_json(const Spark__ClusterState *cs, FILE *f) {
        Json j;

        json_init(&j, f);
        cluster_state_json(&j, cs);
        fputc('\n', f);
}

int run_status(const Daemon *master, bool json, bool all, FILE *out) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__ClusterStateRequest req = SPARK__CLUSTER_STATE_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        req.all = all;
        ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &req);
        r = call_daemon(master, &env, SPARK__ENVELOPE__BODY_CLUSTER_STATE, &reply);
        if (r > 0)
                return r;

        if (json)
                status_print_json(reply->cluster_state, out);
        else {
                r = status_print_tables(reply->cluster_state, out);
                if (r < 0) {
                        fprintf(stderr, "sparkctl: cannot show the cluster state: %s\n", strerror(-r));
                        return SPARKCTL_EXIT_FAILED;
                }
        }
        return SPARKCTL_EXIT_OK;
}
