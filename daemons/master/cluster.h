/* The master's view of the cluster: workers, applications and executors,
 * and every state change of them.  No socket or file I/O: what must be sent
 * (launch, kill, events) goes out through ClusterEffects, so the whole state
 * machine is tested without sockets.  It does log each key state change
 * (worker registered or lost, executor launched or lost, app registered or
 * removed) itself, with its MESSAGE_ID, where the change is decided. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cluster-fair-demand.h"
#include "cluster-pool.h"
#include "cluster-resources.h"
#include "executor-secret.h"
#include "hashmap.h"
#include "ids.h"
#include "spark.pb-c.h"
#include "time-util.h"

typedef struct Cluster Cluster;
typedef struct Worker Worker;
typedef struct App App;
typedef struct ClusterExecutor ClusterExecutor;

typedef Spark__ExecutorState ExecutorState;
typedef Spark__WorkerState WorkerState;
typedef Spark__AppState AppState;

/* An executor that ran this long before it failed was not crash-looping:
 * its failure starts a new count towards max_executor_retries.  (A unit is
 * "running" as soon as its process has been exec'd, so RUNNING alone says
 * nothing about the executor's health.) */
#define EXECUTOR_STABLE_USEC (10 * USEC_PER_SEC)

/* A worker that could not start an executor at all (it refused the launch,
 * or systemd failed before exec) is given no launch for a while, doubling
 * from the minimum to the maximum with each such failure in a row.  Else
 * the next placement picks it again at once — it has the most free cores —
 * and a full work_dir or a missing binary becomes thousands of launches a
 * second, while other workers could run the app. */
#define LAUNCH_BACKOFF_MIN_USEC (1 * USEC_PER_SEC)
#define LAUNCH_BACKOFF_MAX_USEC (10 * USEC_PER_SEC)

/* driver.weight's range (spark.conf(5)) */
#define APP_WEIGHT_MAX 1000

struct ClusterExecutor {
        App *app;
        int id;
        Worker *worker;          /* NULL once it ended */
        int cores;
        int64_t memory_mb;
        ExecutorState state;
        char *reason;
        int exit_code;
        usec_t running_since;    /* when it was reported RUNNING */
        bool ended_early;        /* exited 0 before it ran long: counts as a failed start */
        usec_t launch_sent;      /* the I/O layer's: when its launch went out, 0: not timed */
        bool usage_counted;      /* its CPU time and peak memory are in its app's totals */
        bool released;           /* its driver gave it back (ReleaseExecutors): stopping */
        bool preempting;         /* taken back for another app: drained like on a draining worker */
        usec_t preempt_deadline; /* preempting: stopped then if its driver has not released it */
        bool preempt_killed;     /* that stop went out */
        int running_tasks;       /* as its driver last reported (ExecutorLoad); -1: not reported */
        ClusterGrant *grants;    /* the named resources' addresses it was given */
        size_t n_grants;
        Spark__ResourceAddresses **grant_ptrs;   /* n_grants, for ExecutorInfo and LaunchExecutor */
        ClusterExecutor *worker_prev, *worker_next;  /* the worker's executor list */
};

struct Worker {
        char *id;
        char *host;
        char *endpoint;
        char *events_endpoint;
        char *ui_url;            /* its web UI, NULL: none (set by the I/O layer) */
        int cores, cores_used;
        int64_t memory_mb, memory_used_mb;
        WorkerState state;
        usec_t last_heartbeat;
        /* Known from the saved state and not registered since: its
         * heartbeats are answered "register again", so that it reports the
         * executors it runs, which the state may not hold yet (a save comes
         * a moment after a change; the master may have died first). */
        bool restored;
        int start_failures;      /* executors in a row it could not start */
        usec_t launch_backoff_until; /* no launch here before this; 0: none */
        ClusterExecutor *executors;     /* live executors placed here */
        size_t n_executors;
        /* DRAINING: when its executors' running tasks are given up (they
         * are killed; drivers re-queue the tasks); 0: no timeout */
        usec_t drain_deadline;
        bool drain_timed_out;    /* the kills at the deadline went out */
        char **labels;           /* worker.labels */
        size_t n_labels;
        ClusterResource *resources;  /* worker.resources, with who holds each address */
        size_t n_resources;
        Spark__ResourceAddresses **resource_ptrs;  /* n_resources, for WorkerInfo */
        void *link;              /* the I/O layer's connection to it */
        size_t table_index;      /* its place in the placement's table (worker-table.h) */
        ClusterPool pooled;      /* its part of the cluster's pool (cluster-pool.h) */
};

struct App {
        char id[APP_ID_MAX];
        char *name;
        char *driver_url;
        char *driver_events;
        char *ui_url;            /* the driver's web UI, NULL: none (set by the I/O layer) */
        /* The driver's task channel (beside driver_url), which its
         * executors register on; 0: none, they register over nng. */
        uint16_t driver_channel_port;
        /* The certificate subject of the driver that registered it over TLS
         * (docs/security.md); NULL: plaintext, or recovered after a restart
         * and not registered again since. */
        char *driver_subject;
        int max_cores;           /* after default_cores is applied; 0: no cap */
        int cores_per_executor;
        int64_t executor_memory_mb;
        int weight;              /* in the fair share, 1..1000 */
        char **env;              /* "KEY=VALUE" */
        size_t n_env;
        /* The driver's key for its executors' secrets: only ever sent to
         * the worker that starts one (LaunchExecutor) and kept in the state
         * files, never in events, replies or logs. */
        uint8_t executor_key[EXECUTOR_KEY_SIZE];
        AppState state;
        char *reason;
        int cores_granted;
        int executor_limit;      /* RequestExecutors; INT32_MAX: no limit */
        bool dynamic_allocation; /* elastic executors: registered with a limit of its own */
        int retry_count;         /* failed executors since one ran EXECUTOR_STABLE_USEC */
        int next_executor_id;
        ClusterExecutor **executors;    /* indexed by executor id */
        size_t n_executors_allocated;
        size_t n_live_executors;
        usec_t registered_at;
        /* History and chargeback (master-history.h): who registered it (a
         * certificate subject, or how it connected), when (Unix ms), and
         * what its ended executors used. */
        char *submitted_by;
        int64_t start_time_ms;
        uint64_t cpu_usage_ns;
        uint64_t memory_peak_bytes;  /* the sum of its executors' peaks */
        int executors_stopping;  /* at its removal: executors killed, their use still to come */
        /* Fair share (cluster-fair.c): what weighted DRF gave it at the
         * last full pass (read them through cluster_app_fair_view()),
         * since when it has wanted more and been below that (0: it is
         * not, always so while it may take no more executors), and until
         * when it gets nothing beyond that because executors were taken
         * back from it (0: no such pause). */
        int fair_target;
        double fair_share;
        double fair_dominant;    /* its dominant share then */
        usec_t starved_since;
        FairDemandPart fair_demand;  /* its part in the cluster's sums (cluster-fair-demand.h) */
        usec_t regrow_after;
        int n_preempting;        /* its live executors being taken back */
        char **constraints;      /* labels its workers must carry */
        size_t n_constraints;
        ClusterResourceAmount *wants;  /* named resources each executor needs */
        size_t n_wants;
        Spark__ResourceAmount *wants_wire, **wants_ptrs;  /* n_wants, for AppInfo */
        App *prev, *next;        /* FIFO order for scheduling */
        /* Its place in registration order, and on the list of the apps that
         * may take more executors (cluster-wanting.h). */
        uint64_t seq;
        bool wanting;
        App *wanting_prev, *wanting_next;
};

typedef struct ClusterConfig {
        usec_t worker_timeout;
        bool spread_out;
        int default_cores;       /* 0: no cap */
        int max_executor_retries;
        bool fair;               /* weighted DRF placement and preemption, else FIFO */
        usec_t preemption_timeout;
} ClusterConfig;

typedef struct ClusterEffects {
        void (*launch_executor)(Cluster *c, Worker *w, ClusterExecutor *e, void *userdata);
        void (*kill_executor)(Cluster *c, Worker *w, ClusterExecutor *e, const char *reason, void *userdata);
        /* events for subscribers (drivers) */
        void (*executor_added)(Cluster *c, ClusterExecutor *e, void *userdata);
        void (*executor_updated)(Cluster *c, ClusterExecutor *e, void *userdata);
        void (*worker_lost)(Cluster *c, Worker *w, const char *reason, void *userdata);
        void (*app_removed)(Cluster *c, App *a, void *userdata);
        /* a worker is gone from the table: drop what link points at */
        void (*worker_removed)(Cluster *c, Worker *w, void *userdata);
        /* Placement is due after a change: the I/O layer calls
         * cluster_schedule_step() soon, from its loop, until it returns
         * false.  Called once until then.  NULL: every change places at once,
         * within the call that made it. */
        void (*schedule_needed)(Cluster *c, void *userdata);
        /* cluster_check_workers() is due by when (a fair-share deadline):
         * the I/O layer's timer fires no later.  NULL: its next check. */
        void (*check_at)(Cluster *c, usec_t when, void *userdata);
} ClusterEffects;

int cluster_new(const ClusterConfig *cfg, const ClusterEffects *fx, void *userdata, time_t start_time,
                Cluster **ret);
Cluster *cluster_free(Cluster *c);
void cluster_set_config(Cluster *c, const ClusterConfig *cfg);

typedef struct WorkerRegistration {
        const char *id, *host, *endpoint, *events_endpoint;
        int cores;
        int64_t memory_mb;
        const char *const *labels;
        size_t n_labels;
        const ClusterResourceOffer *resources;
        size_t n_resources;
} WorkerRegistration;

/* A reported running executor (after a worker restart). */
typedef struct ReportedExecutor {
        const char *app_id;
        int executor_id;
} ReportedExecutor;

/* Registers (or re-registers) a worker.  -EEXIST: the id is alive with
 * another endpoint.  reported lists executors the worker holds; those the
 * master does not want are returned in *ret_kill (indices into reported). */
int cluster_register_worker(Cluster *c, const WorkerRegistration *reg, const ReportedExecutor *reported,
                            size_t n_reported, usec_t now, bool *ret_kill, Worker **ret);
/* 0; -ENOENT if the worker must register again, -ESTALE if it was heard
 * but must register again all the same, to report what it runs (a worker
 * of the restored state). */
int cluster_heartbeat(Cluster *c, const char *worker_id, usec_t now);
/* Declares workers silent for longer than worker_timeout lost; returns how
 * many, and the time of the next check in *ret_next. */
int cluster_check_workers(Cluster *c, usec_t now, usec_t *ret_next);
void cluster_worker_lost(Cluster *c, Worker *w, const char *reason);

typedef struct AppRegistration {
        const char *app_id;      /* NULL/"" for a new app */
        const char *name, *driver_url, *driver_events;
        uint32_t driver_channel_port; /* its task channel for executors; 0: none */
        int max_cores, cores_per_executor;
        int64_t executor_memory_mb;
        const char *const *env;
        size_t n_env;
        const uint8_t *executor_key;  /* executor_key_len bytes, which must be EXECUTOR_KEY_SIZE */
        size_t executor_key_len;
        bool dynamic_allocation;      /* then executor_limit starts at initial_executors */
        int initial_executors;
        int weight;              /* 1..1000; 0: 1 */
        const char *const *constraints;
        size_t n_constraints;
        const ClusterResourceAmount *wants;
        size_t n_wants;
} AppRegistration;

int cluster_register_app(Cluster *c, const AppRegistration *reg, usec_t now, App **ret);
/* Kills its executors and removes it; state FINISHED or FAILED. */
int cluster_remove_app(Cluster *c, const char *app_id, AppState state, const char *reason);
int cluster_request_executors(Cluster *c, const char *app_id, int total);
/* cluster-release.c (docs/elastic.md): the app's driver gives back its
 * executors ids[]: they are stopped (the worker stops their units
 * gracefully) and not replaced: the app's executor limit drops to the live
 * executors it keeps.  An id given back already, or ended, counts as done.
 * -ENOENT (and nothing changes) if an id is not one of the app's executors,
 * -EINVAL for a count beyond max_ids; *ret_bad: the id at fault. */
int cluster_release_executors(Cluster *c, const char *app_id, const int32_t *ids, size_t n_ids, const char *reason,
                              int *ret_bad);
/* cluster-load.c: the app's driver reports its running tasks on each of
 * its executors ids[i]: counts[i], each clamped to the executor's cores.
 * The whole report is checked first: -ENOENT (nothing changes) if an id is
 * not one of the app's executors (*ret_bad: that id), -EINVAL if there are
 * more entries than the app ever had executors, or a count is negative
 * (*ret_bad: its id).  Returns how many counts changed. */
int cluster_report_executor_load(Cluster *c, const char *app_id, const int32_t *ids, const int32_t *counts,
                                 size_t n, int *ret_bad);
/* How many executors a wants in all: its executor limit and max_cores;
 * INT32_MAX: no limit. */
int app_executors_wanted(const App *a);
/* WAITING or RUNNING: it may have executors and be given more. */
bool app_is_live(const App *a);

/* An app's place in the fair share, as status and snapshots show it (the
 * shares are not divided by its weight). */
typedef struct ClusterFairView {
        int target;              /* executors weighted DRF gives it */
        double share;            /* its dominant share at that target */
        double dominant;         /* its dominant share now */
} ClusterFairView;
/* Those of a live app: worked out now while every live app's whole demand
 * fits (each is given what it wants, and the placement passes no longer
 * look at the others), else as the last full pass found them; zero under
 * FIFO.  cluster-fair.c. */
ClusterFairView cluster_app_fair_view(Cluster *c, const App *a);

/* Drain (cluster-drain.c, docs/DESIGN.md "Drain"): nothing new is placed on
 * the worker; every executor there is updated with draining set, so that
 * its driver gives it no new task and kills it when it is idle; at the
 * deadline (timeout 0: none) what still runs there is killed.  A worker
 * with no executor left is DRAINED and stays so until undrained.  -ENOENT:
 * unknown worker. */
int cluster_drain_worker(Cluster *c, const char *worker_id, usec_t timeout, usec_t now);
int cluster_undrain_worker(Cluster *c, const char *worker_id);
/* DRAINING or DRAINED. */
bool worker_is_draining(const Worker *w);
/* Registered and heard from: ALIVE, DRAINING or DRAINED. */
bool worker_is_up(const Worker *w);
/* DRAINING: what is left of its timeout, at least 1; else 0. */
int64_t worker_drain_left_ms(const Worker *w, usec_t now);

/* An executor's state as a worker reports it, at now.  -ENOENT for unknown
 * ids, -ESTALE when the report comes from a worker that does not hold it. */
int cluster_executor_state_changed(Cluster *c, const char *worker_id, const char *app_id, int executor_id,
                                   ExecutorState state, const char *reason, int exit_code, usec_t now);
int cluster_kill_executor(Cluster *c, const char *app_id, int executor_id, const char *reason);
/* What an ended executor used, as its worker reports it with its end:
 * added to its app's totals once. */
void cluster_executor_usage(Cluster *c, const char *app_id, int executor_id, uint64_t cpu_usage_ns,
                            uint64_t memory_peak_bytes);

/* Places executors for waiting apps, oldest app first: at once after every
 * state change by the functions above, or, with fx.schedule_needed, when
 * the I/O layer calls it.  cluster_schedule_step() launches at most
 * max_launches executors and returns true if it stopped there (call again:
 * there may be more to place), so that a large app is placed in slices
 * between other work. */
void cluster_schedule(Cluster *c);
bool cluster_schedule_step(Cluster *c, unsigned max_launches);

/* Executor ids (and an app's next one) stay below this. */
#define CLUSTER_EXECUTOR_ID_MAX 100000000

/* Restoring what master-state.c kept in state_dir; nothing is scheduled or
 * sent until the caller calls cluster_schedule(). */
time_t cluster_start_time(Cluster *c);
unsigned cluster_next_app_number(Cluster *c);
void cluster_restore_counters(Cluster *c, time_t start_time, unsigned next_app_number);
/* state: ALIVE, DRAINING (drain_left: of its timeout, 0: none) or DRAINED */
int cluster_restore_worker(Cluster *c, const WorkerRegistration *reg, WorkerState state, usec_t drain_left,
                           usec_t now);
int cluster_restore_app(Cluster *c, const AppRegistration *reg, AppState state, int next_executor_id,
                        int executor_limit, int retry_count, usec_t now, App **ret);
int cluster_restore_executor(Cluster *c, App *a, int id, const char *worker_id, int cores, int64_t memory_mb,
                             ExecutorState state, usec_t now);
/* A restored executor's release and preemption marks (its stop went out
 * before they were saved); preempt_left: what was left of its timeout. */
/* A restored app's fair-share clocks: starved for this long already (0:
 * not starved), no regrowth for regrow_left more. */
void cluster_restore_app_marks(Cluster *c, App *a, usec_t starved_for, usec_t regrow_left, usec_t now);
void cluster_restore_executor_marks(Cluster *c, ClusterExecutor *e, bool released, bool preempting,
                                    usec_t preempt_left, bool preempt_killed, usec_t now);

Worker *cluster_worker(Cluster *c, const char *id);
App *cluster_app(Cluster *c, const char *id);
ClusterExecutor *cluster_executor(Cluster *c, const char *app_id, int executor_id);
Hashmap *cluster_workers(Cluster *c);
App *cluster_apps(Cluster *c);   /* head of the FIFO list of live apps */
size_t cluster_n_executors(Cluster *c);
size_t cluster_n_apps(Cluster *c);  /* registered and not removed */
/* Whether a placement pass was asked for (fx.schedule_needed) since the
 * last one began. */
bool cluster_schedule_is_pending(Cluster *c);
/* The held apps' executors by state (ExecutorState as index), live or
 * ended; kept as they change: O(1), for /metrics. */
#define CLUSTER_EXECUTOR_STATES 7
void cluster_executor_counts(Cluster *c, size_t ret[static CLUSTER_EXECUTOR_STATES]);
/* The alive workers' pooled capacity and use, and the workers by state
 * (cluster-pool.h); kept as they change: O(1), for fair share and /metrics. */
const ClusterPool *cluster_pool(Cluster *c);
const char *cluster_id(Cluster *c);

bool executor_state_is_terminal(ExecutorState s);
