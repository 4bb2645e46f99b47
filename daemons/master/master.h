/* spark-master's manager: the one object that owns the daemon's state and
 * the sockets, all on one sd-event loop. */
#pragma once

#include <systemd/sd-event.h>

#include "cluster.h"
#include "config.h"
#include "event-pub.h"
#include "rpc-client.h"
#include "rpc-server.h"

typedef struct Master {
        sd_event *event;
        char *config_path;
        SparkConfig config;
        Cluster *cluster;
        RpcServer *server;
        EventPub *events;
        LoopQueue *link_queue;           /* completions of every worker and driver link */
        sd_event_source *worker_check;   /* fires at the next worker deadline */
        sd_event_source *status_timer;
        sd_event_source *state_timer;    /* saves the state a moment after a change */
        sd_event_source *placement;      /* places executors in slices, between requests */
        bool placement_waiting;          /* for calls to workers to be answered */
        unsigned worker_calls;           /* calls to workers not answered yet */
        Hashmap *driver_checks;          /* app id -> a driver being asked if it is there */
        bool state_dirty;
        usec_t state_save_cost;          /* how long the last full save took */
        int journal_fd;                  /* state_dir/apps.journal, -1: not open */
        uint64_t journal_seq;            /* the last entry appended (or replayed) */
        char status[256];
} Master;

int master_new(const char *config_path, Master **ret);
Master *master_free(Master *m);
int master_start(Master *m);
int master_run(Master *m);

/* master-requests.c: the request endpoint's dispatch. */
int master_handle_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata);

/* master-snapshot.c: ClusterState and the executor records of events.
 * unit_buf may be NULL: no unit name. */
void executor_info_fill(const Executor *e, Spark__ExecutorInfo *info, char *unit_buf, size_t unit_size);
int master_reply_cluster_state(Master *m, RpcRequest *req, const char *app_id);

/* master-workers.c: the master's side of the worker protocol. */
extern const ClusterEffects master_effects;
void master_schedule_worker_check(Master *m);
/* After a restart: launches that may not have reached a worker are sent again. */
void master_resume_launches(Master *m);

/* master-drivers.c: an executor of app_id could not reach its driver: ask
 * the driver; if it does not answer either, the application is removed. */
void master_check_driver(Master *m, const char *app_id, int executor_id);
void master_drivers_free(Master *m);

/* master-state.c: state_dir/state.pb, and state_dir/apps.journal for the
 * applications registered since it was written. */
int master_state_load(Master *m);
int master_state_save(Master *m);
void master_state_changed(Master *m);
/* On disk before it returns (appended to the journal and synced; a full
 * save if that fails): a new application and the id counter. */
int master_state_app_registered(Master *m, App *a);
void master_state_done(Master *m);

DEFINE_TRIVIAL_CLEANUP_FUNC(Master *, master_free);
