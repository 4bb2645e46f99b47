/* spark-driver's manager: one application.  It registers the app with the
 * master, accepts the executors the master starts for it, runs the jobs
 * clients submit (scheduler.h decides what runs where), and notices a lost
 * executor on whichever of these comes first: its socket disconnects, its
 * worker publishes that its unit stopped, the master says it or its worker is
 * lost, or it stops polling for executor_heartbeat_timeout_ms. */
#pragma once

#include <systemd/sd-event.h>

#include "config.h"
#include "event-sub.h"
#include "executor-secret.h"
#include "hashmap.h"
#include "ids.h"
#include "master-link.h"
#include "rpc-client.h"
#include "rpc-server.h"
#include "scheduler.h"

#define DRIVER_MAX_EXECUTOR_ID 1000000
/* Executors the driver keeps as announced by the master (driver-announced.c):
 * the master places at most max_cores of an app's executors at a time. */
#define DRIVER_MAX_ANNOUNCED 100000
#define DRIVER_MAX_REQUEST_BYTES (256u * 1024u * 1024u)
/* An executor may hold this many tasks beyond its cores at most; how many it
 * gets depends on how fast it finishes them (driver-executors.c). */
#define DRIVER_MAX_PREFETCH 4096

typedef struct DriverExecutor DriverExecutor;
typedef struct DriverJob DriverJob;

typedef struct Driver {
        sd_event *event;
        char *config_path;
        SparkConfig config;
        TlsSettings tls; /* config_tls_for(&config, CONFIG_SECTION_DRIVER): the strings are config's */
        char *url;                /* advertised request endpoint, given to executors */
        char app_id[APP_ID_MAX];
        /* The key of our executors' secrets: made at start, sent to the
         * master only (RegisterApplication), the same when we register
         * again after a master restart. */
        uint8_t executor_key[EXECUTOR_KEY_SIZE];
        bool registered;
        bool registering;

        Scheduler *scheduler;
        RpcServer *server;
        RpcServer *executor_server;   /* executor_listen; NULL: executors use server */
        RpcClient *master;
        MasterLink master_link;      /* which of cluster.master's masters leads */
        EventSub *master_events;
        Hashmap *worker_events;   /* worker event URL → EventSub */
        bool resync_in_flight;
        usec_t last_unknown_resync;   /* a registration under an unknown id asked for a snapshot */
        Hashmap *announced;           /* executor id → the worker the master started it on */

        DriverExecutor **executors;   /* indexed by executor id */
        size_t n_executors_allocated;
        size_t n_live_executors;
        Hashmap *pipes;               /* "pipe id" → DriverExecutor (socket disconnects) */

        Hashmap *jobs;                /* job id → DriverJob */
        DriverJob *jobs_head, *jobs_tail;  /* submission order, for eviction and listing */
        size_t n_jobs;
        unsigned next_job_number;
        Hashmap *submissions;         /* request id → DriverJob (resent submits) */
        Hashmap *libraries;           /* sha256 hex → DriverLibrary */
        void *last_library;           /* the DriverLibrary submitted last */

        sd_event_source *revive_timer;     /* delay scheduling */
        sd_event_source *heartbeat_timer;  /* frozen executors */
        sd_event_source *register_timer;   /* registration with the master */
        sd_event_source *status_timer;     /* STATUS= for systemctl status */
        usec_t heartbeat_timeout;
        int poll_interval_ms;              /* how long a poll is parked at most */
        char status[256];
        int exit_status;
} Driver;

/* How an executor was found lost; it decides whether its unit must be
 * stopped on purpose. */
typedef enum ExecutorLoss {
        EXECUTOR_LOSS_DISCONNECT,    /* its socket closed */
        EXECUTOR_LOSS_HEARTBEAT,     /* no poll for executor_heartbeat_timeout_ms */
        EXECUTOR_LOSS_UNIT_STOPPED,  /* its worker published that its unit stopped */
        EXECUTOR_LOSS_MASTER,        /* the master reports it ended */
        EXECUTOR_LOSS_WORKER_LOST,   /* the master lost its worker */
        EXECUTOR_LOSS_SNAPSHOT,      /* not alive in the master's snapshot */
} ExecutorLoss;

struct DriverExecutor {
        Driver *driver;
        int id;
        char host[256];
        char worker_id[WORKER_ID_MAX];
        int cores;
        int64_t pid;
        uint8_t secret[EXECUTOR_SECRET_SIZE];  /* what its every poll must carry */
        uint32_t pipe_id;
        char pipe_key[16];
        usec_t last_poll;
        usec_t last_results_at;
        double task_rate;             /* results per second, smoothed */
        int prefetch;                 /* tasks it may hold beyond its cores, adapted */
        RpcRequest *parked;           /* a poll waiting for work */
        sd_event_source *park_timer;
        sd_event_source *stop_timer;  /* after a disconnect: stop the unit unless it stopped */
        bool lost;
        bool unit_ended;              /* its unit is known to have stopped */
        char lost_reason[256];
        Spark__TaskKill *kills;       /* to send with the next reply; job_id owned */
        size_t n_kills, n_kills_allocated;
};

int driver_new(const char *config_path, Driver **ret);
Driver *driver_free(Driver *d);
int driver_start(Driver *d);
void driver_unregister(Driver *d);

/* driver-secret.c */
int driver_executor_key_init(Driver *d);
/* Whether given is the secret of executor_id (ex: that executor, if it is
 * registered, or NULL); logs the refusal (what: "registration", "poll")
 * with SPARK_MESSAGE_EXECUTOR_REFUSED.  The caller answers EPERM. */
bool driver_executor_secret_ok(Driver *d, const DriverExecutor *ex, int executor_id, const ProtobufCBinaryData *given,
                               const char *what);
/* Computes ex's secret into ex->secret (ex->id set). */
int driver_executor_secret_set(Driver *d, DriverExecutor *ex);

/* driver-requests.c */
uint32_t driver_required_roles(const Envelope *env, void *userdata);
int driver_handle_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata);
int driver_handle_executor_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata);

/* driver-executors.c */
int driver_register_executor(Driver *d, RpcRequest *req, const Spark__RegisterExecutor *re);
int driver_poll(Driver *d, RpcRequest *req, const Spark__Poll *poll);
DriverExecutor *driver_executor(Driver *d, int id);
void driver_executor_lost(Driver *d, DriverExecutor *ex, ExecutorLoss kind, const char *reason);
void driver_on_pipe(RpcServer *s, uint32_t pipe_id, bool added, void *userdata);
void driver_wake_parked(Driver *d);
void driver_arm_revive(Driver *d);
int driver_start_heartbeat_checks(Driver *d);
/* Queues a TaskKill for the executor's next poll reply; driver_send_kills()
 * then sends it at once if that poll is parked. */
void driver_queue_kill(Driver *d, int executor_id, const char *job_id, int index);
/* Answers the parked poll of every executor with kills queued, once per
 * batch of kills: a cancel must not wait for the poll interval. */
void driver_send_kills(Driver *d);
void driver_executors_free(Driver *d);

/* driver-jobs.c */
int driver_submit_job(Driver *d, RpcRequest *req, const Spark__SubmitJob *sj);
int driver_job_status(Driver *d, RpcRequest *req, const char *job_id);
int driver_list_jobs(Driver *d, RpcRequest *req);
int driver_fetch_results(Driver *d, RpcRequest *req, const Spark__FetchResults *fr);
int driver_cancel_job(Driver *d, RpcRequest *req, const char *job_id);
int driver_fetch_library(Driver *d, RpcRequest *req, const char *hash);
/* Fills a TaskLaunch for an assignment; strings and bytes point into the job. */
void driver_task_launch_fill(Driver *d, const TaskAssignment *a, Spark__TaskLaunch *tl);
/* Why a result cannot be one of its job's (fills buf), or NULL: fine, or
 * its job is gone.  A poll is refused whole if any of its results is bad. */
const char *driver_task_result_check(Driver *d, const Spark__TaskResult *r, char *buf, size_t size);
/* A result from an executor; the job's bookkeeping and the scheduler's. */
void driver_task_result(Driver *d, DriverExecutor *ex, const Spark__TaskResult *r, usec_t now);
/* Handles jobs that ended: kills their leftover attempts, logs. */
void driver_drain_finished_jobs(Driver *d);
void driver_jobs_free(Driver *d);

/* driver-master.c */
void driver_register_app(Driver *d);
int driver_subscribe_master(Driver *d);
void driver_subscribe_worker(Driver *d, const char *events_url);
/* asks the master for a snapshot of the app, unless one is on its way */
void driver_request_snapshot(Driver *d);

/* driver-announced.c */
int driver_announce_executor(Driver *d, int id, const char *worker_id);
void driver_forget_announced(Driver *d, int id);
void driver_forget_all_announced(Driver *d);
const char *driver_announced_worker(const Driver *d, int id);

DEFINE_TRIVIAL_CLEANUP_FUNC(Driver *, driver_free);
