/* Finding the executor units that outlived a worker restart (docs/DESIGN.md §5):
 * ListUnitsByPatterns, then for each unit not yet watched a PropertiesChanged
 * match and one GetAll after it.  The match comes first, so a unit that ends
 * after it is seen ending; one that ended before it is found gone by the
 * GetAll (systemd answers for a collected unit with LoadState=not-found, or
 * an error) and left out of the listing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "executor-unit-internal.h"
#include "log.h"
#include "macro.h"

struct UnitListRequest {
        UnitManager *manager;
        UnitListRequest *next;
        UnitListHandler cb;
        void *userdata;
        sd_bus_slot *slot;               /* ListUnitsByPatterns in flight */
        char **names;                    /* every executor unit listed */
        size_t n_names, n_names_allocated;
        size_t n_pending;                /* GetAll replies still to come */
};

static void request_unlink(UnitListRequest *req) {
        UnitManager *m = req->manager;

        for (UnitListRequest **p = &m->listings; *p; p = &(*p)->next)
                if (*p == req) {
                        *p = req->next;
                        break;
                }
}

static UnitListRequest *request_free(UnitListRequest *req) {
        if (!req)
                return NULL;
        req->slot = sd_bus_slot_unref(req->slot);
        for (size_t i = 0; i < req->n_names; i++)
                free(req->names[i]);
        free(req->names);
        free(req);
        return NULL;
}

void unit_list_request_free_all(UnitManager *m) {
        while (m->listings) {
                UnitListRequest *req = m->listings;

                m->listings = req->next;
                for (Unit *u = m->units; u; u = u->next)
                        if (u->listing == req)
                                u->listing = NULL;
                request_free(req);
        }
}

static void info_fill(Unit *u, AdoptedUnit *a) {
        *a = u->info;
        snprintf(a->app_id, sizeof(a->app_id), "%s", u->app_id);
        a->executor_id = u->executor_id;
        snprintf(a->unit, sizeof(a->unit), "%s", u->name);
        snprintf(a->active_state, sizeof(a->active_state), "%s", u->status.active_state);
        a->pid = u->status.main_pid;
}

static void request_complete(UnitListRequest *req) {
        UnitManager *m = req->manager;
        _cleanup_free_ AdoptedUnit *units = NULL;
        size_t n = 0;

        request_unlink(req);

        units = calloc(MAX(req->n_names, (size_t) 1), sizeof(AdoptedUnit));
        if (!units) {
                for (Unit *u = m->units, *next; u; u = next) {
                        next = u->next;
                        if (u->listing == req)
                                unit_free(u);
                }
                if (req->cb)
                        req->cb(m, -ENOMEM, NULL, 0, req->userdata);
                request_free(req);
                return;
        }

        for (size_t i = 0; i < req->n_names; i++) {
                Unit *u = unit_find(m, req->names[i]);

                if (!u)
                        continue;        /* watched before, ended since */
                if (u->listing == req && u->vanished) {
                        unit_free(u);
                        continue;
                }
                info_fill(u, &units[n++]);
        }

        if (req->cb)
                req->cb(m, 0, units, n, req->userdata);

        /* Now the caller knows them: outcomes that came meanwhile follow. */
        for (size_t i = 0; i < req->n_names; i++) {
                Unit *u = unit_find(m, req->names[i]);

                if (!u || u->listing != req)
                        continue;
                u->listing = NULL;
                if (u->ended)
                        unit_deliver_pending(u);
        }
        request_free(req);
}

static int on_get_all(sd_bus_message *msg, void *userdata, _unused_ sd_bus_error *ret_error) {
        Unit *u = userdata;
        UnitListRequest *req = u->listing;
        int r;

        u->get_slot = sd_bus_slot_unref(u->get_slot);

        if (u->ended)
                /* Its end reached the match first: it was there when listed. */
                ;
        else if (sd_bus_message_is_method_error(msg, NULL))
                u->vanished = true;
        else {
                r = unit_read_properties(u, msg);
                if (r < 0)
                        log_warning_errno(r, "%s: failed to parse its properties: %m", u->name);
                if (!streq(u->status.load_state, "loaded"))
                        u->vanished = true;
                else
                        unit_evaluate(u);
        }

        if (req && --req->n_pending == 0)
                request_complete(req);
        return 0;
}

/* Watches a listed unit that this manager does not know yet. */
static int adopt(UnitListRequest *req, const char *name, const char *app_id, int executor_id,
                 const char *active_state) {
        UnitManager *m = req->manager;
        Unit *u;
        int r;

        r = unit_new(m, name, app_id, executor_id, &u);
        if (r < 0)
                return r;
        /* Alive when listed: any "inactive" from now on is its end.  The
         * listing tells the caller it runs, unless it was still activating:
         * then RUNNING follows when it is active. */
        u->started = true;
        u->seen_live = true;
        u->running_reported = !streq(active_state, "activating");
        u->listing = req;
        snprintf(u->status.active_state, sizeof(u->status.active_state), "%s", active_state);

        r = unit_watch(u);
        if (r >= 0)
                r = sd_bus_call_method_async(m->bus, &u->get_slot, SYSTEMD_DEST, u->path,
                                             "org.freedesktop.DBus.Properties", "GetAll", on_get_all, u,
                                             "s", "");
        if (r < 0) {
                unit_free(u);
                return r;
        }
        req->n_pending++;
        return 0;
}

static int on_list_reply(sd_bus_message *msg, void *userdata, _unused_ sd_bus_error *ret_error) {
        UnitListRequest *req = userdata;
        UnitManager *m = req->manager;
        const sd_bus_error *e = sd_bus_message_get_error(msg);
        const char *name, *active_state;
        int r;

        req->slot = sd_bus_slot_unref(req->slot);
        if (e) {
                r = -sd_bus_message_get_errno(msg);
                goto fail;
        }

        r = sd_bus_message_enter_container(msg, 'a', "(ssssssouso)");
        if (r < 0)
                goto fail;
        while ((r = sd_bus_message_read(msg, "(ssssssouso)", &name, NULL, NULL, &active_state, NULL, NULL,
                                        NULL, NULL, NULL, NULL)) > 0) {
                char app_id[APP_ID_MAX + 1];
                int executor_id;

                if (executor_unit_parse(name, app_id, sizeof(app_id), &executor_id) < 0)
                        continue;        /* spark-executor-* made by someone else */

                if (GREEDY_REALLOC(req->names, req->n_names_allocated, req->n_names + 1) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
                req->names[req->n_names] = strdup(name);
                if (!req->names[req->n_names]) {
                        r = -ENOMEM;
                        goto fail;
                }
                req->n_names++;

                if (unit_find(m, name))
                        continue;
                r = adopt(req, name, app_id, executor_id, active_state);
                if (r < 0) {
                        r = log_warning_errno(r, "Failed to watch %s: %m", name);
                        goto fail;
                }
        }
        if (r < 0)
                goto fail;

        if (req->n_pending == 0)
                request_complete(req);
        return 0;

fail:
        request_unlink(req);
        for (Unit *u = m->units, *next; u; u = next) {
                next = u->next;
                if (u->listing == req)
                        unit_free(u);
        }
        if (req->cb)
                req->cb(m, r < 0 ? r : -EIO, NULL, 0, req->userdata);
        request_free(req);
        return 0;
}

int unit_manager_list(UnitManager *m, UnitListHandler cb, void *userdata) {
        UnitListRequest *req;
        int r;

        if (!m)
                return -EINVAL;
        req = calloc(1, sizeof(*req));
        if (!req)
                return -ENOMEM;
        req->manager = m;
        req->cb = cb;
        req->userdata = userdata;

        r = sd_bus_call_method_async(m->bus, &req->slot, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                     "ListUnitsByPatterns", on_list_reply, req, "asas", 4, "activating",
                                     "active", "reloading", "deactivating", 1, "spark-executor-*");
        if (r < 0) {
                request_free(req);
                return r;
        }
        req->next = m->listings;
        m->listings = req;
        return 0;
}
