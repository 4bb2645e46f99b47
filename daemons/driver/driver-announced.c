/* The executors the master has started for this application, as its events
 * and snapshots say, each with the worker it was started on and that
 * worker's event endpoint (subscribed to once the executor registers:
 * driver-master.c).  An executor
 * may register only under an id the master gave it and from that worker
 * (docs/DESIGN.md §9: an unknown id gets an error and changes nothing), so a cluster
 * member cannot pose as an executor and take an application's tasks.
 *
 * Bounded: an executor that ended is forgotten, a snapshot replaces the
 * whole set, and no more than DRIVER_MAX_ANNOUNCED are kept. */
#include <stdio.h>
#include <stdlib.h>

#include "codec.h"
#include "driver.h"
#include "log.h"

typedef struct Announced {
        char key[16];                    /* the executor id, in decimal */
        char worker_id[WORKER_ID_MAX];
        char *worker_events; /* NULL: none announced */
        bool draining;
} Announced;

static void announced_free(Announced *a) {
        if (a)
                free(a->worker_events);
        free(a);
}

static void id_key(int id, char key[static 16]) {
        snprintf(key, 16, "%d", id);
}

static Announced *announced_find(const Driver *d, int id) {
        char key[16];

        id_key(id, key);
        return hashmap_get(d->announced, key);
}

int driver_announce_executor(Driver *d, int id, const char *worker_id) {
        char key[16];
        Announced *a;
        int r;

        if (id < 1 || id > DRIVER_MAX_EXECUTOR_ID || !wire_name_is_valid(worker_id, false) ||
            strlen(worker_id) >= WORKER_ID_MAX)
                return -EINVAL;
        id_key(id, key);
        a = hashmap_get(d->announced, key);
        if (a) {
                /* a restarted worker re-adopts it under its own id */
                snprintf(a->worker_id, sizeof(a->worker_id), "%s", worker_id);
                return 0;
        }
        if (hashmap_size(d->announced) >= DRIVER_MAX_ANNOUNCED)
                return log_warning_errno(-ENOSPC, "More than %d executors announced for %s, ignoring executor %d",
                                         DRIVER_MAX_ANNOUNCED, d->app_id, id);
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        memcpy(a->key, key, sizeof(key));
        snprintf(a->worker_id, sizeof(a->worker_id), "%s", worker_id);
        r = hashmap_put(d->announced, a->key, a);
        if (r < 0)
                free(a);
        return r;
}

void driver_forget_announced(Driver *d, int id) {
        char key[16];

        id_key(id, key);
        announced_free(hashmap_remove(d->announced, key));
}

void driver_forget_all_announced(Driver *d) {
        size_t i = 0;
        void *v;

        while (hashmap_iterate(d->announced, &i, &v, NULL))
                announced_free(v);
        hashmap_clear(d->announced);
}

const char *driver_announced_worker(const Driver *d, int id) {
        const Announced *a = announced_find(d, id);

        return a ? a->worker_id : NULL;
}

void driver_announce_draining(Driver *d, int id, bool draining) {
        Announced *a = announced_find(d, id);

        if (a)
                a->draining = draining;
}

bool driver_announced_draining(const Driver *d, int id) {
        const Announced *a = announced_find(d, id);

        return a && a->draining;
}

int driver_announce_worker_events(Driver *d, int id, const char *events_url) {
        Announced *a;
        char *copy;

        if (isempty(events_url) || strlen(events_url) > DRIVER_MAX_EVENTS_URL)
                return -EINVAL;
        a = announced_find(d, id);
        if (!a)
                return -ENOENT;
        if (a->worker_events && streq(a->worker_events, events_url))
                return 0;
        copy = strdup(events_url);
        if (!copy)
                return -ENOMEM;
        free(a->worker_events);
        a->worker_events = copy;
        return 0;
}

const char *driver_announced_worker_events(const Driver *d, int id) {
        const Announced *a = announced_find(d, id);

        return a ? a->worker_events : NULL;
}
