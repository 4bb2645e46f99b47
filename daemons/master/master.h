/* spark-master's manager: the one object that owns the daemon's state and
 * the sockets, all on one sd-event loop. */
#pragma once

#include <systemd/sd-event.h>

#include "cluster.h"
#include "master-ha.h"
#include "config.h"
#include "master-history.h"
#include "event-pub.h"
#include "file-syncer.h"
#include "http-server.h"
#include "prom-writer.h"
#include "rpc-client.h"
#include "rpc-server.h"

/* A launch under way before a restart (ids: by the time it is sent, the
 * executor may be gone). */
typedef struct ResumedLaunch {
        char app_id[APP_ID_MAX];
        int executor_id;
} ResumedLaunch;

/* Counters of /metrics: they only grow, across reloads too. */
typedef struct MasterMetrics {
        uint64_t launches;
        uint64_t executor_ends[8];     /* by final ExecutorState */
        uint64_t apps_removed[8];      /* by final AppState */
        uint64_t workers_lost;
        uint64_t state_saves[2];       /* snapshots written: [0] failed, [1] on disk */
        usec_t state_save_duration;    /* of the last one on disk, its syncs included */
        PromHistogram executor_start;  /* launch sent → running */
} MasterMetrics;

typedef struct ParkedReply ParkedReply;
typedef struct ZkSave ZkSave;

typedef struct Master {
        sd_event *event;
        char *config_path;
        SparkConfig config;
        TlsSettings tls; /* config_tls_for(&config, CONFIG_SECTION_MASTER): the strings are config's */
        Cluster *cluster;
        RpcServer *server;
        EventPub *events;
        LoopQueue *link_queue;           /* completions of every worker and driver link */
        sd_event_source *worker_check;   /* fires at the next worker deadline */
        sd_event_source *status_timer;
        sd_event_source *state_timer;    /* saves the state a moment after a change */
        sd_event_source *placement;      /* places executors in slices, between requests */
        bool placement_waiting;          /* for calls to workers to be answered */
        /* After an election or a restart: the state read may lag the last
         * master's (a save comes a moment after a change, and waits for a
         * gap between requests), so executors it had placed may be
         * missing.  Until the workers of that state
         * have registered again (they report what they run) or
         * worker_timeout_ms has passed, nothing new is placed. */
        usec_t recovery_until;           /* 0: not recovering */
        size_t recovery_expected;        /* workers in the state read */
        Hashmap *recovery_awaited;       /* ids of those not registered since */
        sd_event_source *recovery_timer;
        unsigned worker_calls;           /* calls to workers not answered yet */
        ResumedLaunch *resumed;          /* launches under way before a restart, to send again */
        size_t n_resumed, next_resumed;
        Hashmap *driver_checks;          /* app id -> a driver being asked if it is there */
        History history;                 /* finished apps, lost workers (master-history.h) */
        bool state_dirty;
        usec_t state_dirty_since;        /* the first change the next save is for */
        usec_t last_request;             /* when the loop last took a request (a save waits for a gap) */
        int state_save_error;            /* of the last save, 0: it succeeded */
        usec_t state_save_retry;         /* the wait before the next try, after failures */
        usec_t state_save_cost;          /* the last full save's work, without its syncs */
        usec_t state_fork_pause;         /* how long the last child's fork() stopped the loop */
        pid_t state_child;               /* saving or packing the state (master-state-child.c), 0: none */
        sd_event_source *state_child_source; /* its pipe's read end, which it writes its reply to */
        uint64_t state_child_seq;        /* the last journal entry its snapshot holds */
        void (*state_child_done)(struct Master *m, const void *reply); /* on the loop, when it ends */
        size_t state_child_reply_size;
        int journal_fd;                  /* state_dir/apps.journal, -1: not open */
        FileSyncer *journal_syncer;      /* syncs it off the loop (master-journal-sync.c) */
        ParkedReply *parked_replies, *parked_replies_tail; /* answers waiting for that sync */
        uint64_t journal_seq;            /* the last entry appended (or replayed) */
        unsigned app_numbers_reserved;   /* on disk: app numbers below may be in use */
        bool journal_unsynced;           /* an entry written, not synced yet */
        int journal_error;               /* of that write */
        char status[256];
        HttpServer *http;                /* NULL: http_listen is "" or its ports were taken */
        MasterMetrics metrics;
        MasterHa *ha;                    /* recovery_mode "zookeeper": the election; NULL: filesystem */
        uint64_t zk_state_gen;           /* the last generation a save wrote or tried */
        uint64_t zk_state_meta_gen;      /* the one meta points at, 0: none */
        int zk_state_version;            /* of its meta znode, -1: none yet */
        ZkSave *zk_save;                 /* the timer's save under way (master-zk-save-async.c) */
        uint8_t *zk_journal_entry;       /* packed, for master_state_sync() to create; NULL: none */
        size_t zk_journal_entry_len;
        uint64_t zk_journal_entry_seq;
} Master;

int master_new(const char *config_path, Master **ret);
Master *master_free(Master *m);
int master_start(Master *m);
int master_run(Master *m);

/* master-requests.c: the request endpoint's dispatch. */
int master_handle_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata);

/* master-roles.c: who may send what (docs/security.md). */
uint32_t master_required_roles(const Envelope *env, void *userdata);
/* For a request about app_id from a driver: 0 if that driver registered
 * the app (or no driver is bound to it), else answers EPERM and returns
 * -EPERM. */
int master_check_app_driver(Master *m, RpcRequest *req, const char *app_id);
/* Binds a to the driver that sent req (a TLS peer); -EPERM (answered) if
 * another driver registered it. */
int master_bind_app_driver(Master *m, RpcRequest *req, App *a);
/* The audit trail: logs a request that changes state with SPARK_PEER=. */
void master_audit(Master *m, RpcRequest *req, const Envelope *env);

/* master-snapshot.c: ClusterState and the executor records of events.
 * unit_buf may be NULL: no unit name. */
void executor_info_fill(const ClusterExecutor *e, Spark__ExecutorInfo *info, char *unit_buf, size_t unit_size);
/* Strings point into a; its fair share as c gives it (cluster_app_fair_view()). */
void app_info_fill(Cluster *c, const App *a, Spark__AppInfo *ai);
/* all: the history too (master-history.h). */
int master_reply_cluster_state(Master *m, RpcRequest *req, const char *app_id, bool all);
/* The ClusterState of app_id (NULL or "": every app), pointing into the
 * cluster's objects: used before the loop goes on. */
typedef struct MasterSnapshot {
        Spark__ClusterState state;
        Spark__WorkerInfo *workers;
        Spark__WorkerInfo **worker_ptrs;
        Spark__AppInfo *apps;
        Spark__AppInfo **app_ptrs;
        Spark__ExecutorInfo *executors;
        Spark__ExecutorInfo **executor_ptrs;
        char (*units)[UNIT_NAME_MAX];
        char (*waiting)[256];    /* each live app's waiting_reason */
        Worker **live_workers;
        Spark__AppInfo **history_apps;
        size_t n_history_apps;
        Spark__WorkerInfo **history_workers;
        size_t n_history_workers;
} MasterSnapshot;
/* all: the history too, after the live ones. */
int master_snapshot_build(Master *m, const char *app_id, bool all, MasterSnapshot *ret);
void master_snapshot_done(MasterSnapshot *s);

/* master-accounting.c: the history of finished apps and lost workers, and
 * the chargeback line of each app (what its executors used). */
void master_account_app_removed(Master *m, App *a);
void master_account_worker_lost(Master *m, Worker *w, const char *reason);
/* An executor's end as its worker reported it: its use goes to its app,
 * live or in the history. */
void master_account_executor_end(Master *m, const Spark__ExecutorStateChanged *sc);
void master_account_trim(Master *m);

/* master-workers.c: the master's side of the worker protocol. */
extern const ClusterEffects master_effects;
void master_schedule_worker_check(Master *m);
/* A worker (re)registered at now: the worker check is armed for it, without
 * a walk of every worker when one is armed early enough already. */
void master_worker_registered(Master *m, const char *worker_id, usec_t now);
/* The recovery after an election or a restart (recovery_until above). */
void master_recovery_start(Master *m);
void master_recovery_end(Master *m);
/* Every worker gets worker_timeout_ms from now to be heard from (a leader
 * that sent them on while it had no ZooKeeper connection). */
void master_workers_recovering(Master *m);
/* Places up to max_launches executors now (within the limit of calls in
 * flight); the placement source does the rest. */
void master_place_now(Master *m, unsigned max_launches);
/* After a restart: launches that may not have reached a worker are sent
 * again, by the placement source, first and within the same limit of calls
 * in flight; then placement goes on. */
void master_resume_launches(Master *m);
/* Places executors (and resumes launches) from the loop, in slices. */
void master_place_soon(Master *m);

/* master-http.c: /metrics, /api/v1/ and the web UI (docs/observability.md). */
int master_http_start(Master *m);
void master_http_done(Master *m);

/* master-drivers.c: an executor of app_id could not reach its driver: ask
 * the driver; if it does not answer either, the application is removed. */
void master_check_driver(Master *m, const char *app_id, int executor_id);
/* A driver registered again under its app's id (with its key): its
 * endpoints are now these (a restarted driver's task channel has another
 * port); a pending check of it is over. */
int master_app_driver_moved(Master *m, App *a, const char *driver_url, const char *driver_events,
                            uint32_t channel_port);
void master_drivers_free(Master *m);

/* master-state.c: state_dir/state.pb, and state_dir/apps.journal for the
 * applications registered since it was written. */
int master_state_load(Master *m);
int master_state_save(Master *m);
void master_state_changed(Master *m);
/* The delay from a change to the save that holds it, after a save whose
 * work (without its syncs) took cost: 50 ms, or 100 times that cost, at
 * most 10 s. */
usec_t master_state_save_delay(usec_t cost);
/* 0 when a save that fell due (at due) may start at now, else how long it
 * waits for a gap between requests (the last at last_request) of 10 times
 * the last fork's pause (5 to 200 ms): at most 1,000 times the pause past
 * due, and at least 2 s, at most 10 s. */
usec_t master_state_save_wait(usec_t now, usec_t last_request, usec_t due, usec_t fork_pause);
/* A new application and the id counter: master_state_app_registered()
 * writes its journal entry (it survives a crash of the master, not yet one
 * of the host), master_state_sync() puts it on disk (a full save if either
 * failed).  Its first launches may go out in between. */
int master_state_app_registered(Master *m, App *a);
int master_state_sync(Master *m);
/* Before a new app number is handed out: the numbers up to it are reserved
 * on disk (in blocks), for a restart after the host went down with an
 * app's entry not yet on disk but its id already at a worker. */
int master_state_reserve_app_number(Master *m);
void master_state_done(Master *m);
/* The whole snapshot as one buffer, and back: for the ZooKeeper backend.
 * Restoring returns -EBADMSG for bytes that are not a snapshot of ours. */
/* What writing state.pb did: counts, its work without the syncs (cost),
 * and on failure what failed. */
typedef struct StateWritten {
        int error;
        size_t n_apps, n_workers, n_executors;
        usec_t cost, duration;
        char failed[512];
} StateWritten;
int master_state_write_file(Master *m, StateWritten *w);
void master_state_child_done(Master *m, const StateWritten *w, uint64_t seq);
/* The timer's save in ZooKeeper ended: r < 0 if it failed. */
void master_state_async_done(Master *m, int r);

/* master-state-child.c: the timer's save in a child process, which works
 * on a copy-on-write view of the state while the loop goes on.  work runs
 * in the child with given_fd (-1: none) and fills reply (zeroed, at most
 * STATE_CHILD_REPLY_MAX bytes); done runs on the loop with the reply, or
 * NULL if the child ended without one.  _start() writes state.pb. */
#define STATE_CHILD_REPLY_MAX 1024
typedef void (*StateChildWork)(Master *m, int given_fd, void *reply);
typedef void (*StateChildDone)(Master *m, const void *reply);
int master_state_child_run(Master *m, StateChildWork work, size_t reply_size, int given_fd, StateChildDone done);
int master_state_child_start(Master *m);
void master_state_child_stop(Master *m);

/* master-journal-sync.c: RegisterApplication's reply, sent once the
 * application's journal entry is on disk; the loop goes on meanwhile. */
int master_state_sync_then_reply(Master *m, RpcRequest *req, Envelope *env);
void master_journal_sync_done(Master *m);

int master_state_pack(Master *m, uint8_t **ret, size_t *ret_len, size_t *ret_executors);
/* The journal entries both backends keep: the next one packed (an app, or
 * NULL for the app-number counters) after room bytes of header, and one
 * read back applied over the snapshot (1: it restored an application). */
int master_state_journal_entry(Master *m, App *a, size_t room, uint8_t **ret, size_t *ret_len, uint64_t *ret_seq);
int master_state_journal_apply(Master *m, const Spark__StateJournalEntry *entry, usec_t now, bool *same_boot);
int master_state_restore_packed(Master *m, const uint8_t *buf, size_t len, size_t *ret_apps, size_t *ret_executors);

/* master-zk-state.c: the same state in znodes under zookeeper_dir/state
 * (docs/ha.md), with master.recovery_mode = "zookeeper". */
int master_zk_state_save(Master *m);
/* The application's journal znode created asynchronously, then reply (len
 * bytes, taken over) sent; -EAGAIN: not possible now, reply not taken. */
int master_zk_journal_sync_then_reply(Master *m, RpcRequest *req, uint8_t *reply, size_t len);
int master_zk_state_load(Master *m);
/* A new application (or NULL: the app-number counters) as a journal znode:
 * built by master_zk_journal_add(), created by master_zk_journal_sync()
 * (a full save if it cannot be). */
int master_zk_journal_add(Master *m, App *a);
int master_zk_journal_sync(Master *m);

/* master-zk-save-async.c: the timer's full save in ZooKeeper, step by step
 * from the loop; master_state_async_done() when it ends.  _stop() ends one
 * under way (waiting for its write of meta, if that is in flight). */
int master_zk_save_async_start(Master *m);
void master_zk_save_async_stop(Master *m);

DEFINE_TRIVIAL_CLEANUP_FUNC(Master *, master_free);
