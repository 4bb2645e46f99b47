/* See executor-unit.h.  The systemd side of the worker: StartTransientUnit,
 * StopUnit, and the signals that tell us what became of each unit.
 *
 * Ordering is what makes this correct without polling.  All our messages
 * travel on one connection, which the bus and systemd process in order, and
 * systemd sends its messages in order too.  So:
 *   - Subscribe and the JobRemoved match go out when the manager is made,
 *     before any start;
 *   - a unit's PropertiesChanged match goes out before its
 *     StartTransientUnit, so no signal about it can be missed;
 *   - systemd flushes a unit's pending PropertiesChanged before it sends
 *     JobRemoved for the unit's job, and the type-specific interface
 *     (Service: Result, ExecMainCode/Status, MainPID) before the generic one
 *     (Unit: ActiveState), so by the time ActiveState says "inactive" we hold
 *     the Result that goes with it;
 *   - a unit that is garbage-collected (CollectMode=inactive-or-failed) gets
 *     its last PropertiesChanged before it disappears.
 * A unit we start needs no read-back: it does not exist before the start
 * call, and every change after it reaches our match.  Units found by
 * unit_manager_list() existed before our match, so they are read once with
 * GetAll after it (executor-unit-list.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor-unit-internal.h"
#include "log.h"
#include "macro.h"
#include "unit-properties.h"

static void string_set(char *dst, size_t size, const char *src) {
        snprintf(dst, size, "%s", src ? src : "");
}

static const char *startswith_local(const char *s, const char *prefix) {
        size_t n = strlen(prefix);

        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

static char *mfree_local(char *p) {
        free(p);
        return NULL;
}

static const char *executor_state_name(Spark__ExecutorState state) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(&spark__executor_state__descriptor, state);

        return v ? v->name : "?";
}

Unit *unit_find(UnitManager *m, const char *name) {
        for (Unit *u = m->units; u; u = u->next)
                if (streq(u->name, name))
                        return u;
        return NULL;
}

int unit_new(UnitManager *m, const char *name, const char *app_id, int executor_id, Unit **ret) {
        Unit *u;
        int r;

        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        u->manager = m;
        string_set(u->name, sizeof(u->name), name);
        string_set(u->app_id, sizeof(u->app_id), app_id);
        u->executor_id = executor_id;
        r = sd_bus_path_encode(SYSTEMD_UNIT_PATH_PREFIX, name, &u->path);
        if (r < 0) {
                free(u);
                return r;
        }

        u->next = m->units;
        if (m->units)
                m->units->prev = u;
        m->units = u;
        m->n_units++;
        *ret = u;
        return 0;
}

static void start_queue_pump(UnitManager *m);

static void start_queue_push(Unit *u) {
        UnitManager *m = u->manager;

        u->start_queue_next = NULL;
        if (m->start_queue_tail)
                m->start_queue_tail->start_queue_next = u;
        else
                m->start_queue_head = u;
        m->start_queue_tail = u;
}

static Unit *start_queue_pop(UnitManager *m) {
        Unit *u = m->start_queue_head;

        if (!u)
                return NULL;
        m->start_queue_head = u->start_queue_next;
        if (!m->start_queue_head)
                m->start_queue_tail = NULL;
        u->start_queue_next = NULL;
        return u;
}

/* Takes u out of the queue (if it is there) and drops its message. */
static void start_queue_remove(Unit *u) {
        UnitManager *m = u->manager;
        Unit *prev = NULL;

        u->start_msg = sd_bus_message_unref(u->start_msg);
        for (Unit *i = m->start_queue_head; i; prev = i, i = i->start_queue_next) {
                if (i != u)
                        continue;
                if (prev)
                        prev->start_queue_next = u->start_queue_next;
                else
                        m->start_queue_head = u->start_queue_next;
                if (m->start_queue_tail == u)
                        m->start_queue_tail = prev;
                u->start_queue_next = NULL;
                return;
        }
}

/* Stops watching: no signal or reply reaches u after this. */
static void unit_unwatch(Unit *u) {
        u->match_slot = sd_bus_slot_unref(u->match_slot);
        u->start_slot = sd_bus_slot_unref(u->start_slot);
        u->stop_slot = sd_bus_slot_unref(u->stop_slot);
        u->get_slot = sd_bus_slot_unref(u->get_slot);
}

Unit *unit_free(Unit *u) {
        UnitManager *m;

        if (!u)
                return NULL;
        m = u->manager;
        unit_unwatch(u);
        start_queue_remove(u);
        if (u->prev)
                u->prev->next = u->next;
        else if (m->units == u)
                m->units = u->next;
        if (u->next)
                u->next->prev = u->prev;
        m->n_units--;
        free(u->path);
        free(u->start_job);
        free(u->stop_reason);
        free(u->start_error);
        free(u);
        if (m->start_in_flight == u) {
                /* Its reply will not come to us: the next start may go. */
                m->start_in_flight = NULL;
                if (!m->closing)
                        start_queue_pump(m);
        }
        return NULL;
}

/* The one place an outcome leaves a unit.  A terminal one ends the watch
 * and frees u before the handler runs, so that the handler may start a new
 * unit of the same name. */
static void unit_report(Unit *u, const UnitOutcome *o) {
        UnitManager *m = u->manager;
        char app_id[APP_ID_MAX + 1];
        int executor_id = u->executor_id;
        bool terminal = o->state != SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING;

        if (!terminal) {
                u->running_reported = true;
                /* While listed, the listing tells the caller it runs. */
                if (m->cb && !u->listing)
                        m->cb(m, u->app_id, u->executor_id, o, m->userdata);
                return;
        }

        if (u->listing) {
                /* The listing's handler has not told the caller about this
                 * unit yet: keep the outcome until it has. */
                u->ended = true;
                u->pending_outcome = *o;
                /* The GetAll reply (if still due) is what completes the
                 * listing: keep waiting for it. */
                u->match_slot = sd_bus_slot_unref(u->match_slot);
                u->start_slot = sd_bus_slot_unref(u->start_slot);
                u->stop_slot = sd_bus_slot_unref(u->stop_slot);
                return;
        }

        log_debug("%s: %s (%s)", u->name, o->reason, executor_state_name(o->state));
        string_set(app_id, sizeof(app_id), u->app_id);
        unit_free(u);
        if (m->cb)
                m->cb(m, app_id, executor_id, o, m->userdata);
}

void unit_deliver_pending(Unit *u) {
        UnitOutcome o;

        if (!u->ended)
                return;
        o = u->pending_outcome;
        u->listing = NULL;
        unit_report(u, &o);
}

static void unit_end(Unit *u) {
        UnitOutcome o;
        UnitEnd end = {
                .stop_requested = u->stop_requested,
                .stop_reason = u->stop_reason,
                .start_error = u->start_error,
                .start_job_result = isempty(u->start_job_result) ? NULL : u->start_job_result,
        };

        unit_outcome_terminal(&u->status, &end, &o);
        unit_report(u, &o);
}

void unit_evaluate(Unit *u) {
        UnitOutcome o;

        if (u->ended)
                return;
        if (unit_status_is_live(&u->status))
                u->seen_live = true;

        if (u->start_error) {
                unit_end(u);
                return;
        }
        if (u->started) {
                /* The start job failed (or our stop cancelled it): the end
                 * is now, unless the unit still has processes to put down. */
                if (!isempty(u->start_job_result) && !unit_status_is_live(&u->status)) {
                        unit_end(u);
                        return;
                }
                if (u->seen_live && unit_status_is_terminal(&u->status)) {
                        unit_end(u);
                        return;
                }
        }
        /* Type=exec: active means the binary was executed.  Reported as soon
         * as seen, before the start job's JobRemoved that follows. */
        if (streq(u->status.active_state, "active") && !u->running_reported) {
                unit_outcome_running(&u->status, &o);
                unit_report(u, &o);
        }
}

/* --- properties ------------------------------------------------------- */

static int read_string_variant(sd_bus_message *msg, char *dst, size_t size) {
        const char *s;
        int r;

        r = sd_bus_message_read(msg, "v", "s", &s);
        if (r < 0)
                return r;
        string_set(dst, size, s);
        return 0;
}

static void info_from_environment(AdoptedUnit *info, const char *e) {
        const char *v;

        if ((v = startswith_local(e, "SPARK_WORKER_ID=")) && worker_id_is_valid(v))
                string_set(info->worker_id, sizeof(info->worker_id), v);
        else if ((v = startswith_local(e, "SPARK_DRIVER_URL=")))
                string_set(info->driver_url, sizeof(info->driver_url), v);
        else if ((v = startswith_local(e, "SPARK_EXECUTOR_CORES=")))
                info->cores = atoi(v);
        else if ((v = startswith_local(e, "SPARK_EXECUTOR_MEMORY_MB=")))
                info->memory_mb = strtoll(v, NULL, 10);
}

static int read_environment(Unit *u, sd_bus_message *msg) {
        const char *e;
        int r;

        r = sd_bus_message_enter_container(msg, 'v', "as");
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(msg, 'a', "s");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read_basic(msg, 's', &e)) > 0)
                info_from_environment(&u->info, e);
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

int unit_read_properties(Unit *u, sd_bus_message *msg) {
        UnitStatus *s = &u->status;
        const char *name;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                r = sd_bus_message_read_basic(msg, 's', &name);
                if (r < 0)
                        return r;

                if (streq(name, "ActiveState"))
                        r = read_string_variant(msg, s->active_state, sizeof(s->active_state));
                else if (streq(name, "SubState"))
                        r = read_string_variant(msg, s->sub_state, sizeof(s->sub_state));
                else if (streq(name, "LoadState"))
                        r = read_string_variant(msg, s->load_state, sizeof(s->load_state));
                else if (streq(name, "Result"))
                        r = read_string_variant(msg, s->result, sizeof(s->result));
                else if (streq(name, "ExecMainCode"))
                        r = sd_bus_message_read(msg, "v", "i", &s->exec_main_code);
                else if (streq(name, "ExecMainStatus"))
                        r = sd_bus_message_read(msg, "v", "i", &s->exec_main_status);
                else if (streq(name, "MainPID"))
                        r = sd_bus_message_read(msg, "v", "u", &s->main_pid);
                else if (streq(name, "Environment") && u->listing)
                        r = read_environment(u, msg);
                else
                        r = sd_bus_message_skip(msg, "v");
                if (r < 0)
                        return r;

                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

static int on_properties_changed(sd_bus_message *msg, void *userdata, _unused_ sd_bus_error *ret_error) {
        Unit *u = userdata;
        const char *iface;
        int r;

        /* Until systemd has accepted our start, a unit of this name is
         * someone else's (the start will fail with "already loaded"). */
        if (u->start_pending && !u->start_job)
                return 0;

        r = sd_bus_message_read_basic(msg, 's', &iface);
        if (r < 0)
                goto fail;
        if (!streq(iface, "org.freedesktop.systemd1.Unit") &&
            !streq(iface, "org.freedesktop.systemd1.Service"))
                return 0;
        r = unit_read_properties(u, msg);
        if (r < 0)
                goto fail;
        unit_evaluate(u);
        return 0;
fail:
        log_warning_errno(r, "%s: failed to parse PropertiesChanged, ignoring: %m", u->name);
        return 0;
}

int unit_watch(Unit *u) {
        return sd_bus_match_signal_async(u->manager->bus, &u->match_slot, SYSTEMD_DEST, u->path,
                                         "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                         on_properties_changed, NULL, u);
}

/* --- manager signals ------------------------------------------------------ */

static int on_job_removed(sd_bus_message *msg, void *userdata, _unused_ sd_bus_error *ret_error) {
        UnitManager *m = userdata;
        const char *job, *unit, *result;
        uint32_t id;
        Unit *u;
        int r;

        r = sd_bus_message_read(msg, "uoss", &id, &job, &unit, &result);
        if (r < 0) {
                log_warning_errno(r, "Failed to parse JobRemoved, ignoring: %m");
                return 0;
        }
        if (strncmp(unit, "spark-executor-", strlen("spark-executor-")) != 0)
                return 0;
        u = unit_find(m, unit);
        /* The start reply, which names our job, comes before the job can
         * end; a job before it belongs to someone else's unit of that name. */
        if (!u || !u->start_pending || !u->start_job || !streq(u->start_job, job))
                return 0;

        u->start_pending = false;
        u->started = true;
        if (!streq(result, "done"))
                string_set(u->start_job_result, sizeof(u->start_job_result), result);
        unit_evaluate(u);
        return 0;
}

static int on_subscribe_reply(sd_bus_message *msg, void *userdata, _unused_ sd_bus_error *ret_error) {
        UnitManager *m = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(msg);

        m->subscribe_slot = sd_bus_slot_unref(m->subscribe_slot);
        /* Subscribing twice is harmless ("already subscribed"). */
        if (e && !sd_bus_error_has_name(e, "org.freedesktop.systemd1.AlreadySubscribed"))
                log_error("Failed to subscribe to systemd's signals, executor states will not be seen: %s",
                          e->message ? e->message : e->name);
        return 0;
}

/* --- start ---------------------------------------------------------------- */

static void start_reply_handle(Unit *u, sd_bus_message *msg) {
        const sd_bus_error *e = sd_bus_message_get_error(msg);
        const char *job;
        int r;

        u->start_slot = sd_bus_slot_unref(u->start_slot);

        if (e) {
                u->start_error = strdup(e->message ? e->message : e->name);
                if (!u->start_error)
                        u->start_error = strdup("out of memory");
                u->start_pending = false;
                unit_evaluate(u);
                return;
        }

        r = sd_bus_message_read(msg, "o", &job);
        if (r < 0) {
                log_warning_errno(r, "%s: failed to parse StartTransientUnit reply, ignoring: %m", u->name);
                return;
        }
        if (u->start_pending) {
                free(u->start_job);
                u->start_job = strdup(job);
                if (!u->start_job) {
                        /* Without its path the job cannot be told apart:
                         * go by the unit's states alone. */
                        u->start_pending = false;
                        u->started = true;
                }
        }
}

static int on_start_reply(sd_bus_message *msg, void *userdata, _unused_ sd_bus_error *ret_error) {
        Unit *u = userdata;
        UnitManager *m = u->manager;

        if (m->start_in_flight == u)
                m->start_in_flight = NULL;
        start_reply_handle(u, msg);
        /* u may be gone now. */
        start_queue_pump(m);
        return 0;
}

/* Sends u's StartTransientUnit; it is then the one in flight. */
static int start_send(Unit *u) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = TAKE_PTR(u->start_msg);
        int r;

        r = sd_bus_call_async(u->manager->bus, &u->start_slot, msg, on_start_reply, u, 0);
        if (r < 0)
                return r;
        u->manager->start_in_flight = u;
        log_debug("%s: starting", u->name);
        return 0;
}

/* Sends the waiting starts, one at a time: the next when this one's
 * reply has come.  A unit stopped while it waited is ended here, never
 * started. */
static void start_queue_pump(UnitManager *m) {
        Unit *u;
        int r;

        while (!m->start_in_flight && (u = start_queue_pop(m))) {
                if (u->stop_requested) {
                        /* As if systemd had cancelled its start job. */
                        u->start_msg = sd_bus_message_unref(u->start_msg);
                        u->start_pending = false;
                        u->started = true;
                        string_set(u->start_job_result, sizeof(u->start_job_result), "canceled");
                        unit_evaluate(u);
                        continue;
                }
                r = start_send(u);
                if (r < 0) {
                        u->start_error = strdup(strerror(-r));
                        if (!u->start_error)
                                u->start_error = strdup("out of memory");
                        u->start_pending = false;
                        unit_evaluate(u);
                }
        }
}

int unit_manager_start(UnitManager *m, const ExecutorUnitSpec *spec) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        char name[UNIT_NAME_MAX], work_dir[4096], error[256];
        Unit *u;
        int r;

        if (!m)
                return -EINVAL;
        r = executor_unit_spec_validate(spec, m->system_bus, error, sizeof(error));
        if (r < 0) {
                log_debug("Refusing executor spec: %s", error);
                return r;
        }
        r = executor_unit_name(name, sizeof(name), spec->app_id, spec->executor_id);
        if (r < 0)
                return r;
        if (unit_find(m, name))
                return -EEXIST;

        r = executor_unit_make_work_dir(spec, m->system_bus, work_dir, sizeof(work_dir));
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_call(m->bus, &msg, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                           "StartTransientUnit");
        if (r < 0)
                return r;
        /* "fail": never replace a job someone queued for a unit of the same name. */
        r = sd_bus_message_append(msg, "ss", name, "fail");
        if (r < 0)
                return r;
        r = executor_unit_append_properties(msg, spec, m->system_bus, work_dir);
        if (r < 0)
                return r;
        r = sd_bus_message_append(msg, "a(sa(sv))", 0);
        if (r < 0)
                return r;

        r = unit_new(m, name, spec->app_id, spec->executor_id, &u);
        if (r < 0)
                return r;
        u->start_pending = true;
        u->info.cores = spec->cores;
        u->info.memory_mb = spec->memory_mb;
        string_set(u->info.worker_id, sizeof(u->info.worker_id), spec->worker_id);
        string_set(u->info.driver_url, sizeof(u->info.driver_url), spec->driver_url);

        r = unit_watch(u);
        if (r < 0) {
                unit_free(u);
                return r;
        }
        u->start_msg = TAKE_PTR(msg);
        if (m->start_in_flight) {
                start_queue_push(u);
                return 0;
        }
        r = start_send(u);
        if (r < 0) {
                unit_free(u);
                return r;
        }
        return 0;
}

/* --- stop ----------------------------------------------------------------- */

static int on_stop_reply(sd_bus_message *msg, void *userdata, _unused_ sd_bus_error *ret_error) {
        Unit *u = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(msg);

        u->stop_slot = sd_bus_slot_unref(u->stop_slot);
        if (!e)
                return 0;
        if (sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit")) {
                /* Gone, and no signal told us how (an adopted unit that
                 * ended before our match was in place): it is stopped. */
                u->started = true;
                u->seen_live = true;
                string_set(u->status.active_state, sizeof(u->status.active_state), "inactive");
                unit_evaluate(u);
                return 0;
        }
        log_struct(LOG_WARNING, LOG_FIELDS(.app_id = u->app_id, .executor_id = u->executor_id, .unit = u->name),
                   "Failed to stop %s: %s", u->name, e->message ? e->message : e->name);
        /* It keeps running; should it end later, it was not our doing. */
        u->stop_requested = false;
        u->stop_reason = mfree_local(u->stop_reason);
        return 0;
}

static int on_unwatched_stop_reply(sd_bus_message *msg, _unused_ void *userdata, _unused_ sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(msg);

        if (e && !sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit"))
                log_warning("Failed to stop an executor unit: %s", e->message ? e->message : e->name);
        return 0;
}

int unit_manager_stop(UnitManager *m, const char *app_id, int executor_id, const char *reason) {
        char name[UNIT_NAME_MAX];
        Unit *u;
        int r;

        if (!m)
                return -EINVAL;
        r = executor_unit_name(name, sizeof(name), app_id, executor_id);
        if (r < 0)
                return r;

        u = unit_find(m, name);
        if (u && u->ended)
                /* Over already; its outcome waits for a listing's handler. */
                return 1;
        if (!u) {
                /* Not ours to watch (or already over): still make sure it
                 * goes, with a floating call nobody waits for. */
                r = sd_bus_call_method_async(m->bus, NULL, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                             "StopUnit", on_unwatched_stop_reply, NULL, "ss", name, "replace");
                return r < 0 ? r : 0;
        }

        if (u->start_msg) {
                /* Not started yet: it never will be (start_queue_pump()). */
                u->stop_requested = true;
                if (!isempty(reason) && !u->stop_reason)
                        u->stop_reason = strdup(reason);
                return 1;
        }

        u->stop_slot = sd_bus_slot_unref(u->stop_slot);
        r = sd_bus_call_method_async(m->bus, &u->stop_slot, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                     "StopUnit", on_stop_reply, u, "ss", name, "replace");
        if (r < 0)
                return r;
        u->stop_requested = true;
        if (!isempty(reason) && !u->stop_reason)
                u->stop_reason = strdup(reason);
        return 1;
}

/* --- manager -------------------------------------------------------------- */

size_t unit_manager_watched(UnitManager *m) {
        return m ? m->n_units : 0;
}

int unit_manager_new(sd_event *e, bool user_bus, ExecutorUnitStateHandler cb, void *userdata,
                     UnitManager **ret) {
        UnitManager *m;
        int r;

        if (!e || !ret)
                return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->event = sd_event_ref(e);
        m->system_bus = !user_bus;
        m->cb = cb;
        m->userdata = userdata;

        r = user_bus ? sd_bus_open_user(&m->bus) : sd_bus_open_system(&m->bus);
        if (r < 0)
                goto fail;
        r = sd_bus_attach_event(m->bus, e, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                goto fail;
        /* Signals missed while disconnected cannot be recovered: let the
         * loop end, the worker be restarted and re-adopt its executors. */
        r = sd_bus_set_exit_on_disconnect(m->bus, true);
        if (r < 0)
                goto fail;

        r = sd_bus_match_signal_async(m->bus, &m->job_removed_slot, SYSTEMD_DEST, SYSTEMD_PATH,
                                      SYSTEMD_MANAGER, "JobRemoved", on_job_removed, NULL, m);
        if (r < 0)
                goto fail;
        r = sd_bus_call_method_async(m->bus, &m->subscribe_slot, SYSTEMD_DEST, SYSTEMD_PATH,
                                     SYSTEMD_MANAGER, "Subscribe", on_subscribe_reply, m, NULL);
        if (r < 0)
                goto fail;

        *ret = m;
        return 0;
fail:
        unit_manager_free(m);
        return r;
}

UnitManager *unit_manager_free(UnitManager *m) {
        if (!m)
                return NULL;
        m->closing = true;
        unit_list_request_free_all(m);
        while (m->units)
                unit_free(m->units);
        m->job_removed_slot = sd_bus_slot_unref(m->job_removed_slot);
        m->subscribe_slot = sd_bus_slot_unref(m->subscribe_slot);
        if (m->bus) {
                sd_bus_set_exit_on_disconnect(m->bus, false);
                /* Sends what is queued (a StopUnit, say) before closing. */
                m->bus = sd_bus_flush_close_unref(m->bus);
        }
        m->event = sd_event_unref(m->event);
        free(m);
        return NULL;
}

struct sd_bus *unit_manager_bus(UnitManager *m) {
        return m ? m->bus : NULL;
}
