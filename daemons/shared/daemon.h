/* What every spark program does the same way: the standard command line
 * (--config, --check-config, --version, --help), loading the configuration
 * with errors printed as FILE:LINE: message, SIGHUP reloads that keep the old
 * settings when the new file is bad, and talking to systemd (READY, STATUS,
 * STOPPING, the watchdog). */
#pragma once

#include <stdbool.h>

#include <systemd/sd-event.h>

#include "config.h"
#include "exit-guard.h"

/* spark-executor's exit status when its driver cannot be reached (it could
 * not register, or the driver stopped answering): EX_UNAVAILABLE.  The
 * master then asks the driver itself, and removes the application of a
 * driver that does not answer (daemons/master/master-drivers.c). */
#define SPARK_EXIT_DRIVER_UNREACHABLE 69

/* spark-driver's exit status when the master removed its application as
 * failed: killed by an operator (sparkctl kill-app), or its executors failed
 * max_executor_retries times in a row.  Restarting the driver would only
 * register a new application, so the packaged units list it in
 * RestartPreventExitStatus= (spark-driver(8)). */
#define SPARK_EXIT_APP_FAILED 79

typedef struct DaemonOptions {
        const char *name;          /* "spark-master" */
        const char *config_name;   /* "master": /etc/spark/master.conf */
        const char *summary;       /* one line for --help */
} DaemonOptions;

/* Parses argv.  Returns 0 to go on (then *ret_config_path is set), 1 to
 * exit right away with *ret_exit (--help, --version, --check-config and usage
 * errors print their own output), or -errno.  --config-name NAME picks
 * /etc/spark/NAME.conf (spark-driver@NAME uses driver-NAME). */
int daemon_parse_args(const DaemonOptions *o, int argc, char **argv, char **ret_config_path, int *ret_exit);

/* Loads the configuration, printing every error; returns 0 or EXIT_CONFIG
 * (EXIT_FAILURE if signals cannot be blocked).  TLS files it names must
 * also be usable (config_check_tls()).  Blocks SIGTERM, SIGINT and SIGHUP
 * first (daemon_setup_signals() handles them): checking the TLS files starts
 * nng's threads, which must not receive them. */
int daemon_load_config(const char *path, SparkConfig *ret);

/* When c configures TLS: logs, as a warning with MESSAGE_ID
 * SPARK_MESSAGE_TLS_REFUSED, every TLS handshake that fails on a tls+tcp://
 * listener (a peer refused) or dialer (we were refused, or refused the
 * peer) of the process, from now on, for as long as e lives (tls-watch.h:
 * nng 1.5 gives the endpoint and a count, not the peer).  Does nothing
 * otherwise. */
int daemon_watch_tls(sd_event *e, const SparkConfig *c);

/* SIGHUP: loads path again; on errors logs them and keeps *current; else logs
 * every changed key, warns about those that need a restart (they keep their
 * old value) and applies the reloadable ones.  Returns > 0 if something was
 * applied, 0 if nothing changed, < 0 if the file was bad. */
int daemon_reload_config(const char *path, SparkConfig *current, unsigned sections);

/* SIGTERM and SIGINT exit the loop, SIGHUP calls on_reload; the watchdog
 * is served by sd-event when WATCHDOG_USEC is set. */
int daemon_setup_signals(sd_event *e, sd_event_signal_handler_t on_reload, void *userdata);

void daemon_notify_ready(const char *status);
void daemon_notify_status(const char *status);
void daemon_notify_stopping(void);

