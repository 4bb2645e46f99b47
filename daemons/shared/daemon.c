/* See daemon.h. */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "log.h"
#include "macro.h"
#include "tls-watch.h"

static void help(const DaemonOptions *o) {
        printf("%s [OPTIONS...]\n\n"
               "%s\n\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "  -c --config PATH        Read the configuration from PATH\n"
               "                          (default: /etc/spark/%s.conf, or $SPARK_CONF_DIR/%s.conf)\n"
               "     --config-name NAME   Read /etc/spark/NAME.conf\n"
               "     --check-config       Check the configuration and exit (78 on errors)\n"
               "\nSee %s(8).\n",
               o->name, o->summary, o->config_name, o->config_name, o->name);
}

int daemon_parse_args(const DaemonOptions *o, int argc, char **argv, char **ret_config_path, int *ret_exit) {
        enum { ARG_VERSION = 0x100, ARG_CHECK, ARG_CONFIG_NAME };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "config", required_argument, NULL, 'c' },
                { "config-name", required_argument, NULL, ARG_CONFIG_NAME },
                { "check-config", no_argument, NULL, ARG_CHECK },
                {},
        };
        _cleanup_free_ char *path = NULL;
        bool check = false;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "hc:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(o);
                        *ret_exit = EXIT_SUCCESS;
                        return 1;
                case ARG_VERSION:
                        printf("%s %s\n", o->name, SPARK_VERSION);
                        *ret_exit = EXIT_SUCCESS;
                        return 1;
                case 'c':
                        free(path);
                        path = strdup(optarg);
                        if (!path)
                                return -ENOMEM;
                        break;
                case ARG_CONFIG_NAME:
                        /* the instance name of spark-driver@NAME: no path tricks */
                        if (isempty(optarg) || strchr(optarg, '/') || optarg[0] == '.') {
                                fprintf(stderr, "%s: invalid --config-name '%s'\n", o->name, optarg);
                                *ret_exit = 2;
                                return 1;
                        }
                        free(path);
                        path = NULL;
                        r = config_default_path(optarg, &path);
                        if (r < 0)
                                return r;
                        break;
                case ARG_CHECK:
                        check = true;
                        break;
                default:
                        fprintf(stderr, "Try '%s --help'.\n", o->name);
                        *ret_exit = 2;
                        return 1;
                }
        if (optind < argc) {
                fprintf(stderr, "%s: unexpected argument '%s'\nTry '%s --help'.\n", o->name, argv[optind], o->name);
                *ret_exit = 2;
                return 1;
        }
        if (!path) {
                r = config_default_path(o->config_name, &path);
                if (r < 0)
                        return r;
        }
        if (check) {
                *ret_exit = config_check_main(path, stdout);
                return 1;
        }

        *ret_config_path = TAKE_PTR(path);
        return 0;
}

/* Blocked in every thread: sd-event takes them through a signalfd.  Threads
 * inherit the mask, so this must happen before nng starts its threads. */
static int block_signals(void) {
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        return sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? -errno : 0;
}

/* cluster.insecure lets plaintext listeners reach beyond loopback, where
 * anyone who can send a request may run code on the workers: say so at
 * every start, naming the endpoints it concerns. */
static void warn_insecure(const char *path, const SparkConfig *c) {
        _cleanup_free_ char *list = NULL;
        const ConfigKey *schema;
        size_t n, size = 0;
        FILE *f;

        if (!c->cluster.insecure)
                return;
        f = open_memstream(&list, &size);
        if (f) {
                schema = config_schema(&n);
                for (size_t i = 0; i < n; i++)
                        if (config_key_listens_beyond_loopback(schema + i, c))
                                fprintf(f, "%s%s %s", ftell(f) > 0 ? ", " : "", schema[i].key,
                                        *(char *const *) config_key_value_const(schema + i, c));
                if (fclose(f) != 0) {
                        free(list);
                        list = NULL;
                }
        }
        log_struct(LOG_WARNING, LOG_FIELDS(.message_id = SPARK_MESSAGE_INSECURE),
                   "%s: cluster.insecure = true: plaintext tcp:// endpoints may listen beyond loopback (%s); "
                   "anyone who reaches them can run jobs on the workers. Use tls+tcp:// endpoints instead.",
                   path, isempty(list) ? "none now" : list);
}

int daemon_load_config(const char *path, SparkConfig *ret) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        char why[640];
        int r;

        /* Checking the TLS files below is the first use of nng. */
        r = block_signals();
        if (r < 0)
                return log_error_errno(r, "Failed to block signals: %m"), EXIT_FAILURE;

        r = config_load(path, ret, &errors);
        if (r < 0) {
                if (errors)
                        for (char **e = errors; *e; e++)
                                log_error("%s", *e);
                else
                        log_error_errno(r, "Failed to read %s: %m", path);
                return EXIT_CONFIG;
        }
        r = config_check_tls(ret, why, sizeof(why));
        if (r < 0) {
                log_error("%s: %s", path, why);
                return EXIT_CONFIG;
        }
        warn_insecure(path, ret);
        return 0;
}

static void on_tls_refused(TlsWatch *w, const char *url, bool listener, uint64_t n, void *userdata) {
        (void) w, (void) userdata;

        if (listener)
                log_struct(LOG_WARNING, LOG_FIELDS(.message_id = SPARK_MESSAGE_TLS_REFUSED),
                           "Refused %" PRIu64 " connection(s) on %s: TLS handshake failed (a peer without a "
                           "certificate signed by the cluster CA, or not speaking TLS)",
                           n, url);
        else
                log_struct(LOG_WARNING, LOG_FIELDS(.message_id = SPARK_MESSAGE_TLS_REFUSED),
                           "%" PRIu64 " TLS handshake(s) with %s failed: it refused our certificate, or its "
                           "certificate is not signed by the cluster CA or not for that host name",
                           n, url);
}

int daemon_watch_tls(sd_event *e, const SparkConfig *c) {
        TlsWatch *w = NULL;
        int r;

        if (!tls_settings_can_dial(&c->cluster.tls))
                return 0;
        r = tls_watch_new(e, 0, 0, on_tls_refused, NULL, &w);
        if (r < 0)
                return r;
        r = tls_watch_set_floating(w);
        if (r < 0)
                tls_watch_free(w);
        return r;
}

int daemon_reload_config(const char *path, SparkConfig *current, unsigned sections) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_(config_done) SparkConfig next = {};
        _cleanup_free_ const ConfigKey **changed = NULL;
        int r, fixed;

        r = config_load(path, &next, &errors);
        if (r < 0) {
                if (errors)
                        for (char **e = errors; *e; e++)
                                log_error("Reload: %s", *e);
                else
                        log_error_errno(r, "Reload: failed to read %s: %m", path);
                log_warning("Reload of %s failed, keeping the current settings", path);
                return r;
        }

        fixed = config_diff_reloadable(current, &next, sections, &changed);
        if (fixed < 0)
                return log_error_errno(fixed, "Reload: failed to compare settings: %m");
        if (!changed || !changed[0]) {
                log_info("Reloaded %s: nothing changed", path);
                return 0;
        }
        for (const ConfigKey **k = changed; *k; k++) {
                _cleanup_free_ char *was = NULL, *now = NULL;
                (void) config_key_format_value(*k, current, &was);
                (void) config_key_format_value(*k, &next, &now);
                if ((*k)->reloadable)
                        log_notice("Reload: %s changed from %s to %s", (*k)->key, strna(was), strna(now));
                else
                        log_warning("Reload: %s changed from %s to %s, which needs a restart, ignoring",
                                    (*k)->key, strna(was), strna(now));
        }
        r = config_apply_reloadable(current, &next);
        if (r < 0)
                return log_error_errno(r, "Reload: failed to apply settings: %m");
        return 1;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) userdata;
        log_info("Received SIG%s, stopping", sigabbrev_np((int) si->ssi_signo));
        daemon_notify_stopping();
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

int daemon_setup_signals(sd_event *e, sd_event_signal_handler_t on_reload, void *userdata) {
        int r;

        r = block_signals();
        if (r < 0)
                return r;
        signal(SIGPIPE, SIG_IGN);

        r = sd_event_add_signal(e, NULL, SIGTERM, on_exit_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(e, NULL, SIGINT, on_exit_signal, NULL);
        if (r >= 0 && on_reload)
                r = sd_event_add_signal(e, NULL, SIGHUP, on_reload, userdata);
        if (r < 0)
                return r;
        return sd_event_set_watchdog(e, true);
}

void daemon_notify_ready(const char *status) {
        sd_notifyf(false, "READY=1\nSTATUS=%s", status);
}

void daemon_notify_status(const char *status) {
        sd_notifyf(false, "STATUS=%s", status);
}

void daemon_notify_stopping(void) {
        sd_notify(false, "STOPPING=1");
}
