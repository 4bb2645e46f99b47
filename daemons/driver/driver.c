/* spark-driver's manager: configuration, sockets, timers, and leaving
 * cleanly (the application is unregistered, so every executor unit of it
 * goes away). */
#include "daemon.h"
#include "driver-executors.h"
#include "driver-jobs.h"
#include "driver-journal.h"
#include "driver-spill.h"
#include "driver-master.h"
#include "peer-log.h"
#include "endpoint.h"
#include "log.h"

static void scheduler_config_from(const SparkConfig *c, SchedulerConfig *ret) {
        scheduler_config_default(ret);
        ret->task_max_failures = (unsigned) c->driver.task_max_failures;
        ret->locality_wait_usec = (usec_t) c->driver.locality_wait_ms * USEC_PER_MSEC;
        ret->max_result_bytes = (uint64_t) c->driver.max_result_mb * 1024 * 1024;
        ret->executor_prefetch = DRIVER_MAX_PREFETCH;
}

/* Tasks came: the parked polls take them, and an elastic app may want
 * more executors (or its first one). */
static void work_ready(Driver *d) {
        driver_wake_parked(d);
        driver_elastic_kick(d);
}

static void executor_registered(Driver *d, int executor_id) {
        const char *events_url = driver_announced_worker_events(d, executor_id);

        if (events_url)
                driver_subscribe_worker(d, events_url);
}

/* The lower parts' requests of the upper ones (DriverEffects in driver.h). */
static const DriverEffects driver_effects = {
        .work_ready = work_ready,
        .kill = driver_queue_kill,
        .kills_queued = driver_send_kills,
        .resync = driver_request_snapshot,
        .executor_registered = executor_registered,
};

int driver_new(const char *config_path, Driver **ret) {
        _cleanup_(driver_freep) Driver *d = NULL;
        SchedulerConfig sc;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->effects = &driver_effects;
        d->config_path = strdup(config_path);
        if (!d->config_path)
                return -ENOMEM;
        if (daemon_load_config(config_path, &d->config) != 0)
                return -EINVAL;
        d->tls = config_tls_for(&d->config, CONFIG_SECTION_DRIVER);

        r = driver_executor_key_init(d);
        if (r < 0)
                return log_error_errno(r, "Failed to make the executors' key: %m");
        /* what executors dial */
        r = endpoint_advertise(isempty(d->config.driver.executor_listen) ? d->config.driver.listen
                                                                           : d->config.driver.executor_listen,
                               d->config.driver.advertise_host, &d->url);
        if (r < 0)
                return log_error_errno(r, "Failed to derive the advertised endpoint: %m");

        scheduler_config_from(&d->config, &sc);
        r = scheduler_new(&sc, &d->scheduler);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the scheduler: %m");

        if (hashmap_new(&d->jobs) < 0 || hashmap_new(&d->submissions) < 0 || hashmap_new(&d->libraries) < 0 ||
            hashmap_new(&d->pipes) < 0 || hashmap_new(&d->worker_events) < 0 || hashmap_new(&d->announced) < 0)
                return log_oom();
        d->next_job_number = 1;
        d->heartbeat_timeout = (usec_t) d->config.driver.executor_heartbeat_timeout_ms * USEC_PER_MSEC;
        /* A parked poll is answered well within the heartbeat timeout, so a
         * live executor always polls in time. */
        d->poll_interval_ms = (int) MIN(MAX(d->config.driver.executor_heartbeat_timeout_ms / 5, 50), 2000);

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        /* the application id and key, jobs and results of before a restart */
        r = driver_journal_open(d);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(d);
        return 0;
}

Driver *driver_free(Driver *d) {
        size_t i = 0;
        void *v;

        if (!d)
                return NULL;
        d->server = rpc_server_free(d->server);  /* parked polls are abandoned */
        d->executor_server = rpc_server_free(d->executor_server);
        d->master = rpc_client_free(d->master);
        master_link_done(&d->master_link);
        d->master_events = event_sub_free(d->master_events);
        driver_http_done(d);
        if (d->worker_events)
                while (hashmap_iterate(d->worker_events, &i, &v, NULL))
                        event_sub_free(v);
        hashmap_free(d->worker_events);
        driver_journal_close(d);
        driver_jobs_free(d);
        d->spill = result_spill_free(d->spill);
        driver_executors_free(d);
        hashmap_free(d->jobs);
        hashmap_free(d->submissions);
        hashmap_free(d->libraries);
        hashmap_free(d->pipes);
        driver_forget_all_announced(d);
        hashmap_free(d->announced);
        scheduler_free(d->scheduler);
        sd_event_source_disable_unref(d->revive_timer);
        sd_event_source_disable_unref(d->heartbeat_timer);
        sd_event_source_disable_unref(d->register_timer);
        sd_event_source_disable_unref(d->status_timer);
        driver_elastic_done(d);
        sd_event_unref(d->event);
        config_done(&d->config);
        explicit_bzero(d->executor_key, sizeof(d->executor_key));
        free(d->url);
        free(d->config_path);
        free(d);
        return NULL;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Driver *d = userdata;
        (void) s, (void) si;

        if (daemon_reload_config(d->config_path, &d->config, CONFIG_SECTION_MASK(CONFIG_SECTION_DRIVER)) > 0) {
                SchedulerConfig sc;
                int r;

                d->heartbeat_timeout = (usec_t) d->config.driver.executor_heartbeat_timeout_ms * USEC_PER_MSEC;
                scheduler_config_from(&d->config, &sc);
                r = scheduler_set_config(d->scheduler, &sc);
                if (r < 0)
                        log_warning_errno(r, "Reload: the scheduler refused the new settings, ignoring: %m");
                driver_elastic_reload(d);
        }
        return 0;
}

static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Driver *d = userdata;
        size_t running = 0;
        char status[256];

        for (Job *j = scheduler_first_job(d->scheduler); j; j = scheduler_next_job(j))
                running += scheduler_job_state(j) == JOB_RUNNING;
        snprintf(status, sizeof(status), "%s %s: %zu executors, %zu jobs running, %zu tasks pending",
                 d->registered ? "application" : "registering", d->registered ? d->app_id : d->config.driver.app_name,
                 d->n_live_executors, running, scheduler_n_pending(d->scheduler));
        daemon_notify_status(status);
        driver_report_load(d);
        if (d->resync_after_recovery)
                driver_request_snapshot(d);
        (void) sd_event_source_set_time(s, usec + USEC_PER_SEC);
        return 0;
}

static int on_register_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Driver *d = userdata;

        if (!d->registered)
                driver_register_app(d);
        (void) sd_event_source_set_time(s, usec + USEC_PER_SEC);
        return 0;
}

/* Executors of a tcp:// or tls+tcp:// endpoint poll on the task channel
 * (docs/DESIGN.md §4), unless driver.task_channel says no; beside a plain
 * endpoint that clients call too, they call there as well. */
static int driver_listen_task_channel(Driver *d) {
        RpcServer *s = d->executor_server ?: d->server;
        const char *failed = NULL;
        int r;

        if (!d->config.driver.task_channel)
                return 0;
        r = rpc_server_listen_stream(s, &d->tls, &d->task_channel_port, &failed);
        if (r == -EOPNOTSUPP)
                return 0; /* ipc://: nng it is */
        if (r < 0 && failed)
                return log_error_errno(r, "Failed to listen for executors' task channel beside %s: %s %s: %m",
                                       rpc_server_url(s), failed,
                                       streq(failed, "certificate") ? d->tls.cert_file : d->tls.key_file);
        if (r < 0)
                return log_error_errno(r, "Failed to listen for executors' task channel beside %s: %m",
                                       rpc_server_url(s));
        log_info("Executors poll on the task channel, port %u beside %s%s.", (unsigned) d->task_channel_port,
                 rpc_server_url(s),
                 tls_url(rpc_server_url(s)) ? " (TLS)" : s == d->server ? ", and clients call there" : "");
        return 0;
}

int driver_start(Driver *d) {
        RpcServerConfig sc = { .max_request_bytes = DRIVER_MAX_REQUEST_BYTES, .tls = &d->tls };
        char error[256] = "";
        int r;

        r = daemon_setup_signals(d->event, on_reload, d);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m");
        r = daemon_watch_tls(d->event, &d->config);
        if (r < 0)
                return log_error_errno(r, "Failed to watch TLS handshakes: %m");
        r = rpc_server_new_envelope(d->event, d->config.driver.listen, &sc, driver_handle_request, d, &d->server);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", d->config.driver.listen);
        r = rpc_server_set_roles(d->server, driver_required_roles, daemon_role_refused, d, error, sizeof(error));
        if (r < 0)
                return log_error_errno(r, "Failed to check roles on %s: %s", d->config.driver.listen, error);
        rpc_server_set_pipe_handler(d->server, driver_on_pipe, d);
        if (!isempty(d->config.driver.executor_listen)) {
                RpcServerConfig ec = sc;

                ec.tls_no_client_cert = true;
                r = rpc_server_new_envelope(d->event, d->config.driver.executor_listen, &ec,
                                            driver_handle_executor_request, d, &d->executor_server);
                if (r < 0)
                        return log_error_errno(r, "Failed to listen for executors on %s: %m",
                                               d->config.driver.executor_listen);
                rpc_server_set_pipe_handler(d->executor_server, driver_on_pipe, d);
        }
        r = driver_listen_task_channel(d);
        if (r < 0)
                return r;
        r = master_link_init(&d->master_link, d->config.cluster.master);
        if (r < 0)
                return log_error_errno(r, "Failed to parse cluster.master \"%s\": %m", d->config.cluster.master);
        /* a driver calls the master seldom: one call without an answer is
         * enough to try the next */
        d->master_link.misses_max = 1;
        r = rpc_client_new(d->event, master_link_url(&d->master_link), &(RpcClientConfig) { .tls = &d->tls },
                           &d->master);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the connection to the master at %s: %m",
                                       d->config.cluster.master);
        r = driver_subscribe_master(d);
        if (r < 0)
                return log_error_errno(r, "Failed to subscribe to the master's events at %s: %m",
                                       d->config.cluster.master_events);
        r = driver_elastic_start(d);
        if (r < 0)
                return r;
        r = driver_start_heartbeat_checks(d);
        if (r < 0)
                return log_error_errno(r, "Failed to start the executor heartbeat checks: %m");
        /* before registering: the application's record carries the UI's address */
        r = driver_http_start(d);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(d->event, &d->register_timer, CLOCK_MONOTONIC, 0, 0, on_register_timer, d);
        if (r < 0)
                return log_error_errno(r, "Failed to start registration: %m");
        (void) sd_event_source_set_enabled(d->register_timer, SD_EVENT_ON);
        r = sd_event_add_time_relative(d->event, &d->status_timer, CLOCK_MONOTONIC, USEC_PER_SEC, 0, on_status_timer, d);
        if (r < 0)
                return log_error_errno(r, "Failed to add the status timer: %m");
        (void) sd_event_source_set_enabled(d->status_timer, SD_EVENT_ON);

        log_info("Driver for application '%s' listening on %s%s%s (executors dial %s), master %s",
                 d->config.driver.app_name, d->config.driver.listen,
                 isempty(d->config.driver.executor_listen) ? "" : ", for executors on ",
                 strempty(d->config.driver.executor_listen), d->url, d->config.cluster.master);
        daemon_notify_ready("registering the application");
        return 0;
}

/* On stop: tell the master, which kills every executor of the app. */
void driver_unregister(Driver *d) {
        Spark__UnregisterApplication ua = SPARK__UNREGISTER_APPLICATION__INIT;
        Envelope env = ENVELOPE_INIT, *reply = NULL;
        int r;

        if (!d->registered)
                return;
        if (driver_journal_enabled(d)) {
                /* a restart takes the application back (master.driver_reconnect_ms) */
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id),
                           "Stopping with application %s kept: its jobs are in %s", d->app_id,
                           d->config.driver.state_dir);
                return;
        }
        ua.app_id = d->app_id;
        ua.reason = (char *) "driver stopped";
        ENVELOPE_SET(&env, UNREGISTER_APPLICATION, unregister_application, &ua);
        /* With several masters: the current one, else each in turn, and
         * the leader a standby names (docs/ha.md). */
        for (size_t i = 0; i < MAX(d->master_link.urls.n, (size_t) 1); i++) {
                const char *url = d->master_link.urls.n > 0
                                          ? d->master_link.urls.urls[(d->master_link.current + i) % d->master_link.urls.n]
                                          : d->config.cluster.master;
                char leader[ENDPOINT_LIST_URL_MAX];

                reply = envelope_free(reply);
                r = rpc_call_sync_tls(url, &d->tls, &env, 3000, 0, &reply);
                if (r < 0 && reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR &&
                    standby_reply_leader(reply->error->code, reply->error->message, leader, sizeof(leader)) == 0 &&
                    endpoint_list_find(&d->master_link.urls, leader) >= 0) {
                        reply = envelope_free(reply);
                        r = rpc_call_sync_tls(leader, &d->tls, &env, 3000, 0, &reply);
                }
                if (r >= 0 || (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR &&
                               standby_reply_leader(reply->error->code, reply->error->message, leader,
                                                    sizeof(leader)) == -ENOENT))
                        break;
        }
        envelope_free(reply);
        if (r < 0)
                log_warning_errno(r, "Failed to unregister application %s from the master: %m", d->app_id);
        else
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id, .message_id = SPARK_MESSAGE_APP_REMOVED),
                           "Application %s unregistered", d->app_id);
}
