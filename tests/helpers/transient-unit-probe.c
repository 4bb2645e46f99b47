/* transient-unit-probe: proves a test's systemd user manager works the way the
 * worker uses it.  Over sd_bus_open_user() it subscribes, installs the
 * JobRemoved and PropertiesChanged matches *before* StartTransientUnit, starts
 * probe-<pid>.service running the given command with
 * CollectMode=inactive-or-failed, and waits on an sd-event loop until the job
 * is removed and the unit has gone inactive or failed.  The outcome comes from
 * the signals' payloads only: the unit is garbage-collected as soon as it
 * ends, so a later query would see defaults.
 *
 *   transient-unit-probe [--timeout SEC] [--memory-max BYTES] CMD [ARG...]
 *
 * Prints "unit=NAME", "job=JOBRESULT", then "result=RESULT status=STATUS" and
 * exits 0 once the outcome is known; exits 1 on any error or timeout. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "macro.h"

#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define MANAGER_IFACE "org.freedesktop.systemd1.Manager"

typedef struct Probe {
        sd_event *event;
        sd_bus *bus;
        char unit[64];
        char *unit_path;
        char *job_path;         /* from StartTransientUnit's reply */

        char *job_result;       /* from JobRemoved */
        char *active_state;     /* from PropertiesChanged, latest values */
        char *result;
        int32_t exec_main_code;
        int32_t exec_main_status;
        bool have_exec_main;
        bool finished;
} Probe;

static void probe_done(Probe *p) {
        free(p->unit_path);
        free(p->job_path);
        free(p->job_result);
        free(p->active_state);
        free(p->result);
        sd_bus_flush_close_unref(p->bus);
        sd_event_unref(p->event);
}

static bool probe_is_complete(const Probe *p) {
        return p->job_result && p->active_state &&
                (streq(p->active_state, "inactive") || streq(p->active_state, "failed"));
}

static void probe_check_complete(Probe *p) {
        if (!p->finished && probe_is_complete(p)) {
                p->finished = true;
                (void) sd_event_exit(p->event, 0);
        }
}

static int replace_string(char **dst, const char *src) {
        char *c = strdup(src);
        if (!c)
                return -ENOMEM;
        free(*dst);
        *dst = c;
        return 0;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Probe *p = userdata;
        const char *path, *unit, *result;
        uint32_t id;
        int r;

        (void) ret_error;
        r = sd_bus_message_read(m, "uoss", &id, &path, &unit, &result);
        if (r < 0) {
                fprintf(stderr, "Failed to parse JobRemoved: %s\n", strerror(-r));
                return 0;
        }
        /* The reply with our job's path may not have been read yet when the
         * signal is dispatched; the unit name identifies it as well. */
        if (p->job_path ? !streq(path, p->job_path) : !streq(unit, p->unit))
                return 0;

        r = replace_string(&p->job_result, result);
        if (r < 0)
                return sd_event_exit(p->event, r);
        probe_check_complete(p);
        return 0;
}

/* Reads one (sv) entry of a PropertiesChanged dictionary, keeping what we
 * want and skipping the rest. */
static int read_changed_property(Probe *p, sd_bus_message *m) {
        const char *name, *contents, *s;
        int r;

        r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        r = sd_bus_message_peek_type(m, NULL, &contents);
        if (r < 0)
                return r;

        if (streq(contents, "s") && (streq(name, "ActiveState") || streq(name, "Result"))) {
                r = sd_bus_message_read(m, "v", "s", &s);
                if (r < 0)
                        return r;
                return replace_string(streq(name, "ActiveState") ? &p->active_state : &p->result, s);
        }
        if (streq(contents, "i") && (streq(name, "ExecMainCode") || streq(name, "ExecMainStatus"))) {
                int32_t v;

                r = sd_bus_message_read(m, "v", "i", &v);
                if (r < 0)
                        return r;
                if (streq(name, "ExecMainCode"))
                        p->exec_main_code = v;
                else
                        p->exec_main_status = v;
                p->have_exec_main = true;
                return 0;
        }
        return sd_bus_message_skip(m, "v");
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Probe *p = userdata;
        const char *interface;
        int r;

        (void) ret_error;
        /* (sa{sv}as): the Service interface's properties (Result, ExecMain*)
         * and the Unit interface's (ActiveState) come in separate signals,
         * Service first. */
        r = sd_bus_message_read(m, "s", &interface);
        if (r < 0)
                goto fail;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                goto fail;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = read_changed_property(p, m);
                if (r < 0)
                        goto fail;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        goto fail;
        }
        if (r < 0)
                goto fail;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                goto fail;

        probe_check_complete(p);
        return 0;
fail:
        fprintf(stderr, "Failed to parse PropertiesChanged: %s\n", strerror(-r));
        return sd_event_exit(p->event, r);
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Probe *p = userdata;

        (void) s;
        (void) usec;
        fprintf(stderr, "Timed out waiting for %s (job %s, state %s)\n", p->unit,
                strna(p->job_result), strna(p->active_state));
        return sd_event_exit(p->event, -ETIMEDOUT);
}

/* ExecStart wants a path; a bare name is looked up in $PATH as systemd-run
 * does. */
static int find_executable(const char *name, char **ret) {
        const char *dirs;

        if (strchr(name, '/')) {
                /* Not resolved further: the unit's SyslogIdentifier is the
                 * basename of this path, as with systemd-run. */
                if (access(name, X_OK) < 0)
                        return -errno;
                *ret = strdup(name);
                return *ret ? 0 : -ENOMEM;
        }
        dirs = getenv("PATH");
        if (!dirs)
                dirs = "/usr/local/bin:/usr/bin:/bin";
        for (const char *d = dirs; *d;) {
                size_t n = strcspn(d, ":");
                char buf[PATH_MAX];

                if (n > 0 && (size_t) snprintf(buf, sizeof buf, "%.*s/%s", (int) n, d, name) < sizeof buf &&
                    access(buf, X_OK) == 0) {
                        *ret = strdup(buf);
                        return *ret ? 0 : -ENOMEM;
                }
                d += n;
                if (*d == ':')
                        d++;
        }
        return -ENOENT;
}

/* ExecStart: a(sasb) = [(path, argv, ignore-failure)]: in the (sv) entry, its
 * variant, the array and the one struct, closed in reverse once filled. */
static int append_exec_start(sd_bus_message *m, const char *exe, char **argv) {
        static const struct {
                char type;
                const char *contents;
        } nesting[] = { { 'v', "a(sasb)" }, { 'a', "(sasb)" }, { 'r', "sasb" } };
        int r;

        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", "ExecStart");
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(nesting); i++) {
                r = sd_bus_message_open_container(m, nesting[i].type, nesting[i].contents);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_append(m, "s", exe);
        if (r < 0)
                return r;
        r = sd_bus_message_append_strv(m, argv);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "b", 0);
        if (r < 0)
                return r;
        for (size_t i = 0; i <= ELEMENTSOF(nesting); i++) {   /* and the (sv) entry */
                r = sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int append_properties(sd_bus_message *m, const char *unit, const char *exe, char **argv,
                             uint64_t memory_max) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)(sv)", "Description", "s", unit, "CollectMode", "s",
                                  "inactive-or-failed");
        if (r < 0)
                return r;
        if (memory_max > 0) {
                r = sd_bus_message_append(m, "(sv)", "MemoryMax", "t", memory_max);
                if (r < 0)
                        return r;
        }
        r = append_exec_start(m, exe, argv);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static int start_unit(Probe *p, char **argv, uint64_t memory_max) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *exe = NULL;
        const char *job;
        int r;

        r = find_executable(argv[0], &exe);
        if (r < 0) {
                fprintf(stderr, "Cannot find %s: %s\n", argv[0], strerror(-r));
                return r;
        }

        r = sd_bus_message_new_method_call(p->bus, &m, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_IFACE,
                                           "StartTransientUnit");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", p->unit, "fail");
        if (r < 0)
                return r;
        r = append_properties(m, p->unit, exe, argv, memory_max);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "a(sa(sv))", 0); /* no auxiliary units */
        if (r < 0)
                return r;

        r = sd_bus_call(p->bus, m, 0, &error, &reply);
        if (r < 0) {
                fprintf(stderr, "StartTransientUnit(%s) failed: %s\n", p->unit,
                        error.message ? error.message : strerror(-r));
                return r;
        }
        r = sd_bus_message_read(reply, "o", &job);
        if (r < 0)
                return r;
        return replace_string(&p->job_path, job);
}

static int subscribe_and_match(Probe *p) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", p->unit, &p->unit_path);
        if (r < 0)
                return r;

        /* Matches first: a unit this short-lived may be gone before a match
         * installed after the start call would see anything. */
        r = sd_bus_match_signal(p->bus, NULL, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_IFACE, "JobRemoved",
                                on_job_removed, p);
        if (r < 0)
                return r;
        r = sd_bus_match_signal(p->bus, NULL, SYSTEMD_DEST, p->unit_path, "org.freedesktop.DBus.Properties",
                                "PropertiesChanged", on_properties_changed, p);
        if (r < 0)
                return r;

        r = sd_bus_call_method(p->bus, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_IFACE, "Subscribe", &error, NULL,
                               NULL);
        if (r < 0)
                fprintf(stderr, "Subscribe failed: %s\n", error.message ? error.message : strerror(-r));
        return r;
}

static int parse_args(int argc, char **argv, uint64_t *timeout_sec, uint64_t *memory_max, int *first_cmd) {
        int i;

        for (i = 1; i < argc; i++) {
                if (streq(argv[i], "--"))
                        return (*first_cmd = i + 1) < argc ? 0 : -EINVAL;
                if (i + 1 < argc && streq(argv[i], "--timeout"))
                        *timeout_sec = strtoull(argv[++i], NULL, 10);
                else if (i + 1 < argc && streq(argv[i], "--memory-max"))
                        *memory_max = strtoull(argv[++i], NULL, 10);
                else if (argv[i][0] == '-')
                        return -EINVAL;
                else
                        break;
        }
        *first_cmd = i;
        return i < argc && *timeout_sec > 0 ? 0 : -EINVAL;
}

int main(int argc, char **argv) {
        _cleanup_(probe_done) Probe p = {};
        uint64_t timeout_sec = 30, memory_max = 0;
        int first, r;

        if (parse_args(argc, argv, &timeout_sec, &memory_max, &first) < 0) {
                fprintf(stderr, "usage: %s [--timeout SEC] [--memory-max BYTES] CMD [ARG...]\n", argv[0]);
                return 2;
        }
        snprintf(p.unit, sizeof p.unit, "probe-%d.service", (int) getpid());

        r = sd_event_default(&p.event);
        if (r < 0)
                goto fail;
        r = sd_bus_open_user(&p.bus);
        if (r < 0) {
                fprintf(stderr, "Failed to connect to the user bus: %s\n", strerror(-r));
                return 1;
        }
        /* A manager that goes away ends the loop instead of waiting out the
         * timeout. */
        r = sd_bus_set_exit_on_disconnect(p.bus, true);
        if (r < 0)
                goto fail;
        r = subscribe_and_match(&p);
        if (r < 0)
                goto fail;
        r = start_unit(&p, argv + first, memory_max);
        if (r < 0)
                goto fail;
        printf("unit=%s\n", p.unit);
        fflush(stdout);

        /* Signals that arrived during the synchronous calls above are queued
         * in the connection and dispatched by the loop. */
        r = sd_bus_attach_event(p.bus, p.event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                goto fail;
        r = sd_event_add_time_relative(p.event, NULL, CLOCK_MONOTONIC, timeout_sec * 1000000ULL, 0,
                                       on_timeout, &p);
        if (r < 0)
                goto fail;
        r = sd_event_loop(p.event);
        if (r < 0)
                goto fail;
        if (!p.finished)
                return 1;

        printf("job=%s\n", p.job_result);
        if (p.have_exec_main)
                printf("code=%" PRIi32 "\n", p.exec_main_code);
        printf("result=%s status=%" PRIi32 "\n", strna(p.result), p.exec_main_status);
        return 0;
fail:
        fprintf(stderr, "transient-unit-probe: %s\n", strerror(-r));
        return 1;
}
