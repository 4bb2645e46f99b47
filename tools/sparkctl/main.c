/* sparkctl: the command line for people (sparkctl(1)).  Parses, finds the
 * daemon to talk to, runs one command and turns the outcome into the exit
 * status: 0 success, 1 failed or refused, 2 usage, 3 unreachable. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app-driver.h"
#include "args.h"
#include "call.h"
#include "jobs.h"
#include "kill.h"
#include "logs.h"
#include "sparkctl.h"
#include "status.h"
#include "nng-tls.h"
#include "submit.h"
#include "tls-settings.h"
#include "urls.h"

static int usage_error(const char *message) {
        if (message)
                fprintf(stderr, "sparkctl: %s\n", message);
        args_usage(stderr);
        fputs("Try 'sparkctl --help' for more.\n", stderr);
        return SPARKCTL_EXIT_USAGE;
}

static DaemonKind command_daemon(Command c) {
        return command_is_driver(c) ? DAEMON_DRIVER : DAEMON_MASTER;
}

static int dispatch(const Args *a, const Daemon *d) {
        switch (a->command) {
        case COMMAND_STATUS:
                return run_status(d, a->json, a->all, stdout);
        case COMMAND_SUBMIT:
                return run_submit(d, a, isatty(STDERR_FILENO), stdout);
        case COMMAND_JOBS:
                return run_jobs(d, a->json, stdout);
        case COMMAND_JOB:
                return run_job(d, a->job_id, a->json, stdout);
        case COMMAND_CANCEL:
                return run_cancel(d, a->job_id);
        case COMMAND_KILL_EXECUTOR:
                return run_kill_executor(d, a->app_id, a->executor_id);
        case COMMAND_KILL_APP:
                return run_kill_app(d, a->app_id);
        case COMMAND_RESULTS:
                return run_results(d, a->job_id, a->json, isatty(STDERR_FILENO), stdout);
        case COMMAND_LOGS:
                return run_logs(d, a, stdout);
        case COMMAND_DRAIN:
        case COMMAND_UNDRAIN:
                return run_drain(d, a->worker_id, a->timeout_ms, a->command == COMMAND_UNDRAIN);
        default:
                return SPARKCTL_EXIT_USAGE;
        }
}

/* For a tls+tcp:// URL: the settings to dial with, checked.  Returns 0, or
 * the exit status after saying what is wrong. */
static int setup_tls(const Args *a, Daemon *d, SparkctlTls *tls) {
        char why[512];
        int r;

        if (!tls_url(d->url))
                return 0;
        sparkctl_tls_done(tls); /* resolved before for --app's master */
        r = sparkctl_tls_resolve(a->tls_ca, a->tls_cert, a->tls_key, tls);
        if (r < 0) {
                fprintf(stderr, "sparkctl: %s\n", strerror(-r));
                return SPARKCTL_EXIT_FAILED;
        }
        if (!tls_settings_can_dial(&tls->settings)) {
                fprintf(stderr,
                        "sparkctl: %s needs the cluster CA: give --tls-ca FILE (and --tls-cert, --tls-key), "
                        "set $%s, or cluster.tls_ca_file in cluster.conf\n",
                        d->url, TLS_CA_FILE_ENV);
                return SPARKCTL_EXIT_USAGE;
        }
        r = nng_tls_check_settings(&tls->settings, false, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "sparkctl: cannot use the TLS files (from %s): %s\n", tls->source, why);
                return SPARKCTL_EXIT_USAGE;
        }
        d->tls = &tls->settings;
        return 0;
}

/* --app: ask the master (--master, or the default) for the driver's URL.
 * Returns 0 with *ret set, or the exit status after saying why. */
static int resolve_app_driver(const Args *a, SparkctlTls *tls, CallSessions *sessions, char **ret) {
        _cleanup_free_ char *master_url = NULL;
        char err[512];
        Daemon master = { .kind = DAEMON_MASTER, .sessions = sessions };
        int r;

        r = url_resolve(DAEMON_MASTER, a->master_url, &master_url, err, sizeof(err));
        if (r == -EINVAL)
                return usage_error(err);
        if (r < 0) {
                fprintf(stderr, "sparkctl: cannot find the master's URL: %s\n", strerror(-r));
                return SPARKCTL_EXIT_FAILED;
        }
        master.url = master_url;
        r = setup_tls(a, &master, tls);
        if (r != 0)
                return r;
        return app_driver_url(&master, a->app, ret);
}

int main(int argc, char **argv) {
        _cleanup_(sparkctl_tls_done) SparkctlTls tls = {};
        /* after tls: done before it */
        _cleanup_(call_sessions_done) CallSessions sessions = {};
        _cleanup_free_ char *url = NULL;
        char err[512];
        Daemon d = { .sessions = &sessions };
        Args a;
        int r;

        if (args_parse(argc, argv, &a) < 0)
                return usage_error(NULL);
        if (a.help) {
                /* sparkctl COMMAND --help */
                if (a.n_positional > 0) {
                        Command c = command_from_string(a.positional[0]);

                        if (c < 0) {
                                snprintf(err, sizeof(err), "unknown command '%s'", a.positional[0]);
                                return usage_error(err);
                        }
                        args_command_help(c, stdout);
                } else
                        args_help(stdout);
                return SPARKCTL_EXIT_OK;
        }
        if (a.version) {
                printf("sparkctl %s\n", SPARK_VERSION);
                return SPARKCTL_EXIT_OK;
        }
        if (args_validate(&a, err, sizeof(err)) < 0)
                return usage_error(err);

        d.kind = command_daemon(a.command);
        if (a.app) {
                r = resolve_app_driver(&a, &tls, &sessions, &url);
                if (r != 0)
                        return r;
        } else
                r = url_resolve(d.kind, d.kind == DAEMON_MASTER ? a.master_url : a.driver_url, &url, err,
                                sizeof(err));
        if (r == -EINVAL)
                return usage_error(err);
        if (r < 0) {
                fprintf(stderr, "sparkctl: cannot find the %s's URL: %s\n", daemon_kind_to_string(d.kind),
                        strerror(-r));
                return SPARKCTL_EXIT_FAILED;
        }
        d.url = url;
        d.tls = NULL;
        r = setup_tls(&a, &d, &tls);
        if (r != 0)
                return r;

        r = dispatch(&a, &d);
        errno = 0;
        if (fflush(stdout) == 0 && !ferror(stdout))
                return r;
        if (r != SPARKCTL_EXIT_OK)
                return r; /* it failed already, and said why (submit handles its own write errors) */
        if (errno != EPIPE)
                fprintf(stderr, "sparkctl: cannot write the output: %s\n", strerror(errno ?: EIO));
        return SPARKCTL_EXIT_FAILED;
}
