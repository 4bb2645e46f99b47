/* spark-worker's manager: one per host.  It starts executors as transient
 * units (executor-unit.h), reports every state change to the master
 * (reliably: retried until acknowledged) and publishes it as an event (the
 * unit-stop signal drivers listen for). */
#pragma once

#include <limits.h>

#include <systemd/sd-event.h>

#include "config.h"
#include "event-pub.h"
#include "executor-secret.h"
#include "executor-unit.h"
#include "resources.h"
#include "http-server.h"
#include "hashmap.h"
#include "time-util.h"
#include "master-link.h"
#include "rpc-client.h"
#include "rpc-server.h"

typedef struct LocalExecutor LocalExecutor;

typedef struct WorkerManager {
        sd_event *event;
        char *config_path;
        SparkConfig config;
        TlsSettings tls; /* config_tls_for(&config, CONFIG_SECTION_WORKER): the strings are config's */
        char id[WORKER_ID_MAX];
        char host[256];
        char *endpoint;          /* advertised request endpoint */
        char *events_endpoint;   /* advertised event endpoint */
        int cores;
        int64_t memory_mb;

        UnitManager *units;
        RpcServer *server;
        EventPub *events;
        RpcClient *master;
        MasterLink master_link;  /* which of cluster.master's masters leads */

        Hashmap *executors;      /* "APP/EXEC" → LocalExecutor */
        bool adopted;            /* units listed after start */
        bool registered;
        bool registering;
        bool heartbeat_in_flight;
        sd_event_source *heartbeat_timer;
        sd_event_source *retry_timer;   /* re-sends unacknowledged reports */
        sd_event_source *status_timer;  /* STATUS= for systemctl status */
        sd_event_source *work_dir_timer; /* worker-work-dirs.c */
        char master_id[64];
        uint64_t master_epoch;   /* the newest leader's epoch seen (docs/ha.md); 0: none */
        char *epoch_path;        /* where master_epoch is kept across restarts (worker-epoch.c) */
        char secrets_dir[PATH_MAX - 256]; /* worker-secrets.c; "" until set up */
        HttpServer *http;               /* NULL: http_listen is "" or its ports were taken */
        char *ui_url;                   /* http's address, registered with the master */
        ResourceSet *resources;         /* worker-resources.c: what it offers, found at start */
        size_t n_resources;
        Spark__ResourceAddresses *resources_wire, **resources_wire_ptrs; /* for RegisterWorker */
} WorkerManager;

/* worker-requests.c: a command of a leader older than one we have heard
 * from changes nothing (fencing, docs/ha.md): -ESTALE, answered. */
int worker_check_master_epoch(WorkerManager *w, RpcRequest *req, uint64_t epoch);

/* worker-epoch.c: master_epoch, read at start from path (a file that is
 * not an epoch file: -EINVAL, logged) and saved there whenever it grows. */
int worker_load_master_epoch(WorkerManager *w, const char *path);
void worker_raise_master_epoch(WorkerManager *w, uint64_t epoch);

struct LocalExecutor {
        char key[APP_ID_MAX + 16];
        char app_id[APP_ID_MAX];
        int executor_id;
        int cores;
        int64_t memory_mb;
        Spark__ExecutorState state;
        char reason[256];
        int exit_code;
        int64_t pid;
        bool report_pending;     /* master has not acknowledged state */
        bool report_in_flight;
        /* Sampled once a second by worker-usage.c: the unit's CPUUsageNSec
         * and MemoryCurrent at the last sample (UINT64_MAX: not known, or no
         * accounting), for /metrics; and for the chargeback, the CPU time
         * (from the unit, or its processes without accounting) and the
         * highest memory seen. */
        uint64_t cpu_nsec;
        uint64_t memory_bytes;
        uint64_t cpu_usage_ns;
        uint64_t memory_peak_bytes;
};

int worker_new(const char *config_path, WorkerManager **ret);
WorkerManager *worker_free(WorkerManager *w);
int worker_start(WorkerManager *w);

/* worker-http.c: /metrics, /api/v1/ and the web UI (docs/observability.md). */
int worker_http_start(WorkerManager *w);
void worker_http_done(WorkerManager *w);

/* worker-executors.c */
LocalExecutor *worker_executor(WorkerManager *w, const char *app_id, int executor_id);
/* The ExecutorStateChanged of e, for the master and for subscribers; its
 * strings point into e, w and unit. */
void worker_executor_state_fill(WorkerManager *w, const LocalExecutor *e, char unit[static UNIT_NAME_MAX],
                                Spark__ExecutorStateChanged *sc);
/* The ExecutorInfo of e as the worker knows it (id, state, cores, memory);
 * its strings point into e. */
void worker_executor_info_fill(const LocalExecutor *e, Spark__ExecutorInfo *info);
int worker_executor_add(WorkerManager *w, const char *app_id, int executor_id, int cores, int64_t memory_mb,
                        Spark__ExecutorState state, LocalExecutor **ret);
void worker_executor_set_state(WorkerManager *w, LocalExecutor *e, Spark__ExecutorState state, const char *reason,
                               int exit_code, int64_t pid);
void worker_executor_forget(WorkerManager *w, LocalExecutor *e);
void worker_on_unit_state(UnitManager *m, const char *app_id, int executor_id, const UnitOutcome *o, void *userdata);

/* worker-usage.c: samples the running executors' units (every second) */
void worker_sample_usage(WorkerManager *w);
/* worker-usage.c: at an executor's end, what it wrote from getrusage() */
void worker_read_exit_usage(WorkerManager *w, LocalExecutor *e);

/* worker-master.c: registration, heartbeats, state reports */
void worker_register(WorkerManager *w);
void worker_report(WorkerManager *w, LocalExecutor *e);
int worker_start_heartbeats(WorkerManager *w);

/* worker-work-dirs.c: finished applications' work dirs are removed after
 * worker.work_dir_retention_s; an executor that ends restarts its app's clock. */
int worker_work_dirs_start(WorkerManager *w);
void worker_work_dir_touch(WorkerManager *w, const char *app_id);

/* worker-resources.c: worker.resources, static or found by their discovery
 * scripts (run once, here, bounded in time and output); a resource whose
 * script fails is logged and not offered.  -ENOMEM only. */
int worker_resources_load(WorkerManager *w);
void worker_resources_done(WorkerManager *w);
/* The environment (SPARK_RESOURCE_<NAME>=a,b) and device nodes of the
 * addresses a LaunchExecutor gives, each checked against what this worker
 * offers; -EINVAL with the reason in why. */
int worker_resources_for_launch(WorkerManager *w, const Spark__LaunchExecutor *le, char ***ret_env,
                                char ***ret_devices, char *why, size_t size);

/* worker-logs.c: ExecutorLogRequest, from this host's journal */
int worker_handle_logs(WorkerManager *w, RpcRequest *req, const Spark__ExecutorLogRequest *lr);

/* worker-requests.c */
uint32_t worker_required_roles(const Envelope *env, void *userdata);
int worker_handle_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata);

DEFINE_TRIVIAL_CLEANUP_FUNC(WorkerManager *, worker_free);

/* worker-secrets.c: each executor's secret, in a root-only file that
 * systemd hands to its unit (LoadCredential=). */
int worker_secrets_init(WorkerManager *w);
/* Writes the secret of app_id/executor_id under key (which must have
 * EXECUTOR_KEY_SIZE bytes, else -EINVAL); its path lands in path. */
int worker_secret_write(WorkerManager *w, const char *app_id, int executor_id, const uint8_t *key, size_t key_len,
                        char *path, size_t size);
void worker_secret_remove(WorkerManager *w, const char *app_id, int executor_id);
/* Removes every secret but those of units (the alive ones, listed at start). */
void worker_secrets_clean(WorkerManager *w, const AdoptedUnit *units, size_t n);
