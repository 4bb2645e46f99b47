/* See executor-args.h. */
#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>

#include "config.h"
#include "error-buf.h"
#include "executor-args.h"
#include "ids.h"

/* A usage error: the message in error, -EINVAL. */
#define usage(error, size, ...) error_buf_invalid(error, size, __VA_ARGS__)

void executor_args_help(FILE *f) {
        fprintf(f,
                "Usage: spark-executor --driver URL --app-id APP --executor-id N --cores C\n"
                "                      [--worker-id W] [--work-dir DIR] [--driver-channel-port P]\n"
                "\n"
                "Runs the tasks of one spark-deploy application: registers with its driver,\n"
                "pulls tasks, runs them on C threads and sends the results back.  Normally\n"
                "started by spark-worker as a transient systemd unit.\n"
                "\n"
                "  --driver URL       the driver's request endpoint     [$SPARK_DRIVER_URL]\n"
                "  --app-id APP       the application id                [$SPARK_APP_ID]\n"
                "  --executor-id N    this executor's id, >= 1          [$SPARK_EXECUTOR_ID]\n"
                "  --cores C          task threads, 1..%d             [$SPARK_EXECUTOR_CORES]\n"
                "  --worker-id W      the worker that started it        [$SPARK_WORKER_ID]\n"
                "  --work-dir DIR     where shipped libraries are kept  [current directory]\n"
                "  --driver-channel-port P\n"
                "                     the driver's task channel, on the host of URL: register\n"
                "                     there, without nng (nng if it cannot be used)\n"
                "  -h --help          show this help\n"
                "     --version       show the version\n"
                "\n"
                "The worker passes two systemd credentials ($CREDENTIALS_DIRECTORY): the executor's\n"
                "secret, spark-executor-secret, sent to the driver with every request, and for a\n"
                "tls+tcp:// driver URL the cluster CA, spark-ca, that verifies the driver.\n",
                EXECUTOR_CORES_MAX);
}

static const char *arg_or_env(const char *arg, const char *env) {
        const char *v;

        if (arg)
                return arg;
        v = getenv(env);
        return isempty(v) ? NULL : v;
}

static int parse_int(const char *s, long min, long max, int *ret) {
        char *end;
        long v;

        if (isempty(s))
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || *end || v < min || v > max)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

void executor_args_done(ExecutorArgs *a) {
        if (!a)
                return;
        free(a->driver_url);
        free(a->app_id);
        free(a->worker_id);
        free(a->work_dir);
        *a = (ExecutorArgs) {};
}

int executor_args_parse(int argc, char **argv, ExecutorArgs *ret, char *error, size_t error_size) {
        enum { ARG_VERSION = 0x100, ARG_DRIVER, ARG_APP, ARG_EXEC, ARG_CORES, ARG_WORKER, ARG_WORK_DIR, ARG_CHANNEL };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "driver", required_argument, NULL, ARG_DRIVER },
                { "app-id", required_argument, NULL, ARG_APP },
                { "executor-id", required_argument, NULL, ARG_EXEC },
                { "cores", required_argument, NULL, ARG_CORES },
                { "worker-id", required_argument, NULL, ARG_WORKER },
                { "work-dir", required_argument, NULL, ARG_WORK_DIR },
                { "driver-channel-port", required_argument, NULL, ARG_CHANNEL },
                {}
        };
        const char *driver = NULL, *app = NULL, *exec = NULL, *cores = NULL, *worker = NULL, *work_dir = NULL,
                   *channel = NULL;
        _cleanup_(executor_args_done) ExecutorArgs a = {};
        char path[PATH_MAX];
        const char *why;
        struct stat st;
        int c;

        optind = 0; /* a full reset: the tests parse many command lines */
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        return EXECUTOR_ARGS_HELP;
                case ARG_VERSION:
                        return EXECUTOR_ARGS_VERSION;
                case ARG_DRIVER:
                        driver = optarg;
                        break;
                case ARG_APP:
                        app = optarg;
                        break;
                case ARG_EXEC:
                        exec = optarg;
                        break;
                case ARG_CORES:
                        cores = optarg;
                        break;
                case ARG_WORKER:
                        worker = optarg;
                        break;
                case ARG_WORK_DIR:
                        work_dir = optarg;
                        break;
                case ARG_CHANNEL:
                        channel = optarg;
                        break;
                case ':':
                        return usage(error, error_size, "option '%s' needs a value", argv[optind - 1]);
                default:
                        return usage(error, error_size, "unknown option '%s'", argv[optind - 1]);
                }
        if (optind < argc)
                return usage(error, error_size, "unexpected argument '%s'", argv[optind]);

        driver = arg_or_env(driver, "SPARK_DRIVER_URL");
        app = arg_or_env(app, "SPARK_APP_ID");
        exec = arg_or_env(exec, "SPARK_EXECUTOR_ID");
        cores = arg_or_env(cores, "SPARK_EXECUTOR_CORES");
        worker = arg_or_env(worker, "SPARK_WORKER_ID");

        if (!driver)
                return usage(error, error_size, "no driver URL: give --driver URL (or set SPARK_DRIVER_URL)");
        why = config_endpoint_check(driver);
        if (why)
                return usage(error, error_size, "invalid driver URL \"%.200s\": %s", driver, why);
        if (!app)
                return usage(error, error_size, "no application id: give --app-id APP (or set SPARK_APP_ID)");
        if (!app_id_is_valid(app))
                return usage(error, error_size, "invalid application id \"%.80s\" (expected app-YYYYMMDDhhmmss-NNNN)",
                             app);
        if (!exec)
                return usage(error, error_size, "no executor id: give --executor-id N (or set SPARK_EXECUTOR_ID)");
        if (parse_int(exec, 1, INT32_MAX, &a.executor_id) < 0)
                return usage(error, error_size, "invalid executor id \"%.80s\" (expected an integer >= 1)", exec);
        if (!cores)
                return usage(error, error_size, "no core count: give --cores C (or set SPARK_EXECUTOR_CORES)");
        if (parse_int(cores, 1, EXECUTOR_CORES_MAX, &a.cores) < 0)
                return usage(error, error_size, "invalid core count \"%.80s\" (expected 1..%d)", cores,
                             EXECUTOR_CORES_MAX);
        if (channel && parse_int(channel, 1, UINT16_MAX, &a.driver_channel_port) < 0)
                return usage(error, error_size, "invalid driver channel port \"%.80s\" (expected 1..65535)", channel);
        if (worker && !worker_id_is_valid(worker))
                return usage(error, error_size, "invalid worker id \"%.80s\" (expected worker-...)", worker);

        if (!work_dir)
                work_dir = ".";
        if (!realpath(work_dir, path))
                return usage(error, error_size, "work directory \"%.200s\": %s", work_dir, strerror(errno));
        if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                return usage(error, error_size, "work directory \"%.200s\" is not a directory", work_dir);

        a.driver_url = strdup(driver);
        a.app_id = strdup(app);
        a.worker_id = strdup(worker ? worker : "");
        a.work_dir = strdup(path);
        if (!a.driver_url || !a.app_id || !a.worker_id || !a.work_dir)
                return -ENOMEM;

        *ret = a;
        a = (ExecutorArgs) {};
        return EXECUTOR_ARGS_RUN;
}
