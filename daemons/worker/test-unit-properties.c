/* The executor unit's spec checks, command line, environment, working
 * directory and property array (unit-properties.c), without systemd. */
#include <check.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <systemd/sd-bus.h>

#include "check-run.h"
#include "executor-env.h"
#include "macro.h"
#include "unit-properties.h"
#include "unit-sandbox.h"

static const char *const app_env[] = { "FOO=bar", "JAVA_OPTS=-Xmx1g -Dx=\"y z\"", "EMPTY=" };

#define SECRET_FILE "/run/spark-worker/secrets/tcp___0.0.0.0_7081/spark-executor-app-20261129172233-0001-7.service"

static ExecutorUnitSpec good_spec(void) {
        return (ExecutorUnitSpec) {
                .app_id = "app-20261129172233-0001",
                .executor_id = 7,
                .worker_id = "worker-20261129172233-node-1.lan-7081",
                .cores = 2,
                .memory_mb = 512,
                .driver_url = "tcp://10.0.0.1:7091",
                .env = app_env,
                .n_env = ELEMENTSOF(app_env),
                .executor_binary = "/usr/lib/spark/spark-executor",
                .work_dir = "/var/lib/spark/work",
                .slice = "spark-executors.slice",
                .user = "spark",
                .secret_file = SECRET_FILE,
        };
}

static void assert_invalid(const ExecutorUnitSpec *spec, bool system_bus, const char *needle) {
        char error[256] = "";

        ck_assert_int_eq(executor_unit_spec_validate(spec, system_bus, error, sizeof(error)), -EINVAL);
        ck_assert_msg(strstr(error, needle), "error \"%s\" does not mention \"%s\"", error, needle);
}

/* needle NULL: the spec is fine. */
static void assert_validation(const ExecutorUnitSpec *spec, bool system_bus, const char *needle) {
        char error[256] = "";

        if (needle)
                assert_invalid(spec, system_bus, needle);
        else
                ck_assert_msg(executor_unit_spec_validate(spec, system_bus, error, sizeof(error)) == 0,
                              "refused: %s", error);
}

/* good_spec() with one string field set to value, and what its check says:
 * the words of the error, or NULL when the value is fine. */
typedef struct FieldCase {
        size_t field;           /* offsetof() a const char * of ExecutorUnitSpec */
        const char *value;
        bool system_bus;
        const char *needle;
} FieldCase;

#define FIELD(f) offsetof(ExecutorUnitSpec, f)

static const FieldCase field_cases[] = {
        { FIELD(app_id), "app-20261129172233-0001.service; rm -rf /", false, "app id" },
        { FIELD(app_id), "../../etc", false, "app id" },
        { FIELD(app_id), NULL, false, "app id" },
        { FIELD(worker_id), "worker-a/../b", false, "worker id" },
        { FIELD(driver_url), "tcp://h:1 --evil", false, "driver URL" },
        { FIELD(driver_url), "tcp://$HOME:1", false, "driver URL" },
        { FIELD(driver_url), "localhost", false, "driver URL" },
        { FIELD(executor_binary), "spark-executor", false, "executor binary" },
        { FIELD(executor_binary), "/usr/lib/$X/spark-executor", false, "executor binary" },
        { FIELD(work_dir), "/var/lib/spark/../../etc", false, "work dir" },
        { FIELD(work_dir), "/var/lib/spark/..", false, "work dir" },
        { FIELD(work_dir), "/var/lib/spark/..x", false, NULL },
        { FIELD(slice), "spark.slice\nExecStart=/bin/sh", false, "slice" },
        { FIELD(slice), "spark.service", false, "slice" },
        { FIELD(slice), NULL, false, NULL },
        { FIELD(user), NULL, true, "user" },
        { FIELD(user), NULL, false, NULL },     /* ignored on the user bus */
        { FIELD(user), "root:root", true, "user" },
        { FIELD(ca_file), "/etc/spark/tls/ca.pem", false, NULL },
        { FIELD(ca_file), "ca.pem", false, "CA file" },
        { FIELD(ca_file), "/etc/spark/../ca.pem", false, "CA file" },
        { FIELD(ca_file), "/c\nExecStart=/x", false, "CA file" },
        { FIELD(secret_file), NULL, false, "secret file" },
        { FIELD(secret_file), "", false, "secret file" },
        { FIELD(secret_file), "relative/secret", false, "secret file" },
        { FIELD(secret_file), "/run/a$HOME", false, "secret file" },
        { FIELD(secret_file), "/run/a:b", false, "secret file" },
};

/* One entry of the app's env, and the words of its error (NULL: fine). */
static const struct {
        const char *entry, *needle;
} env_cases[] = {
        { "SPARK_APP_ID=app-x", "may not set SPARK_APP_ID: the worker sets it" },
        { "SPARK_EXECUTOR_CORES=64", "may not set SPARK_EXECUTOR_CORES" },
        { "SPARK_TLS_KEY_FILE=/tmp/mine.key", "may not set SPARK_TLS_KEY_FILE" },
        { "SPARK_TLS_ANYTHING=x", "may not set SPARK_TLS_ANYTHING" },
        { "SPARK_FAKE_MODE=sleep", NULL },
        { "NOEQUALS", "KEY=VALUE" },
        { "=v", "KEY=VALUE" },
        { "1X=v", "not a valid name" },
        { "A-B=v", "not a valid name" },
        { "X=line\nbreak", "control characters" },
        { "X=\xc3\x28", "UTF-8" },
        { "X=caf\xc3\xa9\ttab", NULL },
        { NULL, "KEY=VALUE" },
};

START_TEST(test_validate) {
        ExecutorUnitSpec s = good_spec();
        const char *env_bad[1];

        ck_assert_int_eq(executor_unit_spec_validate(&s, true, NULL, 0), 0);
        ck_assert_int_eq(executor_unit_spec_validate(&s, false, NULL, 0), 0);

        for (size_t i = 0; i < ELEMENTSOF(field_cases); i++) {
                const FieldCase *c = &field_cases[i];

                s = good_spec();
                *(const char **) ((char *) &s + c->field) = c->value;
                assert_validation(&s, c->system_bus, c->needle);
        }

        s = good_spec(), s.executor_id = -1;
        assert_invalid(&s, false, "executor id");
        s = good_spec(), s.cores = -1;
        assert_invalid(&s, false, "cores");
        s = good_spec(), s.cores = 0;
        assert_invalid(&s, false, "cores");
        s = good_spec(), s.memory_mb = 0;
        assert_invalid(&s, false, "memory");
        s = good_spec(), s.memory_mb = INT64_MAX;
        assert_invalid(&s, false, "memory");

        s = good_spec(), s.env = env_bad, s.n_env = 1;
        for (size_t i = 0; i < ELEMENTSOF(env_cases); i++) {
                env_bad[0] = env_cases[i].entry;
                assert_validation(&s, false, env_cases[i].needle);
        }
        s = good_spec(), s.n_env = EXECUTOR_ENV_MAX + 1;
        assert_invalid(&s, false, "entries");
}
END_TEST

START_TEST(test_argv_env) {
        _cleanup_(unit_strv_freep) char **argv = NULL, **env = NULL;
        ExecutorUnitSpec s = good_spec();
        const char *want_argv[] = {
                "/usr/lib/spark/spark-executor", "--driver", "tcp://10.0.0.1:7091", "--app-id",
                "app-20261129172233-0001", "--executor-id", "7", "--cores", "2", "--worker-id",
                "worker-20261129172233-node-1.lan-7081", NULL,
        };
        const char *want_env[] = {
                "FOO=bar", "JAVA_OPTS=-Xmx1g -Dx=\"y z\"", "EMPTY=",
                "SPARK_APP_ID=app-20261129172233-0001", "SPARK_EXECUTOR_ID=7",
                "SPARK_WORKER_ID=worker-20261129172233-node-1.lan-7081",
                "SPARK_DRIVER_URL=tcp://10.0.0.1:7091", "SPARK_EXECUTOR_CORES=2",
                "SPARK_EXECUTOR_MEMORY_MB=512", NULL,
        };
        char dir[256];

        ck_assert_int_eq(executor_unit_argv(&s, &argv), 0);
        for (size_t i = 0; i < ELEMENTSOF(want_argv); i++)
                ck_assert_pstr_eq(argv[i], want_argv[i]);
        argv = unit_strv_free(argv);
        /* the driver's task channel, when it has one: the executor
         * registers there */
        s.driver_channel_port = 41597;
        ck_assert_int_eq(executor_unit_argv(&s, &argv), 0);
        for (size_t i = 0; i < ELEMENTSOF(want_argv) - 1; i++)
                ck_assert_pstr_eq(argv[i], want_argv[i]);
        ck_assert_pstr_eq(argv[ELEMENTSOF(want_argv) - 1], "--driver-channel-port");
        ck_assert_pstr_eq(argv[ELEMENTSOF(want_argv)], "41597");
        ck_assert_ptr_null(argv[ELEMENTSOF(want_argv) + 1]);
        s.driver_channel_port = 0;
        ck_assert_int_eq(executor_unit_environment(&s, &env), 0);
        for (size_t i = 0; i < ELEMENTSOF(want_env); i++)
                ck_assert_pstr_eq(env[i], want_env[i]);
        env = unit_strv_free(env);

        /* with a CA (a TLS cluster) the environment is the same: no file
         * of TLS's, no secret, nothing but what is above */
        s.ca_file = "/etc/spark/tls/ca.pem";
        ck_assert_int_eq(executor_unit_environment(&s, &env), 0);
        for (size_t i = 0; i < ELEMENTSOF(want_env); i++)
                ck_assert_pstr_eq(env[i], want_env[i]);
        for (size_t i = 0; env[i]; i++) {
                ck_assert_msg(!strstr(env[i], "SPARK_TLS_"), "%s", env[i]);
                ck_assert_msg(!strstr(env[i], "/etc/spark"), "%s", env[i]);
                ck_assert_msg(!strstr(env[i], "secret"), "%s", env[i]);
        }

        /* Every name the worker sets, and only those, is one an app may not
         * set: what the configuration, the master and the worker refuse. */
        for (size_t i = 0; env[i]; i++) {
                size_t len = strcspn(env[i], "=");
                bool from_app = i < s.n_env;

                ck_assert_msg(executor_env_name_is_reserved(env[i], len) != from_app, "%s", env[i]);
        }
        s.ca_file = NULL;

        ck_assert_int_eq(executor_unit_work_dir(&s, dir, sizeof(dir)), 0);
        ck_assert_str_eq(dir, "/var/lib/spark/work/app-20261129172233-0001/7");
        s.work_dir = "/srv/work//";
        ck_assert_int_eq(executor_unit_work_dir(&s, dir, sizeof(dir)), 0);
        ck_assert_str_eq(dir, "/srv/work/app-20261129172233-0001/7");
        s.work_dir = "/";
        ck_assert_int_eq(executor_unit_work_dir(&s, dir, sizeof(dir)), 0);
        ck_assert_str_eq(dir, "/app-20261129172233-0001/7");
        ck_assert_int_eq(executor_unit_work_dir(&s, dir, 10), -ENOBUFS);
}
END_TEST

START_TEST(test_make_work_dir) {
        char tmpl[] = "/tmp/spark-test-workdir.XXXXXX", base[128], dir[256], evil[300];
        ExecutorUnitSpec s = good_spec();
        struct stat st;

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        snprintf(base, sizeof(base), "%s/a/b", tmpl);   /* mkdir -p */
        s.work_dir = base;
        ck_assert_int_eq(executor_unit_make_work_dir(&s, false, dir, sizeof(dir)), 0);
        ck_assert_int_eq(stat(dir, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0750);
        /* again: it exists, fine */
        ck_assert_int_eq(executor_unit_make_work_dir(&s, false, dir, sizeof(dir)), 0);

        /* a symlink planted where the executor's directory goes is not followed */
        s.executor_id = 8;
        snprintf(evil, sizeof(evil), "%s/a/b/%s/8", tmpl, s.app_id);
        ck_assert_int_eq(symlink("/etc", evil), 0);
        ck_assert_int_lt(executor_unit_make_work_dir(&s, false, dir, sizeof(dir)), 0);
        unlink(evil);

        /* system bus: an unknown user is an error, not a root-owned directory */
        s.user = "no-such-user-spark-test";
        ck_assert_int_eq(executor_unit_make_work_dir(&s, true, dir, sizeof(dir)), -ESRCH);

        snprintf(evil, sizeof(evil), "rm -rf '%s'", tmpl);
        ck_assert_int_eq(system(evil), 0);
}
END_TEST

/* The StartTransientUnit call with the spec's property array, sealed and
 * rewound to be read back as systemd would; its bus is never connected to
 * anyone. */
typedef struct PropertyMessage {
        sd_bus *bus;
        sd_bus_message *m;
        int peer_fd;
} PropertyMessage;

static sd_bus_message *property_message_init(PropertyMessage *p, const ExecutorUnitSpec *s, bool system_bus) {
        int fds[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        p->peer_fd = fds[1];
        ck_assert_int_ge(sd_bus_new(&p->bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(p->bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(p->bus), 0);
        ck_assert_int_ge(sd_bus_message_new_method_call(p->bus, &p->m, "org.freedesktop.systemd1",
                                                        "/org/freedesktop/systemd1",
                                                        "org.freedesktop.systemd1.Manager", "StartTransientUnit"),
                         0);
        ck_assert_int_ge(executor_unit_append_properties(p->m, s, system_bus, "/w/app/7"), 0);
        ck_assert_int_ge(sd_bus_message_seal(p->m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(p->m, true), 0);
        return p->m;
}

static void property_message_done(PropertyMessage *p) {
        if (!p->m)
                return;
        p->m = sd_bus_message_unref(p->m);
        sd_bus_close_unref(p->bus);   /* never authenticated: nothing to flush */
        close(p->peer_fd);
}

/* Reads back the property array as systemd would: names and signatures. */
START_TEST(test_properties) {
        _cleanup_(property_message_done) PropertyMessage sys = {}, user = {};
        ExecutorUnitSpec s = good_spec();
        sd_bus_message *m;
        int r;

        s.ca_file = "/etc/spark/tls/ca.pem";
        struct { const char *name, *sig; bool seen; } want[] = {
                { "Description", "s", false }, { "Type", "s", false },
                { "ExecStart", "a(sasb)", false }, { "Slice", "s", false }, { "User", "s", false },
                { "WorkingDirectory", "s", false }, { "Environment", "as", false },
                { "MemoryAccounting", "b", false }, { "MemoryMax", "t", false },
                { "CPUAccounting", "b", false },
                { "CPUQuotaPerSecUSec", "t", false }, { "CPUWeight", "t", false },
                { "CollectMode", "s", false }, { "KillMode", "s", false },
                { "TimeoutStopUSec", "t", false }, { "SyslogIdentifier", "s", false },
                { "LogExtraFields", "aay", false }, { "LoadCredential", "a(ss)", false },
        };
        unsigned n_credentials = 0;

        m = property_message_init(&sys, &s, true);
        ck_assert_str_eq(sd_bus_message_get_signature(m, true), "a(sv)");

        ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', "(sv)"), 0);
        while ((r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                const char *name, *contents;
                char type;
                bool known = false;

                ck_assert_int_ge(sd_bus_message_read(m, "s", &name), 0);
                ck_assert_int_gt(sd_bus_message_peek_type(m, &type, &contents), 0);
                for (size_t i = 0; i < ELEMENTSOF(want); i++)
                        if (streq(want[i].name, name)) {
                                ck_assert_msg(streq(want[i].sig, contents), "%s has signature %s", name, contents);
                                want[i].seen = true;
                                known = true;
                        }
                ck_assert_msg(known || exec_property_info(name), "unexpected property %s", name);

                if (streq(name, "MemoryMax")) {
                        uint64_t v;
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "t", &v), 0);
                        ck_assert_uint_eq(v, 512ULL << 20);
                } else if (streq(name, "CPUQuotaPerSecUSec")) {
                        uint64_t v;
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "t", &v), 0);
                        ck_assert_uint_eq(v, 2000000);
                } else if (streq(name, "CollectMode") || streq(name, "KillMode") ||
                           streq(name, "SyslogIdentifier") || streq(name, "WorkingDirectory") ||
                           streq(name, "Type")) {
                        const char *v;
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "s", &v), 0);
                        if (streq(name, "CollectMode"))
                                ck_assert_str_eq(v, "inactive-or-failed");
                        if (streq(name, "KillMode"))
                                ck_assert_str_eq(v, "control-group");
                        if (streq(name, "SyslogIdentifier"))
                                ck_assert_str_eq(v, "spark-executor");
                        if (streq(name, "WorkingDirectory"))
                                ck_assert_str_eq(v, "/w/app/7");
                        if (streq(name, "Type"))
                                ck_assert_str_eq(v, "exec");
                } else if (streq(name, "LogExtraFields")) {
                        const void *p;
                        size_t n;
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'v', "aay"), 0);
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "ay"), 0);
                        ck_assert_int_gt(sd_bus_message_read_array(m, 'y', &p, &n), 0);
                        ck_assert_uint_eq(n, strlen("SPARK_APP_ID=app-20261129172233-0001"));
                        ck_assert(memcmp(p, "SPARK_APP_ID=app-20261129172233-0001", n) == 0);
                        ck_assert_int_gt(sd_bus_message_read_array(m, 'y', &p, &n), 0);
                        ck_assert(memcmp(p, "SPARK_EXECUTOR_ID=7", n) == 0);
                        ck_assert_int_ge(sd_bus_message_skip(m, NULL), 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                } else if (streq(name, "LoadCredential")) {
                        const char *id, *path;
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'v', "a(ss)"), 0);
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(ss)"), 0);
                        while ((r = sd_bus_message_read(m, "(ss)", &id, &path)) > 0) {
                                if (n_credentials == 0) {
                                        ck_assert_str_eq(id, "spark-executor-secret");
                                        ck_assert_str_eq(path, SECRET_FILE);
                                } else {
                                        ck_assert_str_eq(id, "spark-ca");
                                        ck_assert_str_eq(path, "/etc/spark/tls/ca.pem");
                                }
                                n_credentials++;
                        }
                        ck_assert_int_ge(r, 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                } else if (streq(name, "Environment")) {
                        char **l = NULL;
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'v', "as"), 0);
                        ck_assert_int_ge(sd_bus_message_read_strv(m, &l), 0);
                        for (char **e = l; e && *e; e++)
                                ck_assert_msg(!strstr(*e, "SPARK_TLS_") && !strstr(*e, "/etc/spark"), "%s", *e);
                        unit_strv_free(l);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                } else
                        ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
        ck_assert_int_ge(r, 0);
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                ck_assert_msg(want[i].seen, "no %s", want[i].name);
        ck_assert_uint_eq(n_credentials, 2);

        /* the user bus: no User= */
        m = property_message_init(&user, &s, false);
        ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', "(sv)"), 0);
        while ((r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                const char *name;
                ck_assert_int_ge(sd_bus_message_read(m, "s", &name), 0);
                ck_assert_str_ne(name, "User");
                ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
}
END_TEST

/* The property array as text, one "Name:SIGNATURE=value" line each; lists
 * joined by blanks, (bas) as "allow|deny names", a(ssbt) as
 * "src:dst:ignore:flags". */
static char *dump_properties(const ExecutorUnitSpec *s, bool system_bus) {
        _cleanup_(property_message_done) PropertyMessage p = {};
        sd_bus_message *m = property_message_init(&p, s, system_bus);
        char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&buf, &size);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', "(sv)"), 0);
        while ((r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                const char *name, *contents, *str;
                char type;
                uint64_t t;
                uint32_t u;
                int b;

                ck_assert_int_ge(sd_bus_message_read(m, "s", &name), 0);
                ck_assert_int_gt(sd_bus_message_peek_type(m, &type, &contents), 0);
                fprintf(f, "%s:%s=", name, contents);
                ck_assert_int_ge(sd_bus_message_enter_container(m, 'v', contents), 0);
                if (streq(contents, "b")) {
                        ck_assert_int_ge(sd_bus_message_read(m, "b", &b), 0);
                        fputs(b ? "yes" : "no", f);
                } else if (streq(contents, "s")) {
                        ck_assert_int_ge(sd_bus_message_read(m, "s", &str), 0);
                        fputs(str, f);
                } else if (streq(contents, "t")) {
                        ck_assert_int_ge(sd_bus_message_read(m, "t", &t), 0);
                        fprintf(f, "%llu", (unsigned long long) t);
                } else if (streq(contents, "u")) {
                        ck_assert_int_ge(sd_bus_message_read(m, "u", &u), 0);
                        fprintf(f, "%04o", u);
                } else if (streq(contents, "as") || streq(contents, "(bas)")) {
                        if (contents[0] == '(') {
                                ck_assert_int_ge(sd_bus_message_enter_container(m, 'r', "bas"), 0);
                                ck_assert_int_ge(sd_bus_message_read(m, "b", &b), 0);
                                fputs(b ? "allow" : "deny", f);
                        }
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "s"), 0);
                        while ((r = sd_bus_message_read(m, "s", &str)) > 0)
                                fprintf(f, " %s", str);
                        ck_assert_int_ge(r, 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                        if (contents[0] == '(')
                                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                } else if (streq(contents, "a(ssbt)")) {
                        const char *src, *dst;
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(ssbt)"), 0);
                        while ((r = sd_bus_message_read(m, "(ssbt)", &src, &dst, &b, &t)) > 0)
                                fprintf(f, " %s:%s:%d:%llu", src, dst, b, (unsigned long long) t);
                        ck_assert_int_ge(r, 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                } else if (streq(contents, "a(ss)")) {
                        const char *a, *c;
                        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(ss)"), 0);
                        while ((r = sd_bus_message_read(m, "(ss)", &a, &c)) > 0)
                                fprintf(f, " %s %s", a, c);
                        ck_assert_int_ge(r, 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                } else
                        ck_assert_int_ge(sd_bus_message_skip(m, contents), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                fputc('\n', f);
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_eq(fclose(f), 0);
        return buf;
}

static void assert_line(const char *dump, const char *line, bool present) {
        _cleanup_free_ char *l = NULL;

        ck_assert_int_ge(asprintf(&l, "\n%s\n", line), 0);
        ck_assert_msg(!!strstr(dump, l) == present, "%s %s in:\n%s", line, present ? "missing" : "present", dump);
}

static size_t count_name(const char *dump, const char *name) {
        _cleanup_free_ char *l = NULL;
        size_t n = 0;

        ck_assert_int_ge(asprintf(&l, "\n%s:", name), 0);
        for (const char *p = dump; (p = strstr(p, l)); p++)
                n++;
        return n;
}

static char *mfree_test(char *p) {
        free(p);
        return NULL;
}

START_TEST(test_sandbox) {
        _cleanup_free_ char *d = NULL;
        ExecutorUnitSpec s = good_spec();
        const char *hidden[] = { "/etc/spark/tls/node.key", "/var/lib/spark/master" };
        const char *props[] = { "TasksMax=512", "ProtectHome=no", "BindReadOnlyPaths=-/opt/data:/data:norbind /srv",
                                "DeviceAllow=/dev/nvidia0 rw", "SystemCallFilter=~@mount @swap",
                                "InaccessiblePaths=/home/a", "InaccessiblePaths=-/home/b" };
        static const char *const builtin[] = {
                "NoNewPrivileges:b=yes", "ProtectSystem:s=strict", "PrivateTmp:b=yes", "ProtectHome:s=read-only",
                "ProtectKernelTunables:b=yes", "ProtectKernelModules:b=yes", "ProtectKernelLogs:b=yes",
                "ProtectControlGroups:b=yes", "ProtectClock:b=yes", "ProtectHostname:b=yes",
                "ProtectProc:s=invisible", "PrivateMounts:b=yes", "RestrictSUIDSGID:b=yes",
                "RestrictRealtime:b=yes", "RestrictNamespaces:t=0", "LockPersonality:b=yes",
                "CapabilityBoundingSet:t=0", ("SystemCallFilter:(bas)=allow " EXECUTOR_SYSCALL_FILTER),
                "SystemCallArchitectures:as= native", "RestrictAddressFamilies:(bas)=allow AF_INET AF_INET6 AF_UNIX",
                "DevicePolicy:s=closed", "UMask:u=0077", "TasksMax:t=4096", "CPUAccounting:b=yes",
        };
        char user[80];

        /* a named user on the system bus: the built-in sandbox, the work dir writable, the keys hidden */
        s.hidden_paths = hidden, s.n_hidden_paths = ELEMENTSOF(hidden);
        d = dump_properties(&s, true);
        for (size_t i = 0; i < ELEMENTSOF(builtin); i++)
                assert_line(d, builtin[i], true);
        assert_line(d, "User:s=spark", true);
        assert_line(d, "ReadWritePaths:as= /w/app/7", true);
        assert_line(d, "InaccessiblePaths:as= -/etc/spark/tls/node.key", true);
        assert_line(d, "InaccessiblePaths:as= -/var/lib/spark/master", true);
        ck_assert_uint_eq(count_name(d, "DynamicUser"), 0);
        ck_assert_uint_eq(count_name(d, "PrivateDevices"), 0);
        d = mfree_test(d);

        /* the user bus: the same sandbox, no user */
        d = dump_properties(&s, false);
        for (size_t i = 0; i < ELEMENTSOF(builtin); i++)
                assert_line(d, builtin[i], true);
        ck_assert_uint_eq(count_name(d, "User"), 0);
        assert_line(d, "ReadWritePaths:as= /w/app/7", true);
        d = mfree_test(d);

        /* executor_properties replace the built-in ones of their names, all entries of a name together */
        s.properties = props, s.n_properties = ELEMENTSOF(props);
        ck_assert_int_eq(executor_unit_spec_validate(&s, true, NULL, 0), 0);
        d = dump_properties(&s, true);
        assert_line(d, "TasksMax:t=512", true);
        ck_assert_uint_eq(count_name(d, "TasksMax"), 1);
        assert_line(d, "ProtectHome:s=no", true);
        ck_assert_uint_eq(count_name(d, "ProtectHome"), 1);
        assert_line(d, "BindReadOnlyPaths:a(ssbt)= /opt/data:/data:1:0 /srv:/srv:0:16384", true);
        assert_line(d, "DeviceAllow:a(ss)= /dev/nvidia0 rw", true);
        assert_line(d, "SystemCallFilter:(bas)=deny @mount @swap", true);
        ck_assert_uint_eq(count_name(d, "SystemCallFilter"), 1);
        assert_line(d, "InaccessiblePaths:as= /home/a", true);
        assert_line(d, "InaccessiblePaths:as= -/home/b", true);
        ck_assert_uint_eq(count_name(d, "InaccessiblePaths"), 2);
        assert_line(d, "NoNewPrivileges:b=yes", true);
        d = mfree_test(d);

        /* a dynamic user: its name, DynamicUser=, StateDirectory= instead of ReadWritePaths= */
        s = good_spec(), s.user = "dynamic";
        d = dump_properties(&s, true);
        assert_line(d, "User:s=spark-app-20261129172233-0001", true);
        assert_line(d, "DynamicUser:b=yes", true);
        assert_line(d, "StateDirectory:as= spark/work/app-20261129172233-0001/7", true);
        ck_assert_uint_eq(count_name(d, "ReadWritePaths"), 0);
        d = mfree_test(d);
        /* ignored on the user bus */
        d = dump_properties(&s, false);
        ck_assert_uint_eq(count_name(d, "User"), 0);
        ck_assert_uint_eq(count_name(d, "DynamicUser"), 0);
        assert_line(d, "ReadWritePaths:as= /w/app/7", true);
        d = mfree_test(d);

        ck_assert_int_eq(executor_unit_dynamic_user("app-20261129172233-0001", user, sizeof(user)), 0);
        ck_assert_str_eq(user, "spark-app-20261129172233-0001");
        ck_assert_int_eq(executor_unit_dynamic_user("app-20261129172233-1234567", user, sizeof(user)), 0);
        ck_assert_str_eq(user, "spark-app-20261129172233-1234567");
        ck_assert_int_eq(executor_unit_dynamic_user("app-20261129172233-12345678", user, sizeof(user)), 0);
        ck_assert_uint_eq(strlen(user), 32);
        ck_assert(strncmp(user, "spark-", 6) == 0);
        ck_assert_int_eq(executor_unit_dynamic_user("app-20261129172233-12345679", user + 40, sizeof(user) - 40), 0);
        ck_assert_str_ne(user, user + 40);
}
END_TEST

START_TEST(test_sandbox_validate) {
        ExecutorUnitSpec s = good_spec();
        const char *props[1];
        const char *hidden[] = { "relative/key" };
        char dir[256];

        s.properties = props, s.n_properties = 1;
        props[0] = "User=root";
        assert_invalid(&s, false, "executor_properties: User: the worker sets it");
        props[0] = "ExecStart=/bin/sh";
        assert_invalid(&s, false, "ExecStart");
        props[0] = "PrivateTmp=perhaps";
        assert_invalid(&s, false, "PrivateTmp");
        props[0] = "PrivateTmp=no";
        ck_assert_int_eq(executor_unit_spec_validate(&s, false, NULL, 0), 0);

        s = good_spec(), s.hidden_paths = hidden, s.n_hidden_paths = 1;
        assert_invalid(&s, false, "hidden path");

        /* a dynamic user's work dir must be below /var/lib */
        s = good_spec(), s.user = "dynamic", s.work_dir = "/srv/spark";
        assert_invalid(&s, true, "/var/lib/");
        ck_assert_int_eq(executor_unit_spec_validate(&s, false, NULL, 0), 0);
        /* and the worker does not make it: systemd does */
        s.work_dir = "/var/lib/spark-test-nonexistent/work";
        ck_assert_int_eq(executor_unit_make_work_dir(&s, true, dir, sizeof(dir)), 0);
        ck_assert_str_eq(dir, "/var/lib/spark-test-nonexistent/work/app-20261129172233-0001/7");
        ck_assert_int_eq(access("/var/lib/spark-test-nonexistent", F_OK), -1);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_validate,
                test_argv_env,
                test_make_work_dir,
                test_properties,
                test_sandbox,
                test_sandbox_validate,
                NULL,
        };

        return check_run_tests("unit-properties", NULL, tests);
}
