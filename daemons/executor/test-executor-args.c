/* spark-executor's command line: what the worker passes, the environment
 * fallback, and a clear refusal of every bad value. */
#include <check.h>
#include <limits.h>
#include <stdarg.h>

#include "check-run.h"
#include "executor-args.h"

#define APP "app-20261129172233-0001"
#define WORKER "worker-20261129172233-node1-7081"

static int parse(ExecutorArgs *a, char *error, size_t size, ...) {
        char *argv[32] = { (char *) "spark-executor" };
        int argc = 1;
        va_list ap;
        char *s;

        va_start(ap, size);
        while ((s = va_arg(ap, char *)) && argc < 31)
                argv[argc++] = s;
        va_end(ap);
        return executor_args_parse(argc, argv, a, error, size);
}

static void clear_env(void) {
        unsetenv("SPARK_DRIVER_URL");
        unsetenv("SPARK_APP_ID");
        unsetenv("SPARK_EXECUTOR_ID");
        unsetenv("SPARK_EXECUTOR_CORES");
        unsetenv("SPARK_WORKER_ID");
}

START_TEST(test_worker_command_line) {
        ExecutorArgs a = {};
        char error[256] = "", cwd[PATH_MAX];

        clear_env();
        ck_assert_int_eq(parse(&a, error, sizeof(error), "--driver", "tcp://10.0.0.1:7091", "--app-id", APP,
                               "--executor-id", "7", "--cores", "4", "--worker-id", WORKER, NULL),
                         EXECUTOR_ARGS_RUN);
        ck_assert_str_eq(a.driver_url, "tcp://10.0.0.1:7091");
        ck_assert_str_eq(a.app_id, APP);
        ck_assert_int_eq(a.executor_id, 7);
        ck_assert_int_eq(a.cores, 4);
        ck_assert_str_eq(a.worker_id, WORKER);
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
        ck_assert_str_eq(a.work_dir, cwd);
        ck_assert_int_eq(a.driver_channel_port, 0);
        executor_args_done(&a);

        /* a driver with a task channel */
        ck_assert_int_eq(parse(&a, error, sizeof(error), "--driver", "tls+tcp://10.0.0.1:7091", "--app-id", APP,
                               "--executor-id", "7", "--cores", "4", "--worker-id", WORKER, "--driver-channel-port",
                               "41597", NULL),
                         EXECUTOR_ARGS_RUN);
        ck_assert_int_eq(a.driver_channel_port, 41597);
        executor_args_done(&a);

        ck_assert_int_eq(parse(&a, error, sizeof(error), "--driver", "ipc:///run/spark/d.sock", "--app-id", APP,
                               "--executor-id", "1", "--cores", "1", "--work-dir", "/tmp/", NULL),
                         EXECUTOR_ARGS_RUN);
        ck_assert_str_eq(a.worker_id, "");
        ck_assert_str_eq(a.work_dir, "/tmp");
        executor_args_done(&a);

        ck_assert_int_eq(parse(&a, error, sizeof(error), "--help", NULL), EXECUTOR_ARGS_HELP);
        ck_assert_int_eq(parse(&a, error, sizeof(error), "--version", NULL), EXECUTOR_ARGS_VERSION);
}
END_TEST

START_TEST(test_environment) {
        ExecutorArgs a = {};
        char error[256] = "";

        clear_env();
        setenv("SPARK_DRIVER_URL", "tcp://driver:7091", 1);
        setenv("SPARK_APP_ID", APP, 1);
        setenv("SPARK_EXECUTOR_ID", "12", 1);
        setenv("SPARK_EXECUTOR_CORES", "2", 1);
        setenv("SPARK_WORKER_ID", WORKER, 1);
        ck_assert_int_eq(parse(&a, error, sizeof(error), NULL), EXECUTOR_ARGS_RUN);
        ck_assert_str_eq(a.driver_url, "tcp://driver:7091");
        ck_assert_int_eq(a.executor_id, 12);
        ck_assert_int_eq(a.cores, 2);
        ck_assert_str_eq(a.worker_id, WORKER);
        executor_args_done(&a);

        /* The command line wins. */
        ck_assert_int_eq(parse(&a, error, sizeof(error), "--cores", "3", NULL), EXECUTOR_ARGS_RUN);
        ck_assert_int_eq(a.cores, 3);
        executor_args_done(&a);
        clear_env();
}
END_TEST

START_TEST(test_refusals) {
        static const struct {
                const char *args[12];
                const char *message;
        } cases[] = {
                { { "--app-id", APP, "--executor-id", "1", "--cores", "1" }, "no driver URL" },
                { { "--driver", "http://x:1", "--app-id", APP, "--executor-id", "1", "--cores", "1" },
                  "invalid driver URL \"http://x:1\": must start with tcp://, ipc:// or tls+tcp://" },
                { { "--driver", "tcp://host", "--app-id", APP, "--executor-id", "1", "--cores", "1" },
                  "invalid driver URL \"tcp://host\": must end in :PORT" },
                { { "--driver", "tcp://h:1", "--executor-id", "1", "--cores", "1" }, "no application id" },
                { { "--driver", "tcp://h:1", "--app-id", "app;rm -rf /", "--executor-id", "1", "--cores", "1" },
                  "invalid application id" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--cores", "1" }, "no executor id" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "0", "--cores", "1" },
                  "invalid executor id \"0\"" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "-3", "--cores", "1" },
                  "invalid executor id" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1x", "--cores", "1" },
                  "invalid executor id" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "99999999999", "--cores", "1" },
                  "invalid executor id" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1" }, "no core count" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "0" },
                  "invalid core count \"0\" (expected 1..1024)" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "-1" },
                  "invalid core count" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "1025" },
                  "invalid core count" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "1", "--worker-id",
                    "../../x" },
                  "invalid worker id" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "1", "--work-dir",
                    "/nonexistent/dir" },
                  "work directory \"/nonexistent/dir\"" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "1", "--work-dir",
                    "/etc/hostname" },
                  "is not a directory" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "1",
                    "--driver-channel-port", "0" },
                  "invalid driver channel port \"0\" (expected 1..65535)" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "1",
                    "--driver-channel-port", "65536" },
                  "invalid driver channel port" },
                { { "--driver", "tcp://h:1", "--app-id", APP, "--executor-id", "1", "--cores", "1",
                    "--driver-channel-port", "7x" },
                  "invalid driver channel port" },
                { { "--bogus" }, "unknown option '--bogus'" },
                { { "--cores" }, "option '--cores' needs a value" },
                { { "--driver", "tcp://h:1", "stray" }, "unexpected argument 'stray'" },
        };

        clear_env();
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *argv[16] = { (char *) "spark-executor" };
                ExecutorArgs a = {};
                char error[256] = "";
                int argc = 1;

                for (size_t j = 0; j < ELEMENTSOF(cases[i].args) && cases[i].args[j]; j++)
                        argv[argc++] = (char *) cases[i].args[j];
                ck_assert_int_eq(executor_args_parse(argc, argv, &a, error, sizeof(error)), -EINVAL);
                ck_assert_msg(strstr(error, cases[i].message), "case %zu: \"%s\" lacks \"%s\"", i, error,
                              cases[i].message);
                ck_assert_ptr_null(a.driver_url);
        }
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_worker_command_line,
                test_environment,
                test_refusals,
                NULL,
        };

        return check_run_tests("executor-args", NULL, tests);
}
