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
        char master_id[64];
        uint64_t master_epoch;   /* the newest leader's epoch seen (docs/ha.md); 0: none */
        char secrets_dir[PATH_MAX - 256]; /* worker-secrets.c; "" until set up */
} WorkerManager;

/* worker-requests.c: a command of a leader older than one we have heard
 * from changes nothing (fencing, docs/ha.md): -ESTALE, answered. */
int worker_check_master_epoch(WorkerManager *w, RpcRequest *req, uint64_t epoch);

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
};

int worker_new(const char *config_path, WorkerManager **ret);
WorkerManager *worker_free(WorkerManager *w);
int worker_start(WorkerManager *w);

/* worker-executors.c */
LocalExecutor *worker_executor(WorkerManager *w, const char *app_id, int executor_id);
int worker_executor_add(WorkerManager *w, const char *app_id, int executor_id, int cores, int64_t memory_mb,
                        Spark__ExecutorState state, LocalExecutor **ret);
void worker_executor_set_state(WorkerManager *w, LocalExecutor *e, Spark__ExecutorState state, const char *reason,
                               int exit_code, int64_t pid);
void worker_executor_forget(WorkerManager *w, LocalExecutor *e);
void worker_on_unit_state(UnitManager *m, const char *app_id, int executor_id, const UnitOutcome *o, void *userdata);

/* worker-master.c: registration, heartbeats, state reports */
void worker_register(WorkerManager *w);
void worker_report(WorkerManager *w, LocalExecutor *e);
int worker_start_heartbeats(WorkerManager *w);

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
