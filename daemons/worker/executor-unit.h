/* Executors as transient systemd units (docs/DESIGN.md §5).
 *
 * A UnitManager owns one sd-bus connection (the system bus, or the user bus
 * for unprivileged clusters), attached to the daemon's sd-event loop.  It
 * starts each executor with StartTransientUnit, watches the unit through
 * systemd's signals (JobRemoved and the unit's PropertiesChanged, matched
 * before the start call), and reports every state change once through one
 * handler: RUNNING when the unit is active (with the main pid), then exactly
 * one terminal state (EXITED, FAILED or KILLED with a precise reason, see
 * unit-outcome.h), after which the unit is no longer watched.  Every bus call
 * is asynchronous; nothing here blocks the loop except the creation of the
 * executor's working directory.
 *
 * Executors outlive the worker: unit_manager_list() finds the running
 * spark-executor-* units after a restart and watches them again.
 *
 * When the bus connection is lost the loop is asked to exit (systemd then
 * restarts the worker, which re-adopts its executors): signals missed while
 * disconnected cannot be recovered otherwise. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ids.h"
#include "spark.pb-c.h"
#include "tls.h"
#include "unit-outcome.h"

#define EXECUTOR_DRIVER_URL_MAX 512

typedef struct UnitManager UnitManager;

typedef struct ExecutorUnitSpec {
        const char *app_id;              /* app-YYYYMMDDHHMMSS-NNNN */
        int executor_id;                 /* >= 0 */
        const char *worker_id;           /* worker-… */
        int cores;                       /* >= 1: CPUQuota (cores × 100%) and CPUWeight */
        int64_t memory_mb;               /* >= 1: MemoryMax */
        const char *driver_url;          /* the driver's request endpoint */
        unsigned driver_channel_port;    /* its task channel, 1..65535; 0: none */
        const char *const *env;          /* "KEY=VALUE": the app's executor_env */
        size_t n_env;
        /* The executor's credentials, read by systemd (LoadCredential=): its
         * secret, in a file only root can read (worker-secrets.c), and on a
         * TLS cluster the CA that verifies the driver (NULL: none). */
        const char *secret_file;         /* absolute */
        const char *ca_file;             /* absolute, or NULL */
        const char *executor_binary;     /* absolute path */
        const char *work_dir;            /* absolute; the unit runs in WORK_DIR/<app>/<exec> */
        const char *slice;               /* e.g. "spark-executors.slice"; NULL: the manager's default */
        const char *user;                /* system bus: User=, or "dynamic"; ignored on the user bus */
        const char *const *properties;   /* "Name=value": worker.executor_properties (exec-property.h) */
        size_t n_properties;
        const char *const *hidden_paths; /* InaccessiblePaths=: keys and daemons' state the executor must not see */
        size_t n_hidden_paths;
        /* The named resources it was given (docs/resources.md):
         * "SPARK_RESOURCE_<NAME>=a,b" entries of its environment, and the
         * device nodes of those addresses, each a DeviceAllow= rw on top of
         * the sandbox's DevicePolicy=closed. */
        const char *const *resource_env;
        size_t n_resource_env;
        const char *const *devices;
        size_t n_devices;
} ExecutorUnitSpec;

/* A running executor unit found by unit_manager_list(). */
typedef struct AdoptedUnit {
        char app_id[APP_ID_MAX + 1];
        int executor_id;
        char unit[UNIT_NAME_MAX];
        char active_state[UNIT_STATE_STRING_MAX];
        int64_t pid;                     /* MainPID, 0 if none */
        /* From the unit's Environment ("" / 0 when it does not say). */
        char worker_id[WORKER_ID_MAX];
        char driver_url[EXECUTOR_DRIVER_URL_MAX];
        int cores;
        int64_t memory_mb;
} AdoptedUnit;

/* Called for every state change of a watched unit: RUNNING once (not for
 * adopted units that unit_manager_list() reported active), then one
 * terminal state.  The handler may call unit_manager_start(),
 * unit_manager_stop() and unit_manager_list(), but must not free the
 * manager. */
typedef void (*ExecutorUnitStateHandler)(UnitManager *m, const char *app_id, int executor_id,
                                         const UnitOutcome *o, void *userdata);

/* error < 0: listing failed and units is empty.  units[] is valid only
 * during the call. */
typedef void (*UnitListHandler)(UnitManager *m, int error, const AdoptedUnit *units, size_t n,
                                void *userdata);

/* Connects to the system bus (or the user bus: $XDG_RUNTIME_DIR/bus),
 * attaches to e, subscribes to the manager's signals.  Returns a negative
 * errno if the bus cannot be reached. */
int unit_manager_new(sd_event *e, bool user_bus, ExecutorUnitStateHandler cb, void *userdata,
                     UnitManager **ret);
/* Forgets every unit (they keep running) and drops calls in flight: no
 * handler runs after this.  Queued calls are flushed, but systemd refuses a
 * call whose sender is gone by the time it handles it, so a start or stop
 * made just before may not take effect.  NULL-safe. */
UnitManager *unit_manager_free(UnitManager *m);
/* The manager's bus connection, for reading units' properties (NULL-safe). */
sd_bus *unit_manager_bus(UnitManager *m);

/* Creates the working directory and starts the unit; the outcome arrives
 * through the state handler, and a start that systemd refuses is a FAILED
 * "start failed: …" outcome too.  Returns
 *   -EINVAL  an invalid spec (executor_unit_spec_validate() says why)
 *   -EEXIST  this manager already watches that executor's unit
 *   other negative errnos when the working directory cannot be made. */
int unit_manager_start(UnitManager *m, const ExecutorUnitSpec *spec);

/* Stops the unit (StopUnit, mode "replace": SIGTERM to its whole cgroup,
 * SIGKILL after 10 s).  Returns 1 when the unit is watched: its outcome
 * follows as KILLED "stopped on request[: REASON]", whatever the process
 * does on SIGTERM (or the outcome it had already come to, when a listing's
 * handler is still due).  Returns 0 when it is not watched
 * (the stop is still sent, and no outcome follows); -EINVAL for bad ids. */
int unit_manager_stop(UnitManager *m, const char *app_id, int executor_id, const char *reason);

/* Lists the spark-executor-* units that are alive (activating, active,
 * reloading, deactivating), watches each of them, reads their state, and
 * calls cb once with those still there.  Every listed unit that has ended
 * since, or ends later, gets one terminal state through the state handler,
 * after cb.  Units this manager already watches are listed as they are. */
int unit_manager_list(UnitManager *m, UnitListHandler cb, void *userdata);

/* Number of units being watched. */
size_t unit_manager_watched(UnitManager *m);
