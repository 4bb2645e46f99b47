/* Executors as transient units, against a real systemd user manager.
 *
 * Needs XDG_RUNTIME_DIR pointing at a running user manager (the integration
 * runner provides one: tests/harness/usermgr.sh); without one it prints why
 * and exits 77 (skipped).  The executor is tests/helpers/fake-executor, found
 * beside this binary (build/tests/helpers/), told what to do through
 * SPARK_FAKE_MODE in the app's environment. */
#include <check.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "check-run.h"
#include "executor-unit.h"
#include "ids.h"
#include "macro.h"
#include "time-util.h"

#define RUNNING SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING
#define EXITED SPARK__EXECUTOR_STATE__EXECUTOR_EXITED
#define FAILED SPARK__EXECUTOR_STATE__EXECUTOR_FAILED
#define KILLED SPARK__EXECUTOR_STATE__EXECUTOR_KILLED

#define WAIT_USEC (20 * USEC_PER_SEC)
#define WORKER_ID "worker-20261129172233-testhost-7081"
#define DRIVER_URL "tcp://127.0.0.1:7091"

static char fake_executor[PATH_MAX];
static char work_dir[PATH_MAX];
static char secret_file[PATH_MAX + 16];
static time_t app_stamp;         /* every app id of this run: app-<stamp>-<pid> */

typedef struct Record {
        char app_id[APP_ID_MAX + 1];
        int executor_id;
        UnitOutcome o;
        UnitManager *m;
} Record;

typedef struct Ctx {
        sd_event *event;
        char app_id[APP_ID_MAX + 1];    /* the test's own */
        Record records[64];
        size_t n_records;
        bool listed;
        int list_error;
        size_t records_at_list;         /* n_records when the listing arrived */
        AdoptedUnit units[32];
        size_t n_units;
} Ctx;

static const char *state_name(Spark__ExecutorState s) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(&spark__executor_state__descriptor, s);
        return v ? v->name : "?";
}

static void on_state(UnitManager *m, const char *app_id, int executor_id, const UnitOutcome *o, void *userdata) {
        Ctx *c = userdata;
        Record *r;

        fprintf(stderr, "  %s/%d: %s \"%s\" exit_code=%d pid=%" PRIi64 "\n", app_id, executor_id, state_name(o->state),
                o->reason, o->exit_code, o->pid);
        ck_assert_uint_lt(c->n_records, ELEMENTSOF(c->records));
        r = &c->records[c->n_records++];
        snprintf(r->app_id, sizeof(r->app_id), "%s", app_id);
        r->executor_id = executor_id;
        r->o = *o;
        r->m = m;
}

static void on_list(UnitManager *m, int error, const AdoptedUnit *units, size_t n, void *userdata) {
        Ctx *c = userdata;
        (void) m;

        c->listed = true;
        c->list_error = error;
        c->records_at_list = c->n_records;
        c->n_units = MIN(n, ELEMENTSOF(c->units));
        if (n > 0)
                memcpy(c->units, units, c->n_units * sizeof(AdoptedUnit));
}

static void app_id_make(char *buf, size_t size) {
        ck_assert_int_eq(app_id_format(buf, size, app_stamp, (unsigned) getpid()), 0);
}

static void ctx_init(Ctx *c) {
        *c = (Ctx) {};
        ck_assert_int_ge(sd_event_new(&c->event), 0);
        app_id_make(c->app_id, sizeof(c->app_id));
}

static void ctx_done(Ctx *c) {
        c->event = sd_event_unref(c->event);
}

static UnitManager *manager_new(Ctx *c) {
        UnitManager *m = NULL;

        ck_assert_int_eq(unit_manager_new(c->event, true, on_state, c, &m), 0);
        return m;
}

static ExecutorUnitSpec spec_make(const char *app_id, int executor_id, const char *const *env, size_t n_env) {
        return (ExecutorUnitSpec) {
                .app_id = app_id,
                .executor_id = executor_id,
                .worker_id = WORKER_ID,
                .cores = 1,
                .memory_mb = 256,
                .driver_url = DRIVER_URL,
                .env = env,
                .n_env = n_env,
                .executor_binary = fake_executor,
                .work_dir = work_dir,
                .slice = "spark-executors.slice",
                .user = NULL,
                .secret_file = secret_file,
        };
}

static const Record *find_record(Ctx *c, const char *app_id, int executor_id, bool terminal) {
        for (size_t i = 0; i < c->n_records; i++) {
                const Record *r = &c->records[i];

                if (streq(r->app_id, app_id) && r->executor_id == executor_id &&
                    (r->o.state != RUNNING) == terminal)
                        return r;
        }
        return NULL;
}

static size_t count_records(Ctx *c, const char *app_id, int executor_id, bool terminal) {
        size_t n = 0;

        for (size_t i = 0; i < c->n_records; i++)
                if (streq(c->records[i].app_id, app_id) && c->records[i].executor_id == executor_id &&
                    (c->records[i].o.state != RUNNING) == terminal)
                        n++;
        return n;
}

/* Runs the loop until the unit has an outcome of that kind; never hangs. */
static const Record *wait_for(Ctx *c, const char *app_id, int executor_id, bool terminal) {
        usec_t deadline = now_mono_usec() + WAIT_USEC;
        const Record *r;

        while (!(r = find_record(c, app_id, executor_id, terminal))) {
                ck_assert_msg(now_mono_usec() < deadline, "no %s outcome for %s/%d in time",
                              terminal ? "terminal" : "running", app_id, executor_id);
                ck_assert_int_ge(sd_event_run(c->event, 100 * USEC_PER_MSEC), 0);
        }
        return r;
}

static void run_for(Ctx *c, usec_t usec) {
        usec_t deadline = now_mono_usec() + usec;

        while (now_mono_usec() < deadline)
                ck_assert_int_ge(sd_event_run(c->event, 50 * USEC_PER_MSEC), 0);
}

/* Exactly one terminal outcome, at most one RUNNING and never after it. */
static void assert_once(Ctx *c, const char *app_id, int executor_id) {
        bool ended = false;

        run_for(c, 300 * USEC_PER_MSEC);
        ck_assert_uint_eq(count_records(c, app_id, executor_id, true), 1);
        ck_assert_uint_le(count_records(c, app_id, executor_id, false), 1);
        for (size_t i = 0; i < c->n_records; i++) {
                const Record *r = &c->records[i];

                if (!streq(r->app_id, app_id) || r->executor_id != executor_id)
                        continue;
                ck_assert_msg(!ended || r->o.state != RUNNING, "RUNNING after the end");
                if (r->o.state != RUNNING)
                        ended = true;
        }
}

static void assert_outcome(const Record *r, Spark__ExecutorState state, const char *reason, int exit_code) {
        ck_assert_int_eq(r->o.state, state);
        ck_assert_str_eq(r->o.reason, reason);
        ck_assert_int_eq(r->o.exit_code, exit_code);
}

/* Starts executor_id of c's app: a fake executor that sleeps until stopped. */
static void start_sleeping(Ctx *c, UnitManager *m, int executor_id) {
        static const char *const env[] = { "SPARK_FAKE_MODE=sleep" };
        ExecutorUnitSpec spec = spec_make(c->app_id, executor_id, env, ELEMENTSOF(env));

        ck_assert_int_eq(unit_manager_start(m, &spec), 0);
}

/* Stops executor_id of c's app through m, and sees m report its one end. */
static void stop_and_wait(Ctx *c, UnitManager *m, int executor_id, const char *why, const char *reason) {
        const Record *r;

        ck_assert_int_eq(unit_manager_stop(m, c->app_id, executor_id, why), 1);
        r = wait_for(c, c->app_id, executor_id, true);
        ck_assert_ptr_eq(r->m, m);
        ck_assert_int_eq(r->o.state, KILLED);
        ck_assert_str_eq(r->o.reason, reason);
        assert_once(c, c->app_id, executor_id);
}

/* Runs executor 1 of c's app in that SPARK_FAKE_MODE (and memory_mb and
 * binary unless 0 or NULL) and returns its one terminal outcome. */
static const Record *run_to_end(Ctx *c, const char *mode, int64_t memory_mb, const char *binary) {
        const char *app_id = c->app_id;
        char env0[256];
        const char *env[] = { env0 };
        ExecutorUnitSpec spec;
        UnitManager *m = manager_new(c);
        const Record *r;

        snprintf(env0, sizeof(env0), "SPARK_FAKE_MODE=%s", mode);
        spec = spec_make(app_id, 1, env, 1);
        if (memory_mb > 0)
                spec.memory_mb = memory_mb;
        if (binary)
                spec.executor_binary = binary;
        ck_assert_int_eq(unit_manager_start(m, &spec), 0);
        ck_assert_uint_eq(unit_manager_watched(m), 1);
        r = wait_for(c, app_id, 1, true);
        assert_once(c, app_id, 1);
        ck_assert_uint_eq(unit_manager_watched(m), 0);
        ck_assert_ptr_eq(r->m, m);
        unit_manager_free(m);
        return r;
}

/* Runs executor 1 of a new app in that SPARK_FAKE_MODE, and checks how it
 * ended. */
static void assert_run_ends(const char *mode, Spark__ExecutorState state, const char *reason, int exit_code) {
        Ctx c;

        ctx_init(&c);
        assert_outcome(run_to_end(&c, mode, 0, NULL), state, reason, exit_code);
        ctx_done(&c);
}

/* `systemctl --user show`: the unit as systemd holds it. */
static char *show_unit(const char *unit, const char *props) {
        char cmd[512], *out = NULL;
        size_t size = 0;
        FILE *f, *o;
        int c;

        snprintf(cmd, sizeof(cmd), "systemctl --user show '%s' -p %s", unit, props);
        f = popen(cmd, "r");
        ck_assert_ptr_nonnull(f);
        o = open_memstream(&out, &size);
        ck_assert_ptr_nonnull(o);
        while ((c = fgetc(f)) != EOF)
                fputc(c, o);
        fclose(o);
        ck_assert_int_eq(pclose(f), 0);
        return out;
}

static int systemctl(const char *verb, const char *unit) {
        char cmd[512];

        snprintf(cmd, sizeof(cmd), "systemctl --user %s '%s' >/dev/null 2>&1", verb, unit);
        return system(cmd);
}

START_TEST(test_exit_zero) {
        Ctx c;
        const Record *r;

        ctx_init(&c);
        r = run_to_end(&c, "exit:0", 0, NULL);
        assert_outcome(r, EXITED, "exit-code 0", 0);
        /* RUNNING only if systemd saw the exec succeed before the exit
         * (Type=exec, a race for a process this short), then with its pid */
        r = find_record(&c, c.app_id, 1, false);
        if (r)
                ck_assert_int_gt(r->o.pid, 0);
        ctx_done(&c);
}
END_TEST

START_TEST(test_exit_three) {
        assert_run_ends("exit:3", FAILED, "exit-code 3", 3);
}
END_TEST

START_TEST(test_kill_self) {
        assert_run_ends("kill-self:KILL", FAILED, "signal KILL", 128 + SIGKILL);
}
END_TEST

START_TEST(test_memory_limit) {
        Ctx c;
        const Record *r;

        ctx_init(&c);
        r = run_to_end(&c, "alloc:400", 50, NULL);
        ck_assert_int_eq(r->o.state, FAILED);
        /* cgroup v2 says oom-kill; on hybrid (v1 memory controller) systemd
         * 252 only sees a SIGKILL */
        ck_assert_msg(streq(r->o.reason, "oom-kill") || strncmp(r->o.reason, "signal KILL", 11) == 0,
                      "reason \"%s\"", r->o.reason);
        ck_assert_int_eq(r->o.exit_code, 128 + SIGKILL);
        ctx_done(&c);
}
END_TEST

START_TEST(test_bad_binary) {
        Ctx c;
        const Record *r;

        ctx_init(&c);
        r = run_to_end(&c, "exit:0", 0, "/nonexistent/spark-executor");
        ck_assert_int_eq(r->o.state, FAILED);
        ck_assert_str_eq(r->o.reason, "start failed: exit-code 203/EXEC");
        ck_assert_ptr_null(find_record(&c, c.app_id, 1, false));   /* it never ran */
        ctx_done(&c);
}
END_TEST

START_TEST(test_stop_and_properties) {
        char unit[UNIT_NAME_MAX], want[2 * PATH_MAX], *show;
        const char *env[] = { "SPARK_FAKE_MODE=sleep", "FOO=bar baz" };
        ExecutorUnitSpec spec;
        const Record *r;
        struct stat st;
        UnitManager *m;
        Ctx c;

        ctx_init(&c);
        m = manager_new(&c);
        spec = spec_make(c.app_id, 4, env, ELEMENTSOF(env));
        spec.cores = 2;
        spec.memory_mb = 300;
        ck_assert_int_eq(unit_manager_start(m, &spec), 0);
        ck_assert_int_eq(unit_manager_start(m, &spec), -EEXIST);
        r = wait_for(&c, c.app_id, 4, false);
        ck_assert_int_eq(r->o.state, RUNNING);
        ck_assert_str_eq(r->o.reason, "running");
        ck_assert_int_gt(r->o.pid, 0);
        ck_assert_int_eq(kill((pid_t) r->o.pid, 0), 0);

        ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), c.app_id, 4), 0);
        show = show_unit(unit, "Slice,MemoryMax,CPUQuotaPerSecUSec,CollectMode,KillMode,Environment,"
                               "WorkingDirectory,SyslogIdentifier,Type,MainPID,ActiveState,Description");
        fprintf(stderr, "%s", show);
        ck_assert_ptr_nonnull(strstr(show, "Slice=spark-executors.slice\n"));
        ck_assert_ptr_nonnull(strstr(show, "MemoryMax=314572800\n"));
        ck_assert_ptr_nonnull(strstr(show, "CPUQuotaPerSecUSec=2s\n"));
        ck_assert_ptr_nonnull(strstr(show, "CollectMode=inactive-or-failed\n"));
        ck_assert_ptr_nonnull(strstr(show, "KillMode=control-group\n"));
        ck_assert_ptr_nonnull(strstr(show, "SyslogIdentifier=spark-executor\n"));
        ck_assert_ptr_nonnull(strstr(show, "Type=exec\n"));
        ck_assert_ptr_nonnull(strstr(show, "ActiveState=active\n"));
        snprintf(want, sizeof(want), "MainPID=%" PRIi64 "\n", r->o.pid);
        ck_assert_ptr_nonnull(strstr(show, want));
        snprintf(want, sizeof(want), "WorkingDirectory=%s/%s/4\n", work_dir, c.app_id);
        ck_assert_ptr_nonnull(strstr(show, want));
        snprintf(want, sizeof(want), "SPARK_APP_ID=%s ", c.app_id);
        ck_assert_ptr_nonnull(strstr(show, want));
        ck_assert_ptr_nonnull(strstr(show, "SPARK_EXECUTOR_ID=4 "));
        ck_assert_ptr_nonnull(strstr(show, "SPARK_WORKER_ID=" WORKER_ID " "));
        ck_assert_ptr_nonnull(strstr(show, "SPARK_DRIVER_URL=" DRIVER_URL " "));
        ck_assert_ptr_nonnull(strstr(show, "SPARK_FAKE_MODE=sleep "));
        ck_assert_ptr_nonnull(strstr(show, "\"FOO=bar baz\""));
        free(show);

        snprintf(want, sizeof(want), "%s/%s/4", work_dir, c.app_id);
        ck_assert_int_eq(stat(want, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0750);

        stop_and_wait(&c, m, 4, NULL, "stopped on request");
        ck_assert_uint_eq(unit_manager_watched(m), 0);

        /* not watched any more: stopping again is sent but reports nothing */
        ck_assert_int_eq(unit_manager_stop(m, c.app_id, 4, NULL), 0);
        ck_assert_int_eq(unit_manager_stop(m, "app-x;reboot", 4, NULL), -EINVAL);
        run_for(&c, 200 * USEC_PER_MSEC);
        ck_assert_uint_eq(count_records(&c, c.app_id, 4, true), 1);

        unit_manager_free(m);
        ctx_done(&c);
}
END_TEST

START_TEST(test_stop_while_starting) {
        UnitManager *m;
        Ctx c;

        ctx_init(&c);
        m = manager_new(&c);
        start_sleeping(&c, m, 2);
        stop_and_wait(&c, m, 2, "application removed", "stopped on request: application removed");
        unit_manager_free(m);
        ctx_done(&c);
}
END_TEST

/* Starts go out one at a time; one stopped while it waits for its turn is
 * reported stopped on request, and nothing of it is left in systemd. */
START_TEST(test_start_queue) {
        char unit[UNIT_NAME_MAX];
        const Record *r;
        UnitManager *m;
        size_t running = 0;
        _cleanup_free_ char *load = NULL;
        Ctx c;

        ctx_init(&c);
        m = manager_new(&c);
        for (int i = 1; i <= 4; i++)
                start_sleeping(&c, m, i);
        ck_assert_uint_eq(unit_manager_watched(m), 4);
        ck_assert_int_eq(unit_manager_stop(m, c.app_id, 4, "application removed"), 1);

        for (int i = 1; i <= 3; i++)
                ck_assert_int_eq(wait_for(&c, c.app_id, i, false)->o.state, RUNNING);
        r = wait_for(&c, c.app_id, 4, true);
        ck_assert_int_eq(r->o.state, KILLED);
        ck_assert_str_eq(r->o.reason, "stopped on request: application removed");
        ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), c.app_id, 4), 0);
        load = show_unit(unit, "LoadState");
        ck_assert_str_eq(load, "LoadState=not-found\n"); /* nothing left of it */
        /* (RUNNING may come in any order: it is reported after the exec,
         * which a later unit's process may reach first.) */
        for (size_t i = 0; i < c.n_records; i++)
                running += c.records[i].o.state == RUNNING;
        ck_assert_uint_eq(running, 3);

        for (int i = 1; i <= 3; i++)
                ck_assert_int_eq(unit_manager_stop(m, c.app_id, i, NULL), 1);
        for (int i = 1; i <= 3; i++)
                ck_assert_int_eq(wait_for(&c, c.app_id, i, true)->o.state, KILLED);
        for (int i = 1; i <= 4; i++)
                assert_once(&c, c.app_id, i);
        ck_assert_uint_eq(unit_manager_watched(m), 0);
        unit_manager_free(m);
        ctx_done(&c);
}
END_TEST

START_TEST(test_invalid) {
        const char *env[] = { "SPARK_EXECUTOR_ID=99" };
        ExecutorUnitSpec spec;
        UnitManager *m;
        Ctx c;

        ctx_init(&c);
        m = manager_new(&c);
        spec = spec_make("app-1;systemctl poweroff", 1, NULL, 0);
        ck_assert_int_eq(unit_manager_start(m, &spec), -EINVAL);
        spec = spec_make(c.app_id, 1, env, 1);
        ck_assert_int_eq(unit_manager_start(m, &spec), -EINVAL);
        spec = spec_make(c.app_id, -3, NULL, 0);
        ck_assert_int_eq(unit_manager_start(m, &spec), -EINVAL);
        ck_assert_uint_eq(unit_manager_watched(m), 0);
        unit_manager_free(m);
        ctx_done(&c);
}
END_TEST

/* A unit of that name exists already (another worker's): StartTransientUnit
 * fails, and the reason is systemd's message. */
START_TEST(test_start_error) {
        const Record *r;
        UnitManager *m1, *m2;
        Ctx c;

        ctx_init(&c);
        m1 = manager_new(&c);
        start_sleeping(&c, m1, 1);
        wait_for(&c, c.app_id, 1, false);
        unit_manager_free(m1);

        m2 = manager_new(&c);
        start_sleeping(&c, m2, 1);
        r = wait_for(&c, c.app_id, 1, true);
        ck_assert_ptr_eq(r->m, m2);
        ck_assert_int_eq(r->o.state, FAILED);
        ck_assert_msg(strncmp(r->o.reason, "start failed: ", 14) == 0 && strstr(r->o.reason, "already"),
                      "reason \"%s\"", r->o.reason);
        assert_once(&c, c.app_id, 1);

        /* the first one still runs; stop it without watching */
        ck_assert_int_eq(unit_manager_stop(m2, c.app_id, 1, NULL), 0);
        run_for(&c, 300 * USEC_PER_MSEC);
        unit_manager_free(m2);
        ctx_done(&c);
}
END_TEST

static const AdoptedUnit *find_adopted(Ctx *c, const char *app_id, int executor_id) {
        for (size_t i = 0; i < c->n_units; i++)
                if (streq(c->units[i].app_id, app_id) && c->units[i].executor_id == executor_id)
                        return &c->units[i];
        return NULL;
}

/* Asks m for the units it finds and runs the loop until they are in c. */
static void list_units(Ctx *c, UnitManager *m) {
        usec_t deadline = now_mono_usec() + WAIT_USEC;

        c->listed = false;
        ck_assert_int_eq(unit_manager_list(m, on_list, c), 0);
        while (!c->listed) {
                ck_assert_msg(now_mono_usec() < deadline, "no listing in time");
                ck_assert_int_ge(sd_event_run(c->event, 100 * USEC_PER_MSEC), 0);
        }
        ck_assert_int_eq(c->list_error, 0);
}

/* A worker restart: the units outlive the first manager, a second one lists
 * them, re-adopts them, and sees each end. */
START_TEST(test_adoption) {
        char unit[UNIT_NAME_MAX];
        const char *sleep_env[] = { "SPARK_FAKE_MODE=sleep" }, *short_env[] = { "SPARK_FAKE_MODE=sleep:2" };
        int64_t pids[4] = {};
        ExecutorUnitSpec spec;
        const AdoptedUnit *a;
        const Record *r;
        UnitManager *m1, *m2;
        Ctx c;

        ctx_init(&c);
        m1 = manager_new(&c);
        for (int i = 1; i <= 3; i++) {
                spec = spec_make(c.app_id, i, i == 3 ? short_env : sleep_env, 1);
                spec.cores = i;
                spec.memory_mb = 100 * i;
                ck_assert_int_eq(unit_manager_start(m1, &spec), 0);
        }
        for (int i = 1; i <= 3; i++)
                pids[i] = wait_for(&c, c.app_id, i, false)->o.pid;
        unit_manager_free(m1);                  /* the worker goes away */

        m2 = manager_new(&c);
        list_units(&c, m2);
        for (int i = 1; i <= 3; i++) {
                a = find_adopted(&c, c.app_id, i);
                ck_assert_msg(a != NULL, "executor %d not listed", i);
                ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), c.app_id, i), 0);
                ck_assert_str_eq(a->unit, unit);
                ck_assert_str_eq(a->worker_id, WORKER_ID);
                ck_assert_str_eq(a->driver_url, DRIVER_URL);
                ck_assert_str_eq(a->active_state, "active");
                ck_assert_int_eq(a->cores, i);
                ck_assert_int_eq(a->memory_mb, 100 * i);
                ck_assert_int_eq(a->pid, pids[i]);
        }
        ck_assert_uint_ge(unit_manager_watched(m2), 3);
        /* no RUNNING for adopted units: the listing said so */
        ck_assert_uint_eq(count_records(&c, c.app_id, 1, false), 1);   /* m1's */

        /* stopped by us */
        stop_and_wait(&c, m2, 1, "test", "stopped on request: test");

        /* stopped by someone else */
        ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), c.app_id, 2), 0);
        ck_assert_int_eq(systemctl("stop", unit), 0);
        r = wait_for(&c, c.app_id, 2, true);
        ck_assert_int_eq(r->o.state, KILLED);
        ck_assert_str_eq(r->o.reason, "signal TERM");

        /* ended by itself */
        r = wait_for(&c, c.app_id, 3, true);
        ck_assert_int_eq(r->o.state, EXITED);
        ck_assert_str_eq(r->o.reason, "exit-code 0");

        for (int i = 1; i <= 3; i++)
                assert_once(&c, c.app_id, i);

        /* a second listing finds none of them */
        list_units(&c, m2);
        for (int i = 1; i <= 3; i++)
                ck_assert_ptr_null(find_adopted(&c, c.app_id, i));
        unit_manager_free(m2);
        ctx_done(&c);
}
END_TEST

/* Units ending while they are being listed and re-adopted: each one listed
 * gets exactly one terminal outcome, after the listing; one not listed gets
 * none from the new manager. */
START_TEST(test_list_races) {
        char modes[12][32];
        const char *envs[12][1];
        ExecutorUnitSpec spec;
        UnitManager *m1, *m2;
        size_t first;
        Ctx c;

        ctx_init(&c);
        m1 = manager_new(&c);
        for (int i = 0; i < 12; i++) {
                snprintf(modes[i], sizeof(modes[i]), "SPARK_FAKE_MODE=sleep:%.3f", 0.15 + 0.02 * i);
                envs[i][0] = modes[i];
                spec = spec_make(c.app_id, i, envs[i], 1);
                ck_assert_int_eq(unit_manager_start(m1, &spec), 0);
        }
        /* running (or, on a loaded machine, already over) */
        for (int i = 0; i < 12; i++) {
                usec_t deadline = now_mono_usec() + WAIT_USEC;

                while (!find_record(&c, c.app_id, i, false) && !find_record(&c, c.app_id, i, true)) {
                        ck_assert_msg(now_mono_usec() < deadline, "executor %d did not start", i);
                        ck_assert_int_ge(sd_event_run(c.event, 100 * USEC_PER_MSEC), 0);
                }
        }
        unit_manager_free(m1);
        first = c.n_records;

        /* list just as they end */
        usleep(150 * 1000);
        m2 = manager_new(&c);
        list_units(&c, m2);
        run_for(&c, 1500 * USEC_PER_MSEC);

        for (int i = 0; i < 12; i++) {
                bool listed = find_adopted(&c, c.app_id, i) != NULL;
                size_t ends = 0;

                for (size_t k = first; k < c.n_records; k++) {
                        const Record *r = &c.records[k];

                        if (!streq(r->app_id, c.app_id) || r->executor_id != i)
                                continue;
                        ck_assert_int_ne(r->o.state, RUNNING);
                        ck_assert_int_eq(r->o.state, EXITED);
                        ck_assert_str_eq(r->o.reason, "exit-code 0");
                        ck_assert_uint_ge(k, c.records_at_list);
                        ends++;
                }
                fprintf(stderr, "  executor %d: %s, %zu ends\n", i, listed ? "listed" : "not listed", ends);
                ck_assert_uint_eq(ends, listed ? 1 : 0);
        }
        for (size_t k = 0; k < c.n_units; k++)
                if (!streq(c.units[k].app_id, c.app_id))
                        fprintf(stderr, "  also listed: %s (%s)\n", c.units[k].unit, c.units[k].active_state);
        ck_assert_uint_eq(unit_manager_watched(m2), 0);
        unit_manager_free(m2);
        ctx_done(&c);
}
END_TEST

/* Listing while a unit this manager started is watched: it is listed as it
 * is, and still reported once. */
START_TEST(test_list_own) {
        const AdoptedUnit *a;
        const Record *r;
        UnitManager *m;
        Ctx c;

        ctx_init(&c);
        m = manager_new(&c);
        start_sleeping(&c, m, 5);
        r = wait_for(&c, c.app_id, 5, false);
        list_units(&c, m);
        a = find_adopted(&c, c.app_id, 5);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(a->pid, r->o.pid);
        ck_assert_str_eq(a->worker_id, WORKER_ID);
        ck_assert_str_eq(a->active_state, "active");
        stop_and_wait(&c, m, 5, NULL, "stopped on request");
        unit_manager_free(m);
        ctx_done(&c);
}
END_TEST

/* Freeing the manager with calls in flight: no handler runs, nothing leaks
 * (the sanitizer build checks).  Whether the starts take effect is up to
 * systemd: it refuses a call whose sender has gone by the time it gets to it. */
START_TEST(test_free_in_flight) {
        char unit[UNIT_NAME_MAX];
        UnitManager *m;
        Ctx c;

        ctx_init(&c);
        m = manager_new(&c);
        for (int i = 1; i <= 2; i++)
                start_sleeping(&c, m, i);
        ck_assert_int_eq(unit_manager_list(m, on_list, &c), 0);
        ck_assert_int_eq(unit_manager_stop(m, c.app_id, 2, NULL), 1);
        unit_manager_free(m);
        run_for(&c, 500 * USEC_PER_MSEC);
        ck_assert_uint_eq(c.n_records, 0);
        ck_assert(!c.listed);

        for (int i = 1; i <= 2; i++) {
                ck_assert_int_eq(executor_unit_name(unit, sizeof(unit), c.app_id, i), 0);
                (void) systemctl("stop", unit);
        }
        ctx_done(&c);
}
END_TEST

static void stop_leftovers(void) {
        char pattern[128], stamp[APP_ID_MAX + 1];

        /* app-<stamp>-NNNN: every unit this run made */
        if (app_id_format(stamp, sizeof(stamp), app_stamp, 0) < 0)
                return;
        stamp[strlen(stamp) - 4] = 0;
        snprintf(pattern, sizeof(pattern), "spark-executor-%s*", stamp);
        (void) systemctl("stop", pattern);
}

static int skip(const char *why) {
        printf("SKIP: test-executor-unit: %s\n", why);
        return 77;
}

int main(void) {
        _cleanup_free_ char *version = NULL;
        char exe[PATH_MAX], cmd[PATH_MAX + 16], *dir;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *rt = getenv("XDG_RUNTIME_DIR");
        const char *root;
        sd_bus *bus = NULL;
        const TTest *tests[] = {
                test_exit_zero,
                test_exit_three,
                test_kill_self,
                test_memory_limit,
                test_start_queue,
                test_bad_binary,
                test_stop_and_properties,
                test_stop_while_starting,
                test_invalid,
                test_start_error,
                test_adoption,
                test_list_own,
                test_list_races,
                test_free_in_flight,
                NULL,
        };
        const CheckOptions options = { .timeout = 60 };
        ssize_t n;
        int failed, r;

        if (isempty(rt))
                return skip("XDG_RUNTIME_DIR is not set: no systemd user manager to test against "
                            "(start one with tests/harness/usermgr.sh)");
        r = sd_bus_open_user(&bus);
        if (r < 0)
                return skip("cannot connect to the user bus in $XDG_RUNTIME_DIR");
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "Version", &error, &version);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        if (r < 0)
                return skip("no systemd manager answers on the user bus");

        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n < 0) {
                perror("readlink /proc/self/exe");
                return 1;
        }
        exe[n] = 0;
        dir = dirname(exe);
        snprintf(fake_executor, sizeof(fake_executor), "%s/helpers/fake-executor", dir);
        if (access(fake_executor, X_OK) < 0) {
                fprintf(stderr, "%s is missing: make test-helpers\n", fake_executor);
                return 1;
        }
        /* Not under /tmp: the units run with PrivateTmp=yes and
         * ReadWritePaths= of their work dir, which must be visible to them. */
        root = getenv("SPARK_TEST_ROOT") ?: "/var/lib/spark-test";
        if (mkdir(root, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "mkdir %s: %m\n", root);
                return 1;
        }
        snprintf(work_dir, sizeof(work_dir), "%s/executor-unit.XXXXXX", root);
        if (!mkdtemp(work_dir)) {
                perror("mkdtemp");
                return 1;
        }
        /* every unit's LoadCredential=spark-executor-secret */
        snprintf(secret_file, sizeof(secret_file), "%s/secret", work_dir);
        {
                FILE *f = fopen(secret_file, "we");
                if (!f || fwrite("0123456789abcdef0123456789abcdef", 1, 32, f) != 32 || fclose(f) != 0) {
                        perror(secret_file);
                        return 1;
                }
        }
        app_stamp = time(NULL);
        fprintf(stderr, "systemd %s, executor %s, work dir %s\n", version, fake_executor, work_dir);

        failed = check_run_tests("executor-unit", &options, tests);

        stop_leftovers();
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work_dir);
        (void) !system(cmd);
        return failed;
}
