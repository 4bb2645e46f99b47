/* spark-driver's manager: one application.  It registers the app with the
 * master, accepts the executors the master starts for it, runs the jobs
 * clients submit (scheduler.h decides what runs where), and notices a lost
 * executor on whichever of these comes first: its socket disconnects, its
 * worker publishes that its unit stopped, the master says it or its worker is
 * lost, or it stops polling for executor_heartbeat_timeout_ms. */
#pragma once

#include <systemd/sd-event.h>

#include "config.h"
#include "driver-allocation.h"
#include "event-sub.h"
#include "executor-secret.h"
#include "hashmap.h"
#include "http-server.h"
#include "json-writer.h"
#include "prom-writer.h"
#include "ids.h"
#include "master-link.h"
#include "rpc-client.h"
#include "rpc-server.h"
#include "scheduler.h"

#define DRIVER_MAX_EXECUTOR_ID 1000000
/* Executors the driver keeps as announced by the master (driver-announced.c):
 * the master places at most max_cores of an app's executors at a time. */
#define DRIVER_MAX_ANNOUNCED 100000
#define DRIVER_MAX_EVENTS_URL 1024
#define DRIVER_MAX_REQUEST_BYTES (256u * 1024u * 1024u)
/* An executor may hold this many tasks beyond its cores at most; how many it
 * gets depends on how fast it finishes them (driver-executors.c). */
#define DRIVER_MAX_PREFETCH 4096

typedef struct DriverExecutor DriverExecutor;
typedef struct DriverJournal DriverJournal;
typedef struct ResultSpill ResultSpill;
typedef struct DriverJob DriverJob;

/* Counters of /metrics: they only grow, across reloads too. */
typedef struct DriverMetrics {
        uint64_t tasks_submitted;
        uint64_t tasks_succeeded;
        uint64_t attempts_failed;      /* failed attempts, executor losses included */
        uint64_t tasks_retried;        /* failed attempts that were retried */
        uint64_t jobs_ended[8];        /* by final JobState */
        uint64_t executors_lost[8];    /* by ExecutorLoss */
        PromHistogram task_seconds;    /* run time of succeeded attempts, on the executor */
        PromHistogram job_seconds;     /* submitted → ended */
} DriverMetrics;

typedef struct DriverEffects DriverEffects;

typedef struct Driver {
        const DriverEffects *effects;  /* driver.c's; see DriverEffects */
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
        /* The newest leader's epoch heard (registration reply, snapshot,
         * events): events and snapshots of an older, deposed leader are
         * ignored (docs/ha.md).  0: none, or a single master. */
        uint64_t master_epoch;

        Scheduler *scheduler;
        RpcServer *server;
        RpcServer *executor_server;   /* executor_listen; NULL: executors use server */
        uint16_t task_channel_port;   /* of the executors' server; 0: none (docs/DESIGN.md §4) */
        RpcClient *master;
        MasterLink master_link;      /* which of cluster.master's masters leads */
        EventSub *master_events;
        Hashmap *worker_events;   /* worker event URL → EventSub */
        bool resync_in_flight;
        bool resync_after_recovery;   /* the last snapshot came from a leader still recovering */
        /* The master's event epoch (a master's life) of the last snapshot
         * that listed our application; 0: none yet. */
        uint64_t app_listed_epoch;
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
        HttpServer *http;             /* NULL: http_listen is "" or its ports were taken */
        char *ui_url;                 /* http's address, registered with the master */
        DriverMetrics metrics;
        DriverJournal *journal;       /* driver.state_dir; NULL: none (driver-journal.h) */
        ResultSpill *spill;           /* results beyond result_memory_mb; NULL until the first (driver-spill.h) */
        bool spill_failed;            /* the spill could not be made or written: said once */
        uint64_t results_in_memory;   /* bytes of results held in memory, against result_memory_mb */

        /* Elastic executors (driver-elastic.c, docs/elastic.md); unused
         * unless driver.dynamic_allocation. */
        Allocation allocation;
        sd_event_source *elastic_timer;
        unsigned elastic_sent;        /* the total last sent in RequestExecutors */
        bool elastic_synced;          /* the master acknowledged elastic_sent */
        bool elastic_in_flight;       /* a RequestExecutors is on its way */

        /* Running tasks per executor, reported to the master
         * (driver-load.c): a fingerprint of the last report, 0: none. */
        uint64_t load_sent;
        bool load_in_flight;
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
        bool draining;                /* its worker drains (driver-drain.c) */
        usec_t drain_released_at;     /* when we asked the master to stop it, idle; 0: not yet */
        usec_t busy_at;               /* when it last got or returned tasks, or registered */
        bool releasing;               /* idle, given back to the master (driver-elastic.c) */
        char lost_reason[256];
        Spark__TaskKill *kills;       /* to send with the next reply; job_id owned */
        size_t n_kills, n_kills_allocated;
};

/* What one part of the driver asks of another that it must not call: the
 * job table (driver-jobs.c) is below the executor sessions
 * (driver-executors.c), which are below the master link (driver-master.c),
 * and a lower part reports what must happen through these; driver.c wires
 * them to the upper parts.  So the files call each other in one direction
 * only (docs/DESIGN.md, "The driver's parts"). */
struct DriverEffects {
        /* Tasks may be ready to run: answer the parked polls. */
        void (*work_ready)(Driver *d);
        /* Kill an attempt of a job (index >= 0) or all of the job's attempts
         * (index -1) on an executor, or on every executor (executor_id -1);
         * queued for the executors' next poll replies. */
        void (*kill)(Driver *d, int executor_id, const char *job_id, int index);
        /* A batch of kills is queued: send them to the parked polls now. */
        void (*kills_queued)(Driver *d);
        /* The master's view of our executors is needed: ask for a snapshot. */
        void (*resync)(Driver *d);
        /* An executor registered: hear its worker's unit-stop events. */
        void (*executor_registered)(Driver *d, int executor_id);
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

/* driver-http.c: /metrics, /api/v1/ and the web UI (docs/observability.md). */
int driver_http_start(Driver *d);
void driver_http_done(Driver *d);

/* driver-elastic.c: elastic executors (docs/elastic.md). */
int driver_elastic_start(Driver *d);
void driver_elastic_reload(Driver *d);
/* Something the policy looks at changed (a job came, the app registered):
 * decide again soon, on the loop. */
void driver_elastic_kick(Driver *d);
void driver_elastic_done(Driver *d);

/* driver-load.c: tells the master its executors' running tasks if they
 * changed since the last report (at most once a second: the status timer). */
void driver_report_load(Driver *d);

/* driver-announced.c */
int driver_announce_executor(Driver *d, int id, const char *worker_id);
void driver_forget_announced(Driver *d, int id);
void driver_forget_all_announced(Driver *d);
const char *driver_announced_worker(const Driver *d, int id);
/* The draining flag of an announced executor, for when it registers. */
void driver_announce_draining(Driver *d, int id, bool draining);
bool driver_announced_draining(const Driver *d, int id);
/* The event endpoint of the worker an announced executor runs on (at most
 * DRIVER_MAX_EVENTS_URL bytes), for when it registers; -ENOENT if id is not
 * announced. */
int driver_announce_worker_events(Driver *d, int id, const char *events_url);
const char *driver_announced_worker_events(const Driver *d, int id);

DEFINE_TRIVIAL_CLEANUP_FUNC(Driver *, driver_free);
