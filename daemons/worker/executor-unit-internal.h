/* Shared between executor-unit.c (starting, stopping and watching units)
 * and executor-unit-list.c (finding and re-adopting them after a restart). */
#pragma once

#include <systemd/sd-bus.h>

#include "executor-unit.h"

#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"
#define SYSTEMD_UNIT_PATH_PREFIX "/org/freedesktop/systemd1/unit"

typedef struct UnitListRequest UnitListRequest;

/* One watched executor unit.  Its life: created by a start or a listing,
 * fed by signals and replies, ended by exactly one terminal outcome (or by
 * the manager's end), then freed.  The state that decides when it has
 * ended:
 *   start_pending  the start job has not been removed yet: an "inactive"
 *                  now is the unit before it ran, not its end
 *   started        the start job is gone (or the unit was adopted running)
 *   seen_live      systemd has shown it activating/active/deactivating */
typedef struct Unit {
        UnitManager *manager;
        struct Unit *prev, *next;

        char name[UNIT_NAME_MAX];
        char app_id[APP_ID_MAX + 1];
        int executor_id;
        char *path;                      /* its D-Bus object path */

        sd_bus_slot *match_slot;         /* PropertiesChanged on path */
        sd_bus_message *start_msg;       /* StartTransientUnit waiting its turn */
        struct Unit *start_queue_next;
        sd_bus_slot *start_slot;         /* StartTransientUnit in flight */
        sd_bus_slot *stop_slot;          /* StopUnit in flight */
        sd_bus_slot *get_slot;           /* GetAll in flight (adoption) */

        char *start_job;                 /* the start job's object path */
        bool start_pending;
        bool started;
        bool seen_live;
        bool running_reported;
        bool stop_requested;
        char *stop_reason;
        char *start_error;
        char start_job_result[UNIT_STATE_STRING_MAX];

        UnitStatus status;

        /* Adoption: the listing this unit was found by, while that listing
         * is in flight (outcomes wait for its handler), and what its
         * properties told us. */
        UnitListRequest *listing;
        bool state_read;                 /* GetAll answered with a loaded unit */
        bool vanished;                   /* GetAll found nothing: it ended unseen */
        bool ended;                      /* outcome decided, waiting for the listing */
        UnitOutcome pending_outcome;
        AdoptedUnit info;
} Unit;

struct UnitManager {
        sd_event *event;
        sd_bus *bus;
        bool system_bus;
        ExecutorUnitStateHandler cb;
        void *userdata;

        sd_bus_slot *job_removed_slot;
        sd_bus_slot *subscribe_slot;

        Unit *units;                     /* doubly linked */
        size_t n_units;

        /* One StartTransientUnit in flight at a time, the others wait here
         * in order.  systemd runs its jobs only once no bus message is
         * waiting, so a burst of starts would hold back every executor's
         * fork until the last start is queued; one at a time, the first
         * executor forks while the next start is on its way. */
        Unit *start_queue_head, *start_queue_tail;
        Unit *start_in_flight;
        bool closing;
        UnitListRequest *listings;
};

Unit *unit_find(UnitManager *m, const char *name);
int unit_new(UnitManager *m, const char *name, const char *app_id, int executor_id, Unit **ret);
Unit *unit_free(Unit *u);
/* Installs the PropertiesChanged match for u (before anything that could
 * change its state is asked of systemd). */
int unit_watch(Unit *u);
/* Folds an a{sv} of Unit/Service properties (a PropertiesChanged payload or
 * a GetAll reply) into u->status (and u->info for adopted units). */
int unit_read_properties(Unit *u, sd_bus_message *msg);
/* Re-examines u after its status changed: may report RUNNING or end it. */
void unit_evaluate(Unit *u);
/* Reports an outcome decided while u->listing was in flight. */
void unit_deliver_pending(Unit *u);

void unit_list_request_free_all(UnitManager *m);
