/* See status.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint-list.h"
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

/* Fair share: WEIGHT, SHARE (its dominant share now / what weighted DRF
 * gives it), TARGET (the executors DRF gives it, and those being taken
 * back) and DEMAND (executors it would use; "any": no limit). */
static void add_fair_columns(Table *t, const Spark__AppInfo *a) {
        table_addf(t, "%d", a->weight);
        table_addf(t, "%.0f%%/%.0f%%", a->share * 100.0, a->fair_share * 100.0);
        if (a->executors_preempting > 0)
                table_addf(t, "%d (%d preempted)", a->executors_target, a->executors_preempting);
        else
                table_addf(t, "%d", a->executors_target);
        if (a->executors_demand < 0)
                table_add(t, "any");
        else
                table_addf(t, "%d", a->executors_demand);
}

static int print_apps(const Spark__ClusterState *cs, FILE *f) {
        _cleanup_(table_freep) Table *t = NULL;
        bool fair = streq_ptr(cs->scheduling, "fair");

        if (fair)
                t = table_new("APPLICATION", "NAME", "STATE", "CORES", "EXECUTORS", "WEIGHT", "SHARE", "TARGET",
                              "DEMAND", "DRIVER", "REASON", NULL);
        else
                t = table_new("APPLICATION", "NAME", "STATE", "CORES", "EXECUTORS", "DRIVER", "REASON", NULL);
        if (!t)
                return -ENOMEM;
        table_set_optional(t, fair ? 10 : 6);
        for (size_t i = 0; i < cs->n_apps; i++) {
                const Spark__AppInfo *a = cs->apps[i];

                table_add(t, a->app_id);
                table_add(t, isempty(a->name) ? "-" : a->name);
                table_add(t, wire_app_state_to_string(a->state));
                if (a->max_cores > 0)
                        table_addf(t, "%d/%d", a->cores_granted, a->max_cores);
                else
                        table_addf(t, "%d", a->cores_granted);
                /* live/wanted for an elastic app, whose driver moves the total */
                if (a->dynamic_allocation)
                        table_addf(t, "%d/%d elastic", a->executors_live, a->executors_wanted);
                else
                        table_addf(t, "%d", a->executors_live);
                if (fair)
                        add_fair_columns(t, a);
                table_add(t, a->driver_url);
                /* a live app has no reason of its own: say why it waits, if known */
                table_add(t, isempty(a->reason) ? a->waiting_reason : a->reason);
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

/* A master that does not answer within this is shown unreachable. */
#define MASTER_PROBE_TIMEOUT_MS 1000

static int print_masters(const MasterRoleInfo *masters, size_t n, FILE *f) {
        _cleanup_(table_freep) Table *t = NULL;

        t = table_new("MASTER", "ROLE", NULL);
        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                table_add(t, masters[i].url);
                if (masters[i].detail)
                        table_addf(t, "%s (%s)", masters[i].role, masters[i].detail);
                else
                        table_add(t, masters[i].role);
        }
        return table_print(t, f);
}

int status_print_tables(const Spark__ClusterState *cs, FILE *f) {
        return status_print_tables_masters(cs, NULL, 0, f);
}

int status_print_tables_masters(const Spark__ClusterState *cs, const MasterRoleInfo *masters, size_t n, FILE *f) {
        char id[256];
        int r;

        fprintf(f, "Master %s: %zu %s, %zu %s, %zu %s\n", string_sanitize(cs->master_id, id, sizeof(id)),
                cs->n_workers, plural(cs->n_workers, "worker", "workers"), cs->n_apps,
                plural(cs->n_apps, "application", "applications"), cs->n_executors,
                plural(cs->n_executors, "executor", "executors"));
        if (streq(cs->master_role, "suspended"))
                fprintf(f, "The leader has lost its ZooKeeper connection: it places nothing until it is back.\n");
        else if (cs->recovering)
                fprintf(f, "The leader, newly elected, places nothing until the workers of its saved state are back.\n");
        if (n > 0) {
                fputc('\n', f);
                r = print_masters(masters, n, f);
                if (r < 0)
                        return r;
        }
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
        status_print_json_masters(cs, NULL, 0, f);
}

void status_print_json_masters(const Spark__ClusterState *cs, const MasterRoleInfo *masters, size_t n, FILE *f) {
        Json j;

        json_init(&j, f);
        json_object_begin(&j, NULL);
        json_string(&j, "master_id", cs->master_id);
        if (n > 0) {
                json_array_begin(&j, "masters");
                for (size_t i = 0; i < n; i++) {
                        json_object_begin(&j, NULL);
                        json_string(&j, "url", masters[i].url);
                        json_string(&j, "role", masters[i].role);
                        if (masters[i].detail)
                                json_string(&j, "detail", masters[i].detail);
                        json_object_end(&j);
                }
                json_array_end(&j);
        }
        if (!isempty(cs->scheduling))
                json_string(&j, "scheduling", cs->scheduling);
        if (!isempty(cs->master_role)) {
                json_string(&j, "master_role", cs->master_role);
                json_int(&j, "master_epoch", (int64_t) cs->master_epoch);
                json_bool(&j, "recovering", cs->recovering);
        }
        cluster_state_json_members(&j, cs, CLUSTER_JSON_ALL);
        json_object_end(&j);
        fputc('\n', f);
}

int run_status(const Daemon *master, bool json, bool all, FILE *out) {
        _cleanup_(endpoint_list_done) EndpointList urls = {};
        MasterRoleInfo roles[ENDPOINT_LIST_MAX];
        size_t n_roles = 0;
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__ClusterStateRequest req = SPARK__CLUSTER_STATE_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        req.all = all;
        ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &req);
        r = call_daemon(master, &env, SPARK__ENVELOPE__BODY_CLUSTER_STATE, &reply);
        if (r > 0)
                return r;

        /* With several masters, each is asked what it is. */
        if (strchr(master->url, ',') && endpoint_list_parse(master->url, &urls) >= 0)
                for (size_t i = 0; i < urls.n; i++) {
                        _cleanup_envelope_ Envelope *one = NULL;
                        Daemon d = *master;
                        int k;

                        d.url = urls.urls[i];
                        roles[i] = (MasterRoleInfo) { .url = urls.urls[i], .role = "unreachable" };
                        k = call_daemon_quiet(&d, &env, SPARK__ENVELOPE__BODY_CLUSTER_STATE, MASTER_PROBE_TIMEOUT_MS,
                                              0, &one);
                        if (k >= 0) {
                                roles[i].role = "leader";
                                if (streq(one->cluster_state->master_role, "suspended"))
                                        roles[i].detail = "suspended: no ZooKeeper connection";
                        } else if (one && standby_reply_leader(one->error->code, one->error->message,
                                                               (char[ENDPOINT_LIST_URL_MAX]) {},
                                                               ENDPOINT_LIST_URL_MAX) != -ENOENT)
                                roles[i].role = "standby";
                        n_roles++;
                }

        if (json)
                status_print_json_masters(reply->cluster_state, roles, n_roles, out);
        else {
                r = status_print_tables_masters(reply->cluster_state, roles, n_roles, out);
                if (r < 0) {
                        fprintf(stderr, "sparkctl: cannot show the cluster state: %s\n", strerror(-r));
                        return SPARKCTL_EXIT_FAILED;
                }
        }
        return SPARKCTL_EXIT_OK;
}
