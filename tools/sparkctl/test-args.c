/* The command line: what parses, what is a usage error and why. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check-run.h"
#include "app-driver.h"
#include "args.h"
#include "macro.h"

#define MAX_ARGS 32

/* Parses and validates a NULL-terminated argument list (after "sparkctl").
 * Returns validate's result; *a and err hold the details. */
static int check_args(Args *a, char *err, size_t size, ...) {
        static char *argv[MAX_ARGS + 2];
        va_list ap;
        int argc = 0;

        argv[argc++] = (char *) "sparkctl";
        va_start(ap, size);
        for (char *s; (s = va_arg(ap, char *));)
                argv[argc++] = s;
        va_end(ap);
        argv[argc] = NULL;
        err[0] = '\0';
        if (args_parse(argc, argv, a) < 0)
                return -EBADMSG; /* getopt refused it */
        return args_validate(a, err, size);
}

#define OK(...)                                                                                 \
        do {                                                                                    \
                int _r = check_args(&a, err, sizeof(err), __VA_ARGS__, NULL);                   \
                ck_assert_msg(_r == 0, "expected success, got %d: %s", _r, err);                \
        } while (0)

#define BAD(needle, ...)                                                                        \
        do {                                                                                    \
                int _r = check_args(&a, err, sizeof(err), __VA_ARGS__, NULL);                   \
                ck_assert_int_eq(_r, -EINVAL);                                                  \
                ck_assert_msg(strstr(err, needle), "'%s' does not say '%s'", err, needle);      \
        } while (0)

START_TEST(test_commands) {
        char err[512];
        Args a;

        OK("status");
        ck_assert_int_eq(a.command, COMMAND_STATUS);
        ck_assert(!a.json);
        OK("--master", "ipc:///tmp/m", "status", "--json");
        ck_assert_str_eq(a.master_url, "ipc:///tmp/m");
        ck_assert(a.json);
        OK("status", "--master", "tcp://h:1");  /* options after the command, too */
        OK("jobs");
        OK("--driver", "tcp://h:7091", "jobs", "--json");
        OK("job", "job-0001");
        ck_assert_str_eq(a.job_id, "job-0001");
        OK("cancel", "job-0002");
        ck_assert_int_eq(a.command, COMMAND_CANCEL);
        OK("kill-executor", "app-20261129172233-0001", "3");
        ck_assert_str_eq(a.app_id, "app-20261129172233-0001");
        ck_assert_int_eq(a.executor_id, 3);
        OK("kill-app", "app-20261129172233-0001");
        ck_assert_int_eq(a.command, COMMAND_KILL_APP);
        OK("drain", "worker-20261129172233-h1-7081");
        ck_assert_int_eq(a.command, COMMAND_DRAIN);
        ck_assert_str_eq(a.worker_id, "worker-20261129172233-h1-7081");
        ck_assert_int_eq(a.timeout_ms, 0);
        OK("drain", "worker-20261129172233-h1-7081", "--timeout", "30");
        ck_assert_int_eq(a.timeout_ms, 30000);
        OK("undrain", "worker-20261129172233-h1-7081");
        ck_assert_int_eq(a.command, COMMAND_UNDRAIN);
        OK("status", "--all", "--json");
        ck_assert(a.all);
        /* --master and --driver are accepted everywhere (aliases, scripts) */
        OK("--driver", "tcp://h:1", "--master", "tcp://h:2", "status");

        BAD("missing command", "--json");
        BAD("unknown command 'stat'", "stat");
        BAD("expected 'status'", "status", "extra");
        BAD("expected 'job ID'", "job");
        BAD("expected 'kill-executor APP EXEC'", "kill-executor", "app-20261129172233-0001");
        BAD("not a job id", "job", "job/../x");
        BAD("not a job id", "cancel", "");
        BAD("not an application id", "kill-app", "app-1");
        BAD("not an application id", "kill-executor", "nope", "1");
        BAD("not an executor id", "kill-executor", "app-20261129172233-0001", "0");
        BAD("not an executor id", "kill-executor", "app-20261129172233-0001", "x1");

        /* results, --detach, --app */
        OK("results", "job-0003", "--json");
        ck_assert_int_eq(a.command, COMMAND_RESULTS);
        ck_assert_str_eq(a.job_id, "job-0003");
        BAD("not a job id", "results", "../x");
        BAD("expected 'results ID'", "results");
        OK("submit", "--count", "2", "--command", "true", "--detach");
        ck_assert(a.detach);
        BAD("--detach is an option of submit, not of jobs", "jobs", "--detach");
        BAD("--json does not apply", "submit", "--count", "2", "--command", "true", "--detach", "--json");
        OK("--app", "etl", "jobs");
        ck_assert_str_eq(a.app, "etl");
        OK("--app", "app-20261129172233-0001", "results", "job-0001");
        OK("--app", "etl", "--master", "tcp://h:1", "submit", "--count", "1", "--command", "true");
        BAD("--app and --driver", "--app", "etl", "--driver", "tcp://h:1", "jobs");
        BAD("--app finds a driver: status asks the master", "--app", "etl", "status");
        BAD("--app finds a driver", "--app", "etl", "kill-app", "app-20261129172233-0001");
        BAD("--app needs", "--app", "", "jobs");
        BAD("--app needs", "--app", "a\nb", "jobs");

        /* logs */
        OK("logs", "app-20261129172233-0001");
        ck_assert_int_eq(a.command, COMMAND_LOGS);
        ck_assert_int_eq(a.executor_id, 0);
        OK("logs", "app-20261129172233-0001", "3", "--follow", "--since", "10m");
        ck_assert_int_eq(a.executor_id, 3);
        ck_assert(a.follow);
        ck_assert_int_gt(a.since_usec, 0);
        OK("logs", "app-20261129172233-0001", "--since", "@1700000000");
        ck_assert_int_eq(a.since_usec, INT64_C(1700000000) * 1000000);
        BAD("not an executor id", "logs", "app-20261129172233-0001", "0");
        BAD("not an application id", "logs", "app-1");
        BAD("expected 'logs APP [EXECUTOR]'", "logs");
        BAD("expected 'logs APP [EXECUTOR]'", "logs", "app-20261129172233-0001", "1", "2");
        BAD("--since needs", "logs", "app-20261129172233-0001", "--since", "1w");
        BAD("--follow is an option of logs, not of jobs", "jobs", "--follow");
        BAD("--json does not apply to logs", "logs", "app-20261129172233-0001", "--json");
        BAD("not an executor id", "kill-executor", "app-20261129172233-0001", "99999999999");
        BAD("--json does not apply to cancel", "cancel", "job-1", "--json");
        BAD("--json does not apply to kill-app", "kill-app", "app-20261129172233-0001", "--json");
        BAD("--count is an option of submit, not of status", "status", "--count", "3");
        BAD("--master needs a URL", "--master", "", "status");
        BAD("expected 'drain WORKER [--timeout S]'", "drain");
        BAD("not a worker id", "drain", "worker/../x");
        BAD("--timeout needs a number of seconds", "drain", "worker-20261129172233-h1-7081", "--timeout", "0");
        BAD("--timeout needs a number of seconds", "drain", "worker-20261129172233-h1-7081", "--timeout", "1.5");
        BAD("--timeout is an option of drain, not of undrain", "undrain", "worker-20261129172233-h1-7081",
            "--timeout", "3");
        BAD("--all is an option of status, not of jobs", "jobs", "--all");
        BAD("--json does not apply to drain", "drain", "worker-20261129172233-h1-7081", "--json");
        ck_assert_int_eq(check_args(&a, err, sizeof(err), "--bogus", "status", NULL), -EBADMSG);
        ck_assert_int_eq(check_args(&a, err, sizeof(err), "status", "--master", NULL), -EBADMSG);
}
END_TEST

/* --app: an id first, else the one live application of that name. */
START_TEST(test_app_find) {
        Spark__AppInfo a1 = SPARK__APP_INFO__INIT, a2 = SPARK__APP_INFO__INIT, a3 = SPARK__APP_INFO__INIT;
        Spark__AppInfo *apps[] = { &a1, &a2, &a3 };
        Spark__ClusterState cs = SPARK__CLUSTER_STATE__INIT;
        char err[512];

        a1.app_id = "app-20261129172233-0001", a1.name = "etl", a1.state = SPARK__APP_STATE__APP_RUNNING;
        a2.app_id = "app-20261129172233-0002", a2.name = "pi", a2.state = SPARK__APP_STATE__APP_WAITING;
        a3.app_id = "app-20261129172233-0003", a3.name = "etl", a3.state = SPARK__APP_STATE__APP_FINISHED;
        cs.n_apps = 3, cs.apps = apps;
        ck_assert_ptr_eq(app_find(&cs, "etl", err, sizeof(err)), &a1);  /* the finished one does not count */
        ck_assert_ptr_eq(app_find(&cs, "pi", err, sizeof(err)), &a2);
        ck_assert_ptr_eq(app_find(&cs, "app-20261129172233-0003", err, sizeof(err)), &a3);
        ck_assert_ptr_null(app_find(&cs, "nope", err, sizeof(err)));
        ck_assert_str_eq(err, "the master knows no application with the id or name 'nope'");
        a3.state = SPARK__APP_STATE__APP_RUNNING;
        ck_assert_ptr_null(app_find(&cs, "etl", err, sizeof(err)));
        ck_assert_str_eq(err, "2 applications are named 'etl'; give one of their ids: app-20261129172233-0001 "
                              "app-20261129172233-0003");
}
END_TEST

START_TEST(test_parse_since) {
        const int64_t now = INT64_C(1800000000) * 1000000;
        int64_t t;

        ck_assert_int_eq(parse_since("30", now, &t), 0);
        ck_assert_int_eq(t, now - 30 * INT64_C(1000000));
        ck_assert_int_eq(parse_since("30s", now, &t), 0);
        ck_assert_int_eq(t, now - 30 * INT64_C(1000000));
        ck_assert_int_eq(parse_since("10m", now, &t), 0);
        ck_assert_int_eq(t, now - 600 * INT64_C(1000000));
        ck_assert_int_eq(parse_since("2h", now, &t), 0);
        ck_assert_int_eq(t, now - 7200 * INT64_C(1000000));
        ck_assert_int_eq(parse_since("1d", now, &t), 0);
        ck_assert_int_eq(t, now - 86400 * INT64_C(1000000));
        ck_assert_int_eq(parse_since("@0", now, &t), 0);
        ck_assert_int_eq(t, 0);
        ck_assert_int_eq(parse_since("", now, &t), -EINVAL);
        ck_assert_int_eq(parse_since("-5m", now, &t), -EINVAL);
        ck_assert_int_eq(parse_since("5mm", now, &t), -EINVAL);
        ck_assert_int_eq(parse_since("5w", now, &t), -EINVAL);
        ck_assert_int_eq(parse_since("@", now, &t), -EINVAL);
        ck_assert_int_eq(parse_since("@-1", now, &t), -EINVAL);
        ck_assert_int_eq(parse_since("@99999999999999999999", now, &t), -ERANGE);
        ck_assert_int_eq(parse_since("99999999999d", now, &t), -ERANGE);  /* before 1970 */
}
END_TEST

START_TEST(test_submit) {
        char err[512];
        Args a;

        OK("submit", "--command", "echo {}", "--inputs", "list.txt");
        ck_assert_str_eq(a.command_template, "echo {}");
        ck_assert_str_eq(a.inputs_path, "list.txt");
        OK("submit", "--command", "echo {#}", "--count", "10", "--name", "ten");
        ck_assert_int_eq(a.count, 10);
        ck_assert_str_eq(a.name, "ten");
        OK("submit", "--command", "echo {}", "--count", "2", "--arg", "x");
        OK("--driver", "ipc:///d", "submit", "--json", "--function", "./lib.so:task_run", "--inputs", "-");
        ck_assert(a.json);
        OK("submit", "--function", "/a:b/libx.so:_f2", "--count", "2147483647", "--arg", "");
        ck_assert_int_eq(a.count, INT32_MAX);

        BAD("exactly one of --command or --function", "submit", "--count", "1");
        BAD("exactly one of --command or --function", "submit", "--command", "x", "--function", "a.so:f",
            "--count", "1");
        BAD("exactly one of --inputs or --count", "submit", "--command", "x");
        BAD("exactly one of --inputs or --count", "submit", "--command", "x", "--inputs", "f", "--count", "1");
        BAD("--arg goes with --count", "submit", "--command", "x", "--inputs", "f", "--arg", "a");
        BAD("--command needs a command line", "submit", "--command", "", "--count", "1");
        BAD("--function needs LIB.so:SYMBOL", "submit", "--function", "lib.so", "--count", "1");
        BAD("--function needs LIB.so:SYMBOL", "submit", "--function", ":sym", "--count", "1");
        BAD("--function needs LIB.so:SYMBOL", "submit", "--function", "lib.so:", "--count", "1");
        BAD("--function needs LIB.so:SYMBOL", "submit", "--function", "lib.so:1abc", "--count", "1");
        BAD("--function needs LIB.so:SYMBOL", "submit", "--function", "lib.so:a-b", "--count", "1");
        BAD("--count needs a number", "submit", "--command", "x", "--count", "0");
        BAD("--count needs a number", "submit", "--command", "x", "--count", "-3");
        BAD("--count needs a number", "submit", "--command", "x", "--count", "2147483648");
        BAD("--count needs a number", "submit", "--command", "x", "--count", "12abc");
        BAD("--count needs a number", "submit", "--command", "x", "--count", " 1");
        BAD("--inputs needs a file name", "submit", "--command", "x", "--inputs", "");
        BAD("--name must be", "submit", "--command", "x", "--count", "1", "--name", "a\tb");
        BAD("expected 'submit OPTIONS'", "submit", "--command", "x", "--count", "1", "extra");
}
END_TEST

START_TEST(test_function_spec) {
        _cleanup_free_ char *path = NULL;
        const char *symbol;

        ck_assert_int_eq(function_spec_split("dir:x/lib.so:run", &path, &symbol), 0);
        ck_assert_str_eq(path, "dir:x/lib.so");
        ck_assert_str_eq(symbol, "run");
        ck_assert_int_eq(function_spec_split("lib.so", &path, &symbol), -EINVAL);
        ck_assert_int_eq(function_spec_split(NULL, &path, &symbol), -EINVAL);
}
END_TEST

START_TEST(test_parse_int32) {
        int32_t v;

        ck_assert_int_eq(parse_int32("42", 1, 100, &v), 0);
        ck_assert_int_eq(v, 42);
        ck_assert_int_eq(parse_int32("-5", -10, 0, &v), 0);
        ck_assert_int_eq(v, -5);
        ck_assert_int_lt(parse_int32("101", 1, 100, &v), 0);
        ck_assert_int_lt(parse_int32("", 1, 100, &v), 0);
        ck_assert_int_lt(parse_int32("+1", 1, 100, &v), 0);
        ck_assert_int_lt(parse_int32("1 ", 1, 100, &v), 0);
        ck_assert_int_lt(parse_int32(NULL, 1, 100, &v), 0);
}
END_TEST

START_TEST(test_help_flags) {
        char err[512];
        Args a;

        ck_assert_int_eq(check_args(&a, err, sizeof(err), "--help", NULL), -EINVAL); /* no command... */
        ck_assert(a.help);                                                          /* ...but help wins */
        ck_assert_int_eq(check_args(&a, err, sizeof(err), "-h", "status", NULL), 0);
        ck_assert(a.help);
        check_args(&a, err, sizeof(err), "--version", NULL);
        ck_assert(a.version);
}
END_TEST

START_TEST(test_tls_flags) {
        char err[512];
        Args a;

        OK("--tls-ca", "/etc/spark/tls/ca.pem", "status");
        ck_assert_str_eq(a.tls_ca, "/etc/spark/tls/ca.pem");
        ck_assert_ptr_null(a.tls_cert);
        OK("--tls-ca", "ca.pem", "--tls-cert", "h.pem", "--tls-key", "h.key", "jobs");
        ck_assert_str_eq(a.tls_cert, "h.pem");
        ck_assert_str_eq(a.tls_key, "h.key");
        BAD("go together", "--tls-ca", "ca.pem", "--tls-cert", "h.pem", "status");
        BAD("go together", "--tls-ca", "ca.pem", "--tls-key", "h.key", "status");
        BAD("needs --tls-ca", "--tls-cert", "h.pem", "--tls-key", "h.key", "status");
        BAD("need a file", "--tls-ca", "", "status");
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_commands,
                test_app_find,
                test_parse_since,
                test_submit,
                test_function_spec,
                test_parse_int32,
                test_help_flags,
                test_tls_flags,
                NULL,
        };

        return check_run_tests("sparkctl-args", NULL, tests);
}
