/* See cluster.h.  Every state change of an object goes through one function
 * (executor_set_state(), worker_set_lost(), app_finish()), which frees
 * resources, logs with the journal fields and emits the effects. */
#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "alloc-util.h"
#include "cluster-internal.h"
#include "cluster-wanting.h"
#include "executor-env.h"
#include "log.h"
#include "macro.h"
#include "placement-fair.h"
#include "placement.h"
#include "utf8.h"
#include "wire-names.h"
#include "worker-table.h"

#define APP_ID_COUNTER_MAX 999999

struct Cluster {
        ClusterConfig cfg;
        ClusterEffects fx;
        void *userdata;
        char id[32];
        time_t start_time;
        unsigned next_app_number;
        Hashmap *workers;
        Hashmap *apps;
        App *apps_head, *apps_tail;
        AppsWanting wanting;     /* those of them that may take more executors */
        FairDemand fair_demand;  /* what the live ones want in all */
        size_t n_executors;      /* live executors */
        /* the held apps' executors by state, kept as they change so that
         * /metrics does not walk 100,000 of them per scrape */
        size_t executors_by_state[CLUSTER_EXECUTOR_STATES];
        WorkerTable table;       /* the workers as placement sees them */
        bool schedule_pending;   /* told the I/O layer (fx.schedule_needed), not run yet */
};

static void schedule_soon(Cluster *c);

const ClusterEffects *cluster_effects(Cluster *c, void **ret_userdata) {
        *ret_userdata = c->userdata;
        return &c->fx;
}

const ClusterConfig *cluster_config(Cluster *c) {
        return &c->cfg;
}

const ClusterPool *cluster_pool(Cluster *c) {
        return &c->table.pool;
}

void cluster_worker_changed(Cluster *c, Worker *w) {
        worker_table_update(&c->table, w);
}

void cluster_app_demand_changed(Cluster *c, App *a) {
        apps_wanting_update(&c->wanting, a);
        fair_demand_update(&c->fair_demand, a);
        /* an app that can take no more is not starved for more */
        if (!a->wanting)
                a->starved_since = 0;
}

App *cluster_apps_wanting(Cluster *c) {
        return c->wanting.head;
}

bool cluster_fair_demand_fits(Cluster *c) {
        const ClusterPool *pool = &c->table.pool;

        return fair_demand_fits(&c->fair_demand, MIN(pool->cores, FAIR_CAPACITY_MAX),
                                MIN(pool->memory_mb, FAIR_CAPACITY_MAX));
}

bool cluster_apps_wanting_ok(Cluster *c) {
        return apps_wanting_matches(&c->wanting, c->apps_head);
}

bool cluster_worker_table_ok(Cluster *c) {
        return worker_table_matches(&c->table, c->workers);
}

void cluster_schedule_soon(Cluster *c) {
        schedule_soon(c);
}

bool executor_state_is_terminal(ExecutorState s) {
        return s == SPARK__EXECUTOR_STATE__EXECUTOR_EXITED || s == SPARK__EXECUTOR_STATE__EXECUTOR_FAILED ||
               s == SPARK__EXECUTOR_STATE__EXECUTOR_KILLED || s == SPARK__EXECUTOR_STATE__EXECUTOR_LOST;
}

int cluster_new(const ClusterConfig *cfg, const ClusterEffects *fx, void *userdata, time_t start_time,
                Cluster **ret) {
        Cluster *c;
        struct tm tm;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->cfg = *cfg;
        c->fx = *fx;
        c->userdata = userdata;
        c->start_time = start_time;
        c->next_app_number = 1;
        gmtime_r(&start_time, &tm);
        strftime(c->id, sizeof(c->id), "master-%Y%m%d%H%M%S", &tm);

        r = hashmap_new(&c->workers);
        if (r >= 0)
                r = hashmap_new(&c->apps);
        if (r < 0) {
                cluster_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

static void executor_free(ClusterExecutor *e) {
        if (!e)
                return;
        free(e->reason);
        cluster_executor_grants_free(e);
        free(e);
}

/* Moves e from its state's count to state's (e->state is not changed). */
static void executor_count_move(Cluster *c, const ClusterExecutor *e, ExecutorState state) {
        if (e->state >= 0 && e->state < CLUSTER_EXECUTOR_STATES)
                c->executors_by_state[e->state]--;
        if (state >= 0 && state < CLUSTER_EXECUTOR_STATES)
                c->executors_by_state[state]++;
}

static void app_uncount_executors(Cluster *c, const App *a) {
        for (size_t i = 0; i < a->n_executors_allocated; i++) {
                const ClusterExecutor *e = a->executors[i];
                if (e && e->state >= 0 && e->state < CLUSTER_EXECUTOR_STATES)
                        c->executors_by_state[e->state]--;
        }
}

void cluster_executor_counts(Cluster *c, size_t ret[static CLUSTER_EXECUTOR_STATES]) {
        memcpy(ret, c->executors_by_state, sizeof(c->executors_by_state));
}

static void app_free(App *a) {
        if (!a)
                return;
        for (size_t i = 0; i < a->n_executors_allocated; i++)
                executor_free(a->executors[i]);
        free(a->executors);
        for (size_t i = 0; i < a->n_env; i++)
                free(a->env[i]);
        free(a->env);
        free(a->name);
        free(a->driver_url);
        free(a->driver_events);
        free(a->ui_url);
        free(a->driver_subject);
        free(a->submitted_by);
        free(a->reason);
        cluster_app_wants_free(a);
        explicit_bzero(a->executor_key, sizeof(a->executor_key));
        free(a);
}

static void app_freep(App **a) {
        app_free(*a);
}

static void worker_free(Worker *w) {
        if (!w)
                return;
        free(w->id);
        free(w->host);
        free(w->endpoint);
        free(w->events_endpoint);
        free(w->ui_url);
        cluster_worker_resources_free(w);
        free(w);
}

Cluster *cluster_free(Cluster *c) {
        size_t i = 0;
        void *v;

        if (!c)
                return NULL;
        while (hashmap_iterate(c->workers, &i, &v, NULL))
                worker_free(v);
        for (App *a = c->apps_head, *next; a; a = next) {
                next = a->next;
                app_free(a);
        }
        hashmap_free(c->workers);
        hashmap_free(c->apps);
        worker_table_done(&c->table);
        free(c);
        return NULL;
}

void cluster_set_config(Cluster *c, const ClusterConfig *cfg) {
        c->cfg = *cfg;
        schedule_soon(c);
}

const char *cluster_id(Cluster *c) {
        return c->id;
}

Worker *cluster_worker(Cluster *c, const char *id) {
        return hashmap_get(c->workers, id);
}

App *cluster_app(Cluster *c, const char *id) {
        return hashmap_get(c->apps, id);
}

Hashmap *cluster_workers(Cluster *c) {
        return c->workers;
}

App *cluster_apps(Cluster *c) {
        return c->apps_head;
}

size_t cluster_n_apps(Cluster *c) {
        return hashmap_size(c->apps);
}

bool cluster_schedule_is_pending(Cluster *c) {
        return c->schedule_pending;
}

size_t cluster_n_executors(Cluster *c) {
        return c->n_executors;
}

ClusterExecutor *cluster_executor(Cluster *c, const char *app_id, int executor_id) {
        App *a = cluster_app(c, app_id);

        if (!a || executor_id < 0 || (size_t) executor_id >= a->n_executors_allocated)
                return NULL;
        return a->executors[executor_id];
}

static int set_string(char **p, const char *s) {
        char *t = strdup(s ? s : "");
        if (!t)
                return -ENOMEM;
        free(*p);
        *p = t;
        return 0;
}

static void worker_unlink_executor(Cluster *c, Worker *w, ClusterExecutor *e) {
        if (e->worker_prev)
                e->worker_prev->worker_next = e->worker_next;
        else
                w->executors = e->worker_next;
        if (e->worker_next)
                e->worker_next->worker_prev = e->worker_prev;
        e->worker_prev = e->worker_next = NULL;
        w->n_executors--;
        w->cores_used -= e->cores;
        w->memory_used_mb -= e->memory_mb;
        worker_table_update(&c->table, w);
}

static void worker_link_executor(Cluster *c, Worker *w, ClusterExecutor *e) {
        e->worker = w;
        e->worker_prev = NULL;
        e->worker_next = w->executors;
        if (w->executors)
                w->executors->worker_prev = e;
        w->executors = e;
        w->n_executors++;
        w->cores_used += e->cores;
        w->memory_used_mb += e->memory_mb;
        worker_table_update(&c->table, w);
}

/* The one place an executor changes state. */
static void executor_set_state(Cluster *c, ClusterExecutor *e, ExecutorState state, const char *reason, int exit_code) {
        App *a = e->app;
        bool was_terminal = executor_state_is_terminal(e->state);

        if (was_terminal || e->state == state)
                return;

        executor_count_move(c, e, state);
        e->state = state;
        e->exit_code = exit_code;
        (void) set_string(&e->reason, reason);

        if (executor_state_is_terminal(state)) {
                Worker *w = e->worker;

                if (w)
                        worker_unlink_executor(c, w, e);
                e->worker = NULL;
                if (w)
                        cluster_drain_progress(c, w);
                a->cores_granted -= e->cores;
                a->n_live_executors--;
                cluster_app_demand_changed(c, a);
                if (e->preempting)
                        a->n_preempting--;
                c->n_executors--;
                log_struct(state == SPARK__EXECUTOR_STATE__EXECUTOR_LOST ? LOG_WARNING : LOG_INFO,
                           LOG_FIELDS(.app_id = a->id, .executor_id = e->id,
                                      .message_id = state == SPARK__EXECUTOR_STATE__EXECUTOR_LOST
                                                            ? SPARK_MESSAGE_EXECUTOR_LOST
                                                            : SPARK_MESSAGE_EXECUTOR_EXITED),
                           "Executor %s/%d %s: %s", a->id, e->id, wire_executor_state_to_string(state),
                           isempty(reason) ? "-" : reason);
        } else if (state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING) {
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = a->id, .executor_id = e->id),
                           "Executor %s/%d is running", a->id, e->id);
        }

        if (c->fx.executor_updated)
                c->fx.executor_updated(c, e, c->userdata);

        if (state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING) {
                if (a->state == SPARK__APP_STATE__APP_WAITING)
                        a->state = SPARK__APP_STATE__APP_RUNNING;
        } else if ((state == SPARK__EXECUTOR_STATE__EXECUTOR_FAILED || e->ended_early) &&
                   a->state != SPARK__APP_STATE__APP_FINISHED && a->state != SPARK__APP_STATE__APP_FAILED) {
                bool any_running = false;

                a->retry_count++;
                for (size_t i = 0; i < a->n_executors_allocated && !any_running; i++)
                        any_running = a->executors[i] &&
                                      a->executors[i]->state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING;
                if (a->retry_count >= c->cfg.max_executor_retries && !any_running) {
                        char why[512];
                        snprintf(why, sizeof(why), "%d executors failed in a row, last: %s", a->retry_count,
                                 isempty(reason) ? "unknown" : reason);
                        cluster_remove_app(c, a->id, SPARK__APP_STATE__APP_FAILED, why);
                }
        }
}

static ClusterExecutor *app_new_executor(Cluster *c, App *a, Worker *w) {
        ClusterExecutor *e;
        int id = a->next_executor_id;

        if (GREEDY_REALLOC0(a->executors, a->n_executors_allocated, (size_t) id + 1) < 0)
                return NULL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return NULL;
        e->app = a;
        e->id = id;
        e->cores = a->cores_per_executor;
        e->memory_mb = a->executor_memory_mb;
        e->state = SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING;
        e->running_tasks = -1;
        c->executors_by_state[e->state]++;
        a->executors[id] = e;
        a->next_executor_id++;
        a->n_live_executors++;
        a->cores_granted += e->cores;
        cluster_app_demand_changed(c, a);
        c->n_executors++;
        worker_link_executor(c, w, e);
        return e;
}

/* ---------------------------------------------------------------- workers */

/* How far past its app's next id a reported executor may be and still be
 * taken back (worker_adopt_executor()). */
#define ADOPT_ID_GAP_MAX 4096

/* An executor a registering worker runs for a live app that we do not
 * know: a new leader whose saved state predates the launch (the state is
 * saved a moment after a change, its journal holds only the apps), or a
 * master restarted from an older state file.  It runs, its driver may be
 * using it: it is taken back as running, if its app still wants that many
 * executors, asks for no named resources (whose addresses we could not
 * tell) and the worker has room; else it is killed and placed again. */
static bool worker_adopt_executor(Cluster *c, Worker *w, const ReportedExecutor *r, usec_t now) {
        App *a = cluster_app(c, r->app_id);
        ClusterExecutor *e;

        /* an id far past the app's next one is not from a recent launch:
         * taking it would grow the app's table to it (the id comes from
         * the network) */
        if (!a || !app_is_live(a) || r->executor_id < 1 || r->executor_id >= CLUSTER_EXECUTOR_ID_MAX ||
            r->executor_id > a->next_executor_id + ADOPT_ID_GAP_MAX)
                return false;
        /* ids stay unique, also beside a unit being killed: the next
         * launch comes after it */
        a->next_executor_id = MAX(a->next_executor_id, r->executor_id + 1);
        if (a->n_wants > 0 || (int64_t) a->n_live_executors >= app_executors_wanted(a) ||
            w->cores - w->cores_used < a->cores_per_executor ||
            w->memory_mb - w->memory_used_mb < a->executor_memory_mb)
                return false;
        if (cluster_restore_executor(c, a, r->executor_id, w->id, a->cores_per_executor, a->executor_memory_mb,
                                     SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING, now) < 0)
                return false;
        e = cluster_executor(c, a->id, r->executor_id);
        log_struct(LOG_NOTICE, LOG_FIELDS(.app_id = a->id, .executor_id = r->executor_id, .worker_id = w->id),
                   "Executor %s/%d on %s was not in the restored state: taken back as it runs", a->id,
                   r->executor_id, w->id);
        executor_set_state(c, e, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "running", 0);
        return true;
}

static void worker_set_lost(Cluster *c, Worker *w, const char *reason) {
        if (w->state == SPARK__WORKER_STATE__WORKER_LOST)
                return;
        w->state = SPARK__WORKER_STATE__WORKER_LOST;
        worker_table_update(&c->table, w);
        log_struct(LOG_WARNING, LOG_FIELDS(.worker_id = w->id, .message_id = SPARK_MESSAGE_WORKER_LOST),
                   "Worker %s lost: %s", w->id, reason);
        if (c->fx.worker_lost)
                c->fx.worker_lost(c, w, reason, c->userdata);
        while (w->executors) {
                char why[300];
                snprintf(why, sizeof(why), "worker lost: %s", reason);
                executor_set_state(c, w->executors, SPARK__EXECUTOR_STATE__EXECUTOR_LOST, why, 0);
        }
}

/* Puts a new worker (its id set) in the worker hashmap and the placement
 * table; on failure it is in neither, and freed. */
static int worker_insert(Cluster *c, Worker *w) {
        if (hashmap_put(c->workers, w->id, w) < 0) {
                worker_free(w);
                return -ENOMEM;
        }
        if (worker_table_add(&c->table, w) < 0) {
                hashmap_remove(c->workers, w->id);
                worker_free(w);
                return -ENOMEM;
        }
        return 0;
}

void cluster_worker_lost(Cluster *c, Worker *w, const char *reason) {
        worker_set_lost(c, w, reason);
        /* a lost worker leaves the table; if it comes back it registers anew */
        worker_table_remove(&c->table, w);
        hashmap_remove(c->workers, w->id);
        if (c->fx.worker_removed)
                c->fx.worker_removed(c, w, c->userdata);
        worker_free(w);
        schedule_soon(c);
}

int cluster_register_worker(Cluster *c, const WorkerRegistration *reg, const ReportedExecutor *reported,
                            size_t n_reported, usec_t now, bool *ret_kill, Worker **ret) {
        Worker *w;
        bool restarted = false, restored = false;
        int r;

        if (!worker_id_is_valid(reg->id) || isempty(reg->endpoint) || reg->cores < 1 || reg->memory_mb < 1 ||
            cluster_offer_check(reg->labels, reg->n_labels, reg->resources, reg->n_resources) < 0)
                return -EINVAL;

        w = cluster_worker(c, reg->id);
        if (w) {
                /* The same id from another endpoint is another host. */
                if (!streq_ptr(w->endpoint, reg->endpoint))
                        return -EEXIST;
                restarted = true;
                restored = w->restored;
        } else {
                w = calloc(1, sizeof(*w));
                if (!w)
                        return -ENOMEM;
                if (set_string(&w->id, reg->id) < 0) {
                        worker_free(w);
                        return -ENOMEM;
                }
                if (worker_insert(c, w) < 0)
                        return -ENOMEM;
        }

        r = set_string(&w->host, reg->host);
        if (r >= 0)
                r = set_string(&w->endpoint, reg->endpoint);
        if (r >= 0)
                r = set_string(&w->events_endpoint, reg->events_endpoint);
        if (r >= 0)
                r = cluster_worker_set_offer(w, reg->labels, reg->n_labels, reg->resources, reg->n_resources);
        if (r < 0)
                return r;
        w->cores = reg->cores;
        w->memory_mb = reg->memory_mb;
        /* a drain goes on across a restart of the worker */
        if (!restarted || !worker_is_draining(w))
                w->state = SPARK__WORKER_STATE__WORKER_ALIVE;
        w->last_heartbeat = now;
        w->restored = false;
        /* restarted, perhaps mended: it may have launches again */
        w->start_failures = 0;
        w->launch_backoff_until = 0;
        worker_table_update(&c->table, w);

        /* Reconcile with what the worker holds: executors we know stay (or
         * move here), those of a live app we do not know are taken back if
         * it wants them (worker_adopt_executor()), the rest are killed;
         * executors we placed here that it no longer holds died while it
         * was away. */
        for (size_t i = 0; i < n_reported; i++) {
                ClusterExecutor *e = cluster_executor(c, reported[i].app_id, reported[i].executor_id);

                if (!e && worker_adopt_executor(c, w, &reported[i], now)) {
                        ret_kill[i] = false;
                        continue;
                }
                ret_kill[i] = !e || executor_state_is_terminal(e->state);
                if (ret_kill[i])
                        continue;
                if (e->worker != w) {
                        if (e->worker)
                                worker_unlink_executor(c, e->worker, e);
                        worker_link_executor(c, w, e);
                }
        }
        if (restarted) {
                for (ClusterExecutor *e = w->executors, *next; e; e = next) {
                        bool held = false;
                        next = e->worker_next;
                        for (size_t i = 0; i < n_reported && !held; i++)
                                held = !ret_kill[i] && e->id == reported[i].executor_id &&
                                       streq(e->app->id, reported[i].app_id);
                        /* LAUNCHING too: it may have died before it was
                         * reported.  Not on the worker of a restored state,
                         * which registers because we asked: the launches
                         * under way are being sent to it again, and their
                         * answers settle them (they may come after this). */
                        if (!held && (e->state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING ||
                                      (e->state == SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING && !restored)))
                                executor_set_state(c, e, SPARK__EXECUTOR_STATE__EXECUTOR_LOST,
                                                   "gone after its worker restarted", 0);
                }
        }
        /* the units it no longer holds are gone: their addresses are free */
        cluster_resource_reconcile(w, reported, n_reported);
        cluster_drain_progress(c, w);

        log_struct(LOG_INFO, LOG_FIELDS(.worker_id = w->id, .message_id = SPARK_MESSAGE_WORKER_REGISTERED),
                   "Worker %s %sregistered: %s, %d cores, %" PRIi64 " MiB, %zu executors", w->id,
                   restarted ? "re-" : "", w->endpoint, w->cores, w->memory_mb, n_reported);

        if (ret)
                *ret = w;
        schedule_soon(c);
        return restarted ? 1 : 0;
}

int cluster_heartbeat(Cluster *c, const char *worker_id, usec_t now) {
        Worker *w = cluster_worker(c, worker_id);

        if (!w || !worker_is_up(w))
                return -ENOENT;
        w->last_heartbeat = now;
        /* it is there, but what it runs must be heard (Worker.restored) */
        if (w->restored)
                return -ESTALE;
        /* heartbeats are the clock that ends a launch backoff */
        if (w->launch_backoff_until != 0 && now >= w->launch_backoff_until) {
                w->launch_backoff_until = 0;
                worker_table_update(&c->table, w);
                schedule_soon(c);
        }
        return 0;
}

int cluster_check_workers(Cluster *c, usec_t now, usec_t *ret_next) {
        Worker *lost[64];
        size_t n_lost = 0, i = 0;
        usec_t next = now + c->cfg.worker_timeout;
        void *v;
        int count = 0;

        /* collect first: the table must not change while we iterate */
        do {
                n_lost = 0;
                i = 0;
                while (hashmap_iterate(c->workers, &i, &v, NULL)) {
                        Worker *w = v;
                        usec_t deadline = w->last_heartbeat + c->cfg.worker_timeout;
                        if (deadline <= now) {
                                if (n_lost < ELEMENTSOF(lost))
                                        lost[n_lost++] = w;
                        } else if (deadline < next)
                                next = deadline;
                }
                for (size_t k = 0; k < n_lost; k++) {
                        char why[128];
                        snprintf(why, sizeof(why), "no heartbeat for %llu ms",
                                 (unsigned long long) ((now - lost[k]->last_heartbeat) / USEC_PER_MSEC));
                        cluster_worker_lost(c, lost[k], why);
                        count++;
                }
        } while (n_lost == ELEMENTSOF(lost));
        cluster_check_drains(c, now, &next);
        cluster_fair_check(c, now, &next);

        if (ret_next)
                *ret_next = next;
        return count;
}

/* ------------------------------------------------------------------- apps */

static void app_link(Cluster *c, App *a) {
        a->prev = c->apps_tail;
        a->next = NULL;
        if (c->apps_tail)
                c->apps_tail->next = a;
        else
                c->apps_head = a;
        c->apps_tail = a;
}

static void app_unlink(Cluster *c, App *a) {
        if (a->prev)
                a->prev->next = a->next;
        else
                c->apps_head = a->next;
        if (a->next)
                a->next->prev = a->prev;
        else
                c->apps_tail = a->prev;
        a->prev = a->next = NULL;
}

/* The app's executor_env and driver URL end up in every executor's unit:
 * take only what a worker accepts there (daemons/worker/unit-properties.c),
 * so that a bad registration is refused here, not by every launch. */
#define EXECUTOR_ENV_ENTRY_MAX 4096
#define DRIVER_URL_MAX 512

static bool env_entry_is_valid(const char *s) {
        const char *eq = strchr(s, '=');

        if (!eq || eq == s || strlen(s) > EXECUTOR_ENV_ENTRY_MAX || (*s >= '0' && *s <= '9'))
                return false;
        for (const char *p = s; p < eq; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
                      (*p >= '0' && *p <= '9')))
                        return false;
        if (executor_env_name_is_reserved(s, (size_t) (eq - s)))
                return false;
        return utf8_text_is_valid(eq + 1, true);
}

/* Printable ASCII without blanks, quotes, '$' or '\\': the driver URL is an
 * argument of the executor's ExecStart= and a value in its Environment=. */
static bool driver_url_is_valid(const char *u) {
        if (isempty(u) || strlen(u) >= DRIVER_URL_MAX)
                return false;
        for (const char *p = u; *p; p++)
                if ((unsigned char) *p <= 0x20 || (unsigned char) *p >= 0x7f || strchr("$\\\"'`", *p))
                        return false;
        return true;
}

/* Checks a registration and adds the app to the tables, nothing more. */
static int app_create(Cluster *c, const AppRegistration *reg, usec_t now, App **ret) {
        _cleanup_(app_freep) App *a = NULL;
        int r;

        if (!driver_url_is_valid(reg->driver_url) || reg->cores_per_executor < 1 || reg->cores_per_executor > 4096 ||
            reg->max_cores < 0 || reg->executor_memory_mb < 1 || reg->executor_memory_mb > (INT64_C(1) << 32) ||
            reg->n_env > 256 || !reg->executor_key || !executor_key_is_valid(reg->executor_key_len) ||
            reg->weight < 0 || reg->weight > APP_WEIGHT_MAX || reg->driver_channel_port > UINT16_MAX ||
            cluster_wants_check(reg->constraints, reg->n_constraints, reg->wants, reg->n_wants) < 0)
                return -EINVAL;
        for (size_t i = 0; i < reg->n_env; i++)
                if (!env_entry_is_valid(reg->env[i]))
                        return -EINVAL;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;

        if (!isempty(reg->app_id)) {
                /* a driver re-registering with a master that forgot it */
                if (!app_id_is_valid(reg->app_id))
                        return -EINVAL;
                if (cluster_app(c, reg->app_id))
                        return -EEXIST;
                snprintf(a->id, sizeof(a->id), "%s", reg->app_id);
        } else {
                if (c->next_app_number > APP_ID_COUNTER_MAX)
                        return -ENOSPC;
                r = app_id_format(a->id, sizeof(a->id), c->start_time, c->next_app_number++);
                if (r < 0)
                        return r;
        }

        if (set_string(&a->name, isempty(reg->name) ? "default" : reg->name) < 0 ||
            set_string(&a->driver_url, reg->driver_url) < 0 || set_string(&a->driver_events, reg->driver_events) < 0)
                return -ENOMEM;
        a->driver_channel_port = (uint16_t) reg->driver_channel_port;
        a->env = calloc(reg->n_env + 1, sizeof(char *));
        if (!a->env)
                return -ENOMEM;
        for (size_t i = 0; i < reg->n_env; i++) {
                a->env[i] = strdup(reg->env[i]);
                if (!a->env[i])
                        return -ENOMEM;
                a->n_env++;
        }
        memcpy(a->executor_key, reg->executor_key, EXECUTOR_KEY_SIZE);
        r = cluster_app_set_wants(a, reg->constraints, reg->n_constraints, reg->wants, reg->n_wants);
        if (r < 0)
                return r;
        a->max_cores = reg->max_cores > 0 ? reg->max_cores : c->cfg.default_cores;
        a->cores_per_executor = reg->cores_per_executor;
        a->executor_memory_mb = reg->executor_memory_mb;
        /* An elastic app asks for what it needs itself (RequestExecutors);
         * until then it gets what it registered with, maybe none. */
        a->dynamic_allocation = reg->dynamic_allocation;
        a->executor_limit = reg->dynamic_allocation ? MAX(reg->initial_executors, 0) : INT32_MAX;
        a->weight = reg->weight > 0 ? reg->weight : 1;  /* 0: a driver that does not send one */
        a->next_executor_id = 1;  /* 0 means "no executor" in logs and replies */
        a->state = SPARK__APP_STATE__APP_WAITING;
        a->registered_at = now;

        r = hashmap_put(c->apps, a->id, a);
        if (r < 0)
                return r;
        app_link(c, a);
        apps_wanting_number(&c->wanting, a);
        cluster_app_demand_changed(c, a);
        *ret = TAKE_PTR(a);
        return 0;
}

int cluster_register_app(Cluster *c, const AppRegistration *reg, usec_t now, App **ret) {
        App *a;
        int r;

        r = app_create(c, reg, now, &a);
        if (r < 0)
                return r;
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = a->id, .message_id = SPARK_MESSAGE_APP_REGISTERED),
                   "Application %s (%s) registered from %s: max %d cores, %d per executor, %" PRIi64 " MiB",
                   a->id, a->name, a->driver_url, a->max_cores, a->cores_per_executor, a->executor_memory_mb);
        if (ret)
                *ret = a;
        schedule_soon(c);
        return 0;
}

int cluster_remove_app(Cluster *c, const char *app_id, AppState state, const char *reason) {
        App *a = cluster_app(c, app_id);

        if (!a)
                return -ENOENT;
        if (a->state == SPARK__APP_STATE__APP_FINISHED || a->state == SPARK__APP_STATE__APP_FAILED)
                return 0;  /* already on its way out (re-entered from executor_set_state) */

        a->state = state;
        (void) set_string(&a->reason, reason);
        for (size_t i = 0; i < a->n_executors_allocated; i++) {
                ClusterExecutor *e = a->executors[i];
                Worker *w;

                if (!e || executor_state_is_terminal(e->state))
                        continue;
                w = e->worker;
                if (w && c->fx.kill_executor)
                        c->fx.kill_executor(c, w, e, "application removed", c->userdata);
                if (w)
                        a->executors_stopping++;
                executor_set_state(c, e, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED, "application removed", 0);
        }

        log_struct(state == SPARK__APP_STATE__APP_FAILED ? LOG_WARNING : LOG_INFO,
                   LOG_FIELDS(.app_id = a->id, .message_id = SPARK_MESSAGE_APP_REMOVED),
                   "Application %s removed (%s): %s", a->id, wire_app_state_to_string(state),
                   isempty(reason) ? "-" : reason);
        if (c->fx.app_removed)
                c->fx.app_removed(c, a, c->userdata);

        hashmap_remove(c->apps, a->id);
        app_unlink(c, a);
        apps_wanting_remove(&c->wanting, a);
        fair_demand_remove(&c->fair_demand, a);
        app_uncount_executors(c, a);
        app_free(a);
        schedule_soon(c);
        return 0;
}

int cluster_request_executors(Cluster *c, const char *app_id, int total) {
        App *a = cluster_app(c, app_id);

        if (!a)
                return -ENOENT;
        if (total < 0)
                return -EINVAL;
        a->executor_limit = total;
        cluster_app_demand_changed(c, a);
        schedule_soon(c);
        return 0;
}

/* -------------------------------------------------------------- executors */

/* The worker could not start it at all: it refused the launch or systemd
 * the unit (no exit status), or systemd failed before exec (its own
 * statuses 200-255: CHDIR, EXEC, USER, ...).  That is the worker's trouble;
 * an executor that ran and crashed says nothing about its worker. */
static bool executor_start_failed(const ClusterExecutor *e, ExecutorState state, int exit_code) {
        return state == SPARK__EXECUTOR_STATE__EXECUTOR_FAILED &&
               e->state == SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING &&
               (exit_code == 0 || (exit_code >= 200 && exit_code <= 255));
}

static void worker_start_failed(Cluster *c, Worker *w, usec_t now) {
        usec_t backoff = MIN(LAUNCH_BACKOFF_MIN_USEC << MIN(w->start_failures, 8), LAUNCH_BACKOFF_MAX_USEC);

        w->start_failures++;
        w->launch_backoff_until = now + backoff;
        worker_table_update(&c->table, w);
        log_struct(LOG_WARNING, LOG_FIELDS(.worker_id = w->id),
                   "Worker %s could not start %d executors in a row; no launches there for %llu ms", w->id,
                   w->start_failures, (unsigned long long) (backoff / USEC_PER_MSEC));
}

int cluster_executor_state_changed(Cluster *c, const char *worker_id, const char *app_id, int executor_id,
                                   ExecutorState state, const char *reason, int exit_code, usec_t now) {
        ClusterExecutor *e = cluster_executor(c, app_id, executor_id);

        /* The worker says the unit is gone: only now are its addresses
         * free, also for an executor the master gave up before. */
        if (worker_id && executor_state_is_terminal(state) &&
            cluster_resource_release(cluster_worker(c, worker_id), app_id, executor_id) > 0)
                schedule_soon(c);
        if (!e)
                return -ENOENT;
        if (state <= SPARK__EXECUTOR_STATE__EXECUTOR_STATE_UNKNOWN || state > SPARK__EXECUTOR_STATE__EXECUTOR_LOST ||
            state == SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING)
                return -EINVAL;
        if (executor_state_is_terminal(e->state)) {
                Worker *w = worker_id ? cluster_worker(c, worker_id) : NULL;

                /* An executor we gave up on runs after all (a launch resent
                 * to a restarted worker): it must not run unaccounted. */
                if (state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING && w && c->fx.kill_executor)
                        c->fx.kill_executor(c, w, e, "no longer wanted by the master", c->userdata);
                return 0;  /* otherwise a resent report */
        }
        if (worker_id && e->worker && !streq(e->worker->id, worker_id))
                return -ESTALE;

        if (e->worker && executor_start_failed(e, state, exit_code))
                worker_start_failed(c, e->worker, now);
        else if (e->worker && state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING)
                e->worker->start_failures = 0;

        if (state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING && e->state != state)
                e->running_since = now;
        else if (state == SPARK__EXECUTOR_STATE__EXECUTOR_FAILED &&
                 e->state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING && now - e->running_since >= EXECUTOR_STABLE_USEC)
                e->app->retry_count = 0;  /* it ran well: not a crash loop */
        /* An executor that exits 0 at once is replaced at once: without
         * counting it as a failed start that would go on for ever. */
        e->ended_early = state == SPARK__EXECUTOR_STATE__EXECUTOR_EXITED &&
                         (e->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING ||
                          now - e->running_since < EXECUTOR_STABLE_USEC);
        executor_set_state(c, e, state, reason, exit_code);
        if (executor_state_is_terminal(state))
                schedule_soon(c);
        return 0;
}

int cluster_kill_executor(Cluster *c, const char *app_id, int executor_id, const char *reason) {
        ClusterExecutor *e = cluster_executor(c, app_id, executor_id);

        if (!e)
                return -ENOENT;
        if (executor_state_is_terminal(e->state))
                return 0;
        /* The worker reports the unit's end; until then it stays as it is. */
        if (e->worker && c->fx.kill_executor)
                c->fx.kill_executor(c, e->worker, e, reason, c->userdata);
        return 0;
}

void cluster_executor_usage(Cluster *c, const char *app_id, int executor_id, uint64_t cpu_usage_ns,
                            uint64_t memory_peak_bytes) {
        ClusterExecutor *e = cluster_executor(c, app_id, executor_id);

        if (!e || !executor_state_is_terminal(e->state) || e->usage_counted ||
            (cpu_usage_ns == 0 && memory_peak_bytes == 0))
                return;
        e->usage_counted = true;  /* a resent report counts once */
        e->app->cpu_usage_ns += cpu_usage_ns;
        e->app->memory_peak_bytes += memory_peak_bytes;
}

/* ---------------------------------------------------------------- restore */

time_t cluster_start_time(Cluster *c) {
        return c->start_time;
}

unsigned cluster_next_app_number(Cluster *c) {
        return c->next_app_number;
}

void cluster_restore_counters(Cluster *c, time_t start_time, unsigned next_app_number) {
        c->start_time = start_time;
        c->next_app_number = MAX(next_app_number, 1u);
}

int cluster_restore_worker(Cluster *c, const WorkerRegistration *reg, WorkerState state, usec_t drain_left,
                           usec_t now) {
        Worker *w;

        if (!worker_id_is_valid(reg->id) || isempty(reg->endpoint) || reg->cores < 1 || reg->memory_mb < 1 ||
            (state != SPARK__WORKER_STATE__WORKER_ALIVE && state != SPARK__WORKER_STATE__WORKER_DRAINING &&
             state != SPARK__WORKER_STATE__WORKER_DRAINED))
                return -EINVAL;
        if (cluster_worker(c, reg->id))
                return -EEXIST;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        if (set_string(&w->id, reg->id) < 0 || set_string(&w->host, reg->host) < 0 ||
            set_string(&w->endpoint, reg->endpoint) < 0 || set_string(&w->events_endpoint, reg->events_endpoint) < 0 ||
            cluster_worker_set_offer(w, reg->labels, reg->n_labels, reg->resources, reg->n_resources) < 0) {
                worker_free(w);
                return -ENOMEM;
        }
        if (worker_insert(c, w) < 0)
                return -ENOMEM;
        w->cores = reg->cores;
        w->memory_mb = reg->memory_mb;
        w->state = state;
        worker_table_update(&c->table, w);
        w->drain_deadline = state == SPARK__WORKER_STATE__WORKER_DRAINING && drain_left > 0 ? now + drain_left : 0;
        /* it gets a full timeout to show it is still there, by registering */
        w->last_heartbeat = now;
        w->restored = true;
        return 0;
}

int cluster_restore_app(Cluster *c, const AppRegistration *reg, AppState state, int next_executor_id,
                        int executor_limit, int retry_count, usec_t now, App **ret) {
        App *a;
        int r;

        if (isempty(reg->app_id) || next_executor_id < 1 || next_executor_id > CLUSTER_EXECUTOR_ID_MAX ||
            executor_limit < 0 ||
            (state != SPARK__APP_STATE__APP_WAITING && state != SPARK__APP_STATE__APP_RUNNING))
                return -EINVAL;
        r = app_create(c, reg, now, &a);
        if (r < 0)
                return r;
        a->state = state;
        a->next_executor_id = next_executor_id;
        a->executor_limit = executor_limit;
        a->retry_count = MAX(retry_count, 0);
        cluster_app_demand_changed(c, a);
        *ret = a;
        return 0;
}

int cluster_restore_executor(Cluster *c, App *a, int id, const char *worker_id, int cores, int64_t memory_mb,
                             ExecutorState state, usec_t now) {
        Worker *w = cluster_worker(c, worker_id);
        ClusterExecutor *e;

        if (!w || id < 1 || id >= a->next_executor_id || cores < 1 || memory_mb < 1 ||
            (state != SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING && state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING))
                return -EINVAL;
        if (cluster_executor(c, a->id, id))
                return -EEXIST;
        /* app_new_executor() takes the next id: make it this one */
        {
                int next = a->next_executor_id;
                a->next_executor_id = id;
                e = app_new_executor(c, a, w);
                a->next_executor_id = next;
        }
        if (!e)
                return -ENOMEM;
        e->cores = cores;
        e->memory_mb = memory_mb;
        /* app_new_executor() counted the app's own size */
        a->cores_granted += cores - a->cores_per_executor;
        cluster_app_demand_changed(c, a);
        w->cores_used += cores - a->cores_per_executor;
        w->memory_used_mb += memory_mb - a->executor_memory_mb;
        worker_table_update(&c->table, w);
        executor_count_move(c, e, state);
        e->state = state;
        e->running_since = now;
        return 0;
}

void cluster_restore_app_marks(Cluster *c, App *a, usec_t starved_for, usec_t regrow_left, usec_t now) {
        if (starved_for > 0 && a->wanting) {
                /* 1 at the least: 0 says it is not starved */
                a->starved_since = now > starved_for ? now - starved_for : 1;
                if (c->fx.check_at)
                        c->fx.check_at(c, MAX(now, a->starved_since + c->cfg.preemption_timeout), c->userdata);
        }
        if (regrow_left > 0)
                a->regrow_after = now + MIN(regrow_left, c->cfg.preemption_timeout);
}

void cluster_restore_executor_marks(Cluster *c, ClusterExecutor *e, bool released, bool preempting,
                                    usec_t preempt_left, bool preempt_killed, usec_t now) {
        e->released = released;
        if (preempting && !e->preempting) {
                e->preempting = true;
                e->app->n_preempting++;
                e->preempt_deadline = now + MIN(preempt_left, c->cfg.preemption_timeout);
                e->preempt_killed = preempt_killed;
                if (c->fx.check_at)
                        c->fx.check_at(c, e->preempt_deadline, c->userdata);
        }
}

/* ------------------------------------------------------------- scheduling */

bool app_is_live(const App *a) {
        return a->state == SPARK__APP_STATE__APP_WAITING || a->state == SPARK__APP_STATE__APP_RUNNING;
}

int app_executors_wanted(const App *a) {
        int64_t n = a->executor_limit;

        if (a->max_cores > 0)
                n = MIN(n, (int64_t) (a->max_cores / a->cores_per_executor));
        return (int) MAX(n, (int64_t) 0);
}

int cluster_schedule_app(Cluster *c, App *a, int budget) {
        int cores_left = a->max_cores > 0 ? a->max_cores - a->cores_granted : INT32_MAX;
        int allowed = a->executor_limit == INT32_MAX ? INT32_MAX : a->executor_limit - (int) a->n_live_executors;
        PlacementRequest req = {
                .cores_wanted = MAX(cores_left, 0),
                .cores_per_executor = a->cores_per_executor,
                .memory_per_executor_mb = a->executor_memory_mb,
                .executors_allowed = MIN(MAX(allowed, 0), budget),
                .spread_out = c->cfg.spread_out,
        };
        WorkerTable *t = &c->table;
        const PlacementWorker *view = t->view;
        size_t n_workers = t->n;
        int placed, launched = 0;

        if (req.cores_wanted < a->cores_per_executor || req.executors_allowed == 0)
                return 0;

        /* labels and named resources: the app's fit on each worker, in a
         * view of its own */
        if (a->n_constraints > 0 || a->n_wants > 0) {
                memcpy(t->app_view, t->view, n_workers * sizeof(*view));
                view = t->app_view;
                for (size_t i = 0; i < n_workers; i++) {
                        int fit = cluster_resource_fit(t->workers[i], a);

                        if (fit == 0)
                                t->app_view[i].usable = false;
                        else if (fit < INT_MAX)
                                t->app_view[i].resource_executors_max = fit;
                }
        }
        placed = placement_schedule(&req, view, n_workers, t->order, t->result);
        if (placed <= 0)
                return 0;

        for (size_t i = 0; i < n_workers; i++)
                for (int k = 0; k < t->result[i]; k++) {
                        Worker *w = t->workers[i];
                        ClusterExecutor *e = app_new_executor(c, a, w);
                        if (!e)
                                return launched;
                        if (cluster_resource_assign(w, e) < 0)
                                log_struct(LOG_ERR, LOG_FIELDS(.app_id = a->id, .executor_id = e->id, .worker_id = w->id),
                                           "Executor %s/%d placed on %s without its named resources", a->id, e->id,
                                           w->id);
                        launched++;
                        log_struct(LOG_INFO,
                                   LOG_FIELDS(.app_id = a->id, .executor_id = e->id, .worker_id = w->id,
                                              .message_id = SPARK_MESSAGE_EXECUTOR_LAUNCHED),
                                   "Launching executor %s/%d on %s: %d cores, %" PRIi64 " MiB", a->id, e->id, w->id,
                                   e->cores, e->memory_mb);
                        if (c->fx.launch_executor)
                                c->fx.launch_executor(c, w, e, c->userdata);
                        if (c->fx.executor_added)
                                c->fx.executor_added(c, e, c->userdata);
                }
        return launched;
}

bool cluster_schedule_step(Cluster *c, unsigned max_launches) {
        int budget = (int) MIN(max_launches, (unsigned) INT32_MAX);
        size_t n = c->table.n;

        c->schedule_pending = false;
        if (!c->apps_head || n == 0 || budget == 0)
                return budget == 0;
        if (worker_table_scratch(&c->table) < 0)
                return false;
#ifdef SPARK_SANITIZE
        /* a change that missed worker_table_update() or
         * cluster_app_demand_changed() fails the tests here */
        assert(cluster_worker_table_ok(c));
        assert(cluster_apps_wanting_ok(c));
        assert(fair_demand_matches(&c->fair_demand, c->apps_head));
#endif

        if (c->cfg.fair)
                return cluster_fair_schedule(c, budget);
        /* FIFO: only the apps that may take more, oldest first */
        for (App *a = c->wanting.head; a;) {
                uint64_t seq = a->seq;

                budget -= cluster_schedule_app(c, a, budget);
                if (budget <= 0)
                        return true; /* maybe more: the caller comes back */
                /* a stays on the list (no room for more of it), or it has
                 * all it wants and left it: then the next is found by a's
                 * number, as a's own link is gone */
                a = a->wanting ? a->wanting_next : apps_wanting_after(&c->wanting, seq);
        }
        return false;
}

void cluster_schedule(Cluster *c) {
        (void) cluster_schedule_step(c, UINT_MAX);
}

static void schedule_soon(Cluster *c) {
        if (!c->fx.schedule_needed) {
                cluster_schedule(c);
                return;
        }
        if (c->schedule_pending)
                return;
        c->schedule_pending = true;
        c->fx.schedule_needed(c, c->userdata);
}
