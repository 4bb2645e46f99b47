/* See args.h. */
#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "codec.h"
#include "error-buf.h"
#include "ids.h"
#include "macro.h"

#define JOB_NAME_MAX 128 /* what the driver accepts */

static const char *const command_table[_COMMAND_MAX] = {
        [COMMAND_STATUS] = "status",
        [COMMAND_SUBMIT] = "submit",
        [COMMAND_JOBS] = "jobs",
        [COMMAND_JOB] = "job",
        [COMMAND_CANCEL] = "cancel",
        [COMMAND_KILL_EXECUTOR] = "kill-executor",
        [COMMAND_KILL_APP] = "kill-app",
        [COMMAND_RESULTS] = "results",
        [COMMAND_LOGS] = "logs",
        [COMMAND_DRAIN] = "drain",
        [COMMAND_UNDRAIN] = "undrain",
};

/* Positional arguments after the command word. */
static const size_t command_arity[_COMMAND_MAX] = {
        [COMMAND_JOB] = 1,
        [COMMAND_CANCEL] = 1,
        [COMMAND_KILL_EXECUTOR] = 2,
        [COMMAND_KILL_APP] = 1,
        [COMMAND_RESULTS] = 1,
        [COMMAND_LOGS] = 1, /* APP [EXECUTOR] */
        [COMMAND_DRAIN] = 1,
        [COMMAND_UNDRAIN] = 1,
};

static const char *const command_synopsis[_COMMAND_MAX] = {
        [COMMAND_STATUS] = "status",
        [COMMAND_SUBMIT] = "submit OPTIONS",
        [COMMAND_JOBS] = "jobs",
        [COMMAND_JOB] = "job ID",
        [COMMAND_CANCEL] = "cancel ID",
        [COMMAND_KILL_EXECUTOR] = "kill-executor APP EXEC",
        [COMMAND_KILL_APP] = "kill-app APP",
        [COMMAND_RESULTS] = "results ID",
        [COMMAND_LOGS] = "logs APP [EXECUTOR]",
        [COMMAND_DRAIN] = "drain WORKER [--timeout S]",
        [COMMAND_UNDRAIN] = "undrain WORKER",
};

bool command_is_driver(Command c) {
        return c == COMMAND_SUBMIT || c == COMMAND_JOBS || c == COMMAND_JOB || c == COMMAND_CANCEL ||
               c == COMMAND_RESULTS;
}

const char *command_to_string(Command c) {
        return c >= 0 && c < _COMMAND_MAX ? command_table[c] : NULL;
}

Command command_from_string(const char *s) {
        for (Command c = 0; c < _COMMAND_MAX; c++)
                if (streq_ptr(command_table[c], s))
                        return c;
        return _COMMAND_INVALID;
}

int args_parse(int argc, char **argv, Args *a) {
        enum {
                ARG_VERSION = 0x100, ARG_MASTER, ARG_DRIVER, ARG_JSON, ARG_NAME,
                ARG_COMMAND, ARG_FUNCTION, ARG_INPUTS, ARG_COUNT, ARG_ARG,
                ARG_TLS_CA, ARG_TLS_CERT, ARG_TLS_KEY, ARG_APP, ARG_DETACH, ARG_FOLLOW, ARG_SINCE, ARG_TIMEOUT,
                ARG_ALL,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "master", required_argument, NULL, ARG_MASTER },
                { "driver", required_argument, NULL, ARG_DRIVER },
                { "app", required_argument, NULL, ARG_APP },
                { "detach", no_argument, NULL, ARG_DETACH },
                { "follow", no_argument, NULL, ARG_FOLLOW },
                { "since", required_argument, NULL, ARG_SINCE },
                { "tls-ca", required_argument, NULL, ARG_TLS_CA },
                { "tls-cert", required_argument, NULL, ARG_TLS_CERT },
                { "tls-key", required_argument, NULL, ARG_TLS_KEY },
                { "json", no_argument, NULL, ARG_JSON },
                { "name", required_argument, NULL, ARG_NAME },
                { "command", required_argument, NULL, ARG_COMMAND },
                { "function", required_argument, NULL, ARG_FUNCTION },
                { "inputs", required_argument, NULL, ARG_INPUTS },
                { "count", required_argument, NULL, ARG_COUNT },
                { "arg", required_argument, NULL, ARG_ARG },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "all", no_argument, NULL, ARG_ALL },
                {},
        };
        int c;

        *a = (Args) { .command = _COMMAND_INVALID };
        optind = 0; /* GNU: start over (tests parse more than once) */
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':          a->help = true; break;
                case ARG_VERSION:  a->version = true; break;
                case ARG_MASTER:   a->master_url = optarg; break;
                case ARG_DRIVER:   a->driver_url = optarg; break;
                case ARG_APP:      a->app = optarg; break;
                case ARG_DETACH:   a->detach = true; break;
                case ARG_FOLLOW:   a->follow = true; break;
                case ARG_SINCE:    a->since_string = optarg; break;
                case ARG_TLS_CA:   a->tls_ca = optarg; break;
                case ARG_TLS_CERT: a->tls_cert = optarg; break;
                case ARG_TLS_KEY:  a->tls_key = optarg; break;
                case ARG_JSON:     a->json = true; break;
                case ARG_NAME:     a->name = optarg; break;
                case ARG_COMMAND:  a->command_template = optarg; break;
                case ARG_FUNCTION: a->function = optarg; break;
                case ARG_INPUTS:   a->inputs_path = optarg; break;
                case ARG_COUNT:    a->count_string = optarg; break;
                case ARG_ARG:      a->arg = optarg; break;
                case ARG_TIMEOUT:  a->timeout_string = optarg; break;
                case ARG_ALL:      a->all = true; break;
                default:           return -EINVAL; /* getopt said why */
                }
        a->positional = argv + optind;
        a->n_positional = (size_t) (argc - optind);
        return 0;
}

/* A usage error: the message in err, -EINVAL. */
#define fail(err, size, ...) error_buf_invalid(err, size, __VA_ARGS__)

int parse_since(const char *s, int64_t now_usec, int64_t *ret) {
        static const struct {
                char suffix;
                int64_t usec;
        } units[] = { { 's', 1000000 }, { 'm', 60 * INT64_C(1000000) }, { 'h', 3600 * INT64_C(1000000) },
                      { 'd', 86400 * INT64_C(1000000) } };
        int64_t unit = 1000000;
        long long v;
        char *end;

        if (isempty(s))
                return -EINVAL;
        errno = 0;
        if (s[0] == '@') {
                if (!isdigit((unsigned char) s[1]))
                        return -EINVAL;
                v = strtoll(s + 1, &end, 10);
                if (errno != 0 || *end != '\0' || v > INT64_MAX / 1000000)
                        return -ERANGE;
                *ret = (int64_t) v * 1000000;
                return 0;
        }
        if (!isdigit((unsigned char) s[0]))
                return -EINVAL;
        v = strtoll(s, &end, 10);
        if (errno != 0)
                return -ERANGE;
        if (*end != '\0') {
                size_t i;

                for (i = 0; i < ELEMENTSOF(units) && units[i].suffix != *end; i++)
                        ;
                if (i == ELEMENTSOF(units) || end[1] != '\0')
                        return -EINVAL;
                unit = units[i].usec;
        }
        if (v > now_usec / unit)
                return -ERANGE; /* before 1970 */
        *ret = now_usec - (int64_t) v * unit;
        return 0;
}

int parse_int32(const char *s, int32_t min, int32_t max, int32_t *ret) {
        char *end;
        long long v;

        if (isempty(s) || !(isdigit((unsigned char) s[0]) || s[0] == '-'))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < min || v > max)
                return -ERANGE;
        *ret = (int32_t) v;
        return 0;
}

static bool symbol_is_valid(const char *s) {
        if (isempty(s) || strlen(s) > SPARK_MAX_NAME_LEN || !(isalpha((unsigned char) s[0]) || s[0] == '_'))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && *s != '_')
                        return false;
        return true;
}

int function_spec_split(const char *spec, char **ret_path, const char **ret_symbol) {
        const char *colon = spec ? strrchr(spec, ':') : NULL;
        char *path;

        if (!colon || colon == spec || !symbol_is_valid(colon + 1))
                return -EINVAL;
        path = strndup(spec, (size_t) (colon - spec));
        if (!path)
                return -ENOMEM;
        *ret_path = path;
        *ret_symbol = colon + 1;
        return 0;
}

static bool has_control_chars(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* Options that only submit takes, and --json where it means something. */
static int validate_options_apply(const Args *a, char *err, size_t size) {
        const char *name = command_to_string(a->command);
        const struct {
                const char *option;
                bool given;
        } submit_only[] = {
                { "--name", a->name },       { "--command", a->command_template },
                { "--function", a->function }, { "--inputs", a->inputs_path },
                { "--count", a->count_string }, { "--arg", a->arg },
                { "--detach", a->detach },
        };

        if (a->command != COMMAND_SUBMIT)
                for (size_t i = 0; i < ELEMENTSOF(submit_only); i++)
                        if (submit_only[i].given)
                                return fail(err, size, "%s is an option of submit, not of %s",
                                            submit_only[i].option, name);
        if (a->all && a->command != COMMAND_STATUS)
                return fail(err, size, "--all is an option of status, not of %s", name);
        if (a->timeout_string && a->command != COMMAND_DRAIN)
                return fail(err, size, "--timeout is an option of drain, not of %s", name);
        if (a->json && (a->command == COMMAND_CANCEL || a->command == COMMAND_KILL_EXECUTOR ||
                        a->command == COMMAND_KILL_APP || a->command == COMMAND_DRAIN ||
                        a->command == COMMAND_UNDRAIN))
                return fail(err, size, "--json does not apply to %s", name);
        if (a->command != COMMAND_LOGS && (a->follow || a->since_string))
                return fail(err, size, "%s is an option of logs, not of %s", a->follow ? "--follow" : "--since",
                            name);
        if (a->command == COMMAND_LOGS && a->json)
                return fail(err, size, "--json does not apply to logs");
        if (a->detach && a->json)
                return fail(err, size, "--detach prints only the job id: --json does not apply");
        if (a->app && !command_is_driver(a->command))
                return fail(err, size, "--app finds a driver: %s asks the master", name);
        if (a->app && a->driver_url)
                return fail(err, size, "--app and --driver both name the driver: give one");
        if (a->app && (isempty(a->app) || strlen(a->app) > APP_ID_MAX || has_control_chars(a->app)))
                return fail(err, size, "--app needs an application id or name");
        return 0;
}

static int validate_submit(Args *a, char *err, size_t size) {
        _cleanup_free_ char *path = NULL;
        const char *symbol;

        if (!!a->command_template == !!a->function)
                return fail(err, size, "submit needs exactly one of --command or --function");
        if (!!a->inputs_path == !!a->count_string)
                return fail(err, size, "submit needs exactly one of --inputs or --count");
        if (a->arg && !a->count_string)
                return fail(err, size, "--arg goes with --count (with --inputs each line is a task's input)");
        if (a->command_template && isempty(a->command_template))
                return fail(err, size, "--command needs a command line");
        if (a->function && function_spec_split(a->function, &path, &symbol) < 0)
                return fail(err, size, "--function needs LIB.so:SYMBOL with a C identifier as SYMBOL, not '%s'",
                            a->function);
        if (a->inputs_path && isempty(a->inputs_path))
                return fail(err, size, "--inputs needs a file name (or - for standard input)");
        if (a->count_string && parse_int32(a->count_string, 1, INT32_MAX, &a->count) < 0)
                return fail(err, size, "--count needs a number of tasks from 1 to %d, not '%s'", INT32_MAX,
                            a->count_string);
        if (a->name && (strlen(a->name) > JOB_NAME_MAX || has_control_chars(a->name)))
                return fail(err, size, "--name must be at most %d bytes, without control characters",
                            JOB_NAME_MAX);
        return 0;
}

static int validate_positional(Args *a, char *err, size_t size) {
        char **p = a->positional + 1;

        switch (a->command) {
        case COMMAND_JOB:
        case COMMAND_CANCEL:
        case COMMAND_RESULTS:
                if (!wire_name_is_valid(p[0], false))
                        return fail(err, size, "'%s' is not a job id", p[0]);
                a->job_id = p[0];
                break;
        case COMMAND_LOGS:
                if (p[1] && parse_int32(p[1], 1, INT32_MAX, &a->executor_id) < 0)
                        return fail(err, size, "'%s' is not an executor id (a number from 1)", p[1]);
                if (!app_id_is_valid(p[0]))
                        return fail(err, size, "'%s' is not an application id (like app-20261129172233-0001)",
                                    p[0]);
                a->app_id = p[0];
                if (a->since_string) {
                        struct timespec ts;

                        clock_gettime(CLOCK_REALTIME, &ts);
                        if (parse_since(a->since_string, (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
                                        &a->since_usec) < 0)
                                return fail(err, size, "--since needs N[s|m|h|d] (that long ago) or @SECONDS "
                                            "(a UNIX time), not '%s'", a->since_string);
                }
                break;
        case COMMAND_KILL_EXECUTOR:
                if (parse_int32(p[1], 1, INT32_MAX, &a->executor_id) < 0)
                        return fail(err, size, "'%s' is not an executor id (a number from 1)", p[1]);
                __attribute__((fallthrough));
        case COMMAND_KILL_APP:
                if (!app_id_is_valid(p[0]))
                        return fail(err, size, "'%s' is not an application id (like app-20261129172233-0001)",
                                    p[0]);
                a->app_id = p[0];
                break;
        case COMMAND_DRAIN:
                /* seconds; the master takes up to a week */
                if (a->timeout_string && parse_int32(a->timeout_string, 1, 7 * 24 * 3600, &a->timeout_ms) < 0)
                        return fail(err, size, "--timeout needs a number of seconds from 1 to %d, not '%s'",
                                    7 * 24 * 3600, a->timeout_string);
                a->timeout_ms *= 1000;
                __attribute__((fallthrough));
        case COMMAND_UNDRAIN:
                if (!worker_id_is_valid(p[0]))
                        return fail(err, size, "'%s' is not a worker id", p[0]);
                a->worker_id = p[0];
                break;
        default:
                break;
        }
        return 0;
}

int args_validate(Args *a, char *err, size_t size) {
        int r;

        if (a->n_positional == 0)
                return fail(err, size, "missing command");
        a->command = command_from_string(a->positional[0]);
        if (a->command < 0)
                return fail(err, size, "unknown command '%s'", a->positional[0]);
        if (a->n_positional - 1 != command_arity[a->command] &&
            !(a->command == COMMAND_LOGS && a->n_positional - 1 == 2))
                return fail(err, size, "%s: expected '%s'", a->positional[0], command_synopsis[a->command]);
        if (a->master_url && isempty(a->master_url))
                return fail(err, size, "--master needs a URL");
        if (a->driver_url && isempty(a->driver_url))
                return fail(err, size, "--driver needs a URL");
        if ((a->tls_ca && isempty(a->tls_ca)) || (a->tls_cert && isempty(a->tls_cert)) ||
            (a->tls_key && isempty(a->tls_key)))
                return fail(err, size, "--tls-ca, --tls-cert and --tls-key need a file");
        if (!a->tls_cert != !a->tls_key)
                return fail(err, size, "--tls-cert and --tls-key go together");
        if (a->tls_cert && !a->tls_ca)
                return fail(err, size, "--tls-cert needs --tls-ca too");

        r = validate_options_apply(a, err, size);
        if (r < 0)
                return r;
        if (a->command == COMMAND_SUBMIT) {
                r = validate_submit(a, err, size);
                if (r < 0)
                        return r;
        }
        return validate_positional(a, err, size);
}

void args_usage(FILE *f) {
        fputs("Usage: sparkctl [--master URL] status [--all] [--json]\n"
              "       sparkctl [--driver URL] submit [--name N] [--json]\n"
              "                (--command 'CMD {}' | --function LIB.so:SYMBOL)\n"
              "                (--inputs FILE | --count N [--arg S]) [--detach]\n"
              "       sparkctl [--driver URL] jobs [--json] | job ID [--json] | cancel ID\n"
              "       sparkctl [--driver URL] results ID [--json]\n"
              "       sparkctl [--master URL] kill-executor APP EXEC | kill-app APP\n"
              "       sparkctl [--master URL] logs APP [EXECUTOR] [--follow] [--since WHEN]\n"
              "       sparkctl [--master URL] drain WORKER [--timeout S] | undrain WORKER\n"
              "       sparkctl COMMAND --help\n",
              f);
}

void args_help(FILE *f) {
        fputs("sparkctl — the spark-deploy command line\n\n", f);
        args_usage(f);
        fputs("\nCommands:\n"
              "  status                 Workers, applications and executors, from the master;\n"
              "                         with --all also the finished applications and lost\n"
              "                         workers it keeps as history\n"
              "  submit                 Run a job on the driver's executors, wait for it and\n"
              "                         write each task's output in task order\n"
              "  jobs                   The driver's jobs\n"
              "  job ID                 One job\n"
              "  cancel ID              Cancel a job; its running tasks are killed\n"
              "  kill-executor APP EXEC Stop one executor (the application gets another)\n"
              "  kill-app APP           Remove an application and all its executors\n"
              "  results ID             A job's results, in task order (waits for the rest)\n"
              "  logs APP [EXECUTOR]    The executors' output from every worker's journal,\n"
              "                         in time order, with host and executor id\n"
              "  drain WORKER           Place nothing new on the worker; its executors finish\n"
              "                         their tasks and are replaced elsewhere (DRAINING,\n"
              "                         then DRAINED in status)\n"
              "  undrain WORKER         The worker takes executors again\n"
              "\nOptions:\n"
              "  -h --help              Show this help\n"
              "     --version           Show the version\n"
              "     --master URL        The master's request endpoint (tcp://HOST:PORT,\n"
              "                         ipc://PATH, tls+tcp://HOST:PORT)\n"
              "     --driver URL        The driver's request endpoint\n"
              "     --app ID|NAME       The driver of this application, as the master knows\n"
              "                         it (instead of --driver)\n"
              "     --tls-ca FILE       For tls+tcp:// URLs: the cluster CA's certificate,\n"
              "     --tls-cert FILE     and the certificate (signed by it) and key to\n"
              "     --tls-key FILE      present (PEM); default: $SPARK_TLS_CA_FILE,\n"
              "                         $SPARK_TLS_CERT_FILE, $SPARK_TLS_KEY_FILE, else\n"
              "                         cluster.tls_* in cluster.conf\n"
              "     --json              Machine-readable output: one object (status, jobs,\n"
              "                         job), one line per task (submit)\n"
              "\nsubmit:\n"
              "     --name N            The job's name\n"
              "     --command CMD       Each task runs CMD with /bin/sh -c, where {} is the\n"
              "                         task's input, shell-quoted (do not quote it again),\n"
              "                         and {#} the task's index (from 0).  With --inputs\n"
              "                         and neither {} nor {#} in CMD, ' {}' is appended\n"
              "     --function LIB.so:SYMBOL\n"
              "                         Each task calls SYMBOL (include/spark/task.h) in\n"
              "                         the shared object LIB.so, which is sent with the job\n"
              "     --inputs FILE       One task per line of FILE (- : standard input); the\n"
              "                         line, without its newline, is the task's input\n"
              "     --count N           N tasks, each with the input given by --arg\n"
              "                         (default: empty)\n"
              "     --arg S             The input of every task with --count\n"
              "     --detach            Print the job's id and exit once the driver has the\n"
              "                         job (sparkctl results ID fetches the outputs)\n"
              "\ndrain:\n"
              "     --timeout S         After S seconds, tasks still running on the worker\n"
              "                         are stopped and re-queued elsewhere, without\n"
              "                         counting as failures (default: no timeout)\n"
              "\nThe output of each task goes to standard output as soon as it and the ones\n"
              "before it are done; failed tasks are reported on standard error.  A progress\n"
              "line is shown on standard error when it is a terminal.  Ctrl-C cancels the job.\n"
              "\nlogs:\n"
              "     --follow            Go on showing new lines until interrupted\n"
              "     --since WHEN        Only lines since N[s|m|h|d] ago, or @SECONDS\n"
              "\n'sparkctl COMMAND --help' shows one command's options.\n"
              "\nDefault URLs: $SPARK_MASTER_URL, else cluster.master in cluster.conf, else\n"
              "tcp://127.0.0.1:7077; $SPARK_DRIVER_URL, else driver.listen in driver.conf\n"
              "(0.0.0.0 means this host), else tcp://127.0.0.1:7091.  The files are read\n"
              "from $SPARK_CONF_DIR, else /etc/spark.\n"
              "\nExit status: 0 success, 1 the job failed or was cancelled or a daemon\n"
              "refused the request, 2 usage error, 3 the master or driver cannot be reached\n"
              "(also: the TLS handshake failed).\n",
              f);
}
