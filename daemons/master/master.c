/* spark-master's manager: configuration, sockets, timers, systemd status. */
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "master.h"
#include "peer-log.h"

static void cluster_config_from(const SparkConfig *c, ClusterConfig *ret) {
        *ret = (ClusterConfig) {
                .worker_timeout = (usec_t) c->master.worker_timeout_ms * USEC_PER_MSEC,
                .spread_out = c->master.spread_out,
                .default_cores = (int) c->master.default_cores,
                .max_executor_retries = (int) c->master.max_executor_retries,
                .fair = streq(c->master.scheduling, "fair"),
                .preemption_timeout = (usec_t) c->master.preemption_timeout_ms * USEC_PER_MSEC,
        };
}

int master_new(const char *config_path, Master **ret) {
        _cleanup_(master_freep) Master *m = NULL;
        ClusterConfig cc;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->journal_fd = -1;
        m->config_path = strdup(config_path);
        if (!m->config_path)
                return -ENOMEM;
        r = daemon_load_config(config_path, &m->config);
        if (r != 0)
                return -EINVAL;
        m->tls = config_tls_for(&m->config, CONFIG_SECTION_MASTER);

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");

        /* One queue for all links: 10,000 workers are not 10,000 eventfds. */
        r = loop_queue_new(m->event, &m->link_queue);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the links' queue: %m");

        r = hashmap_new(&m->driver_checks);
        if (r < 0)
                return log_oom();

        cluster_config_from(&m->config, &cc);
        r = cluster_new(&cc, &master_effects, m, time(NULL), &m->cluster);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the cluster state: %m");

        *ret = TAKE_PTR(m);
        return 0;
}

Master *master_free(Master *m) {
        if (!m)
                return NULL;
        /* Stopping cleanly, every app number handed out is known: the
         * reserved ones left are not skipped by the next start. */
        if (m->cluster && m->state_timer && m->app_numbers_reserved > cluster_next_app_number(m->cluster)) {
                m->app_numbers_reserved = cluster_next_app_number(m->cluster);
                m->state_dirty = true;
        }
        /* a change not saved yet reaches the disk (or ZooKeeper, if we
         * still lead) before we go */
        if (m->cluster && m->state_dirty && master_ha_role(m->ha) == MASTER_ROLE_LEADER)
                (void) master_state_save(m);
        master_state_done(m);
        master_recovery_end(m);
        history_done(&m->history);
        /* ends the session: a standby takes over at once */
        m->ha = master_ha_free(m->ha);
        /* workers' links (rpc clients) go with the cluster */
        if (m->cluster) {
                size_t i = 0;
                void *v;
                while (hashmap_iterate(cluster_workers(m->cluster), &i, &v, NULL))
                        ((Worker *) v)->link = rpc_client_free(((Worker *) v)->link);
        }
        master_drivers_free(m);
        master_http_done(m);
        m->link_queue = loop_queue_free(m->link_queue);
        rpc_server_free(m->server);
        m->cluster = cluster_free(m->cluster);
        event_pub_free(m->events);
        sd_event_source_unref(m->worker_check);
        sd_event_source_unref(m->status_timer);
        sd_event_source_unref(m->state_timer);
        sd_event_source_unref(m->placement);
        free(m->resumed);
        sd_event_unref(m->event);
        config_done(&m->config);
        free(m->config_path);
        free(m);
        return NULL;
}

static void master_update_status(Master *m) {
        size_t napps = 0;

        for (App *a = cluster_apps(m->cluster); a; a = a->next)
                napps++;
        if (m->ha && master_ha_role(m->ha) != MASTER_ROLE_LEADER) {
                MasterRole role = master_ha_role(m->ha);
                snprintf(m->status, sizeof(m->status), "%s%s%s", master_role_to_string(role),
                         master_ha_presumed_replaced(m->ha) ? ": no ZooKeeper connection for a session timeout, "
                                                              "sending workers on" :
                         role == MASTER_ROLE_SUSPENDED ? ": no ZooKeeper connection, placing nothing" :
                         master_ha_leader_url(m->ha) ? ", leader is " : "",
                         role == MASTER_ROLE_SUSPENDED ? "" : strempty(master_ha_leader_url(m->ha)));
                daemon_notify_status(m->status);
                return;
        }
        snprintf(m->status, sizeof(m->status), "%s%zu workers, %zu apps, %zu executors%s%s",
                 m->ha ? "leader: " : "",
                 hashmap_size(cluster_workers(m->cluster)), napps, cluster_n_executors(m->cluster),
                 m->state_save_error < 0 ? "; state not saved: " : "",
                 m->state_save_error < 0 ? strerror(-m->state_save_error) : "");
        daemon_notify_status(m->status);
}

static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        master_update_status(userdata);
        (void) sd_event_source_set_time(s, usec + USEC_PER_SEC);
        return 0;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Master *m = userdata;
        ClusterConfig cc;
        (void) s, (void) si;

        if (daemon_reload_config(m->config_path, &m->config, CONFIG_SECTION_MASK(CONFIG_SECTION_MASTER)) > 0) {
                cluster_config_from(&m->config, &cc);
                cluster_set_config(m->cluster, &cc);
                master_schedule_worker_check(m);
                master_account_trim(m);
                master_state_changed(m);
        }
        return 0;
}

/* After the state is loaded, at a start or an election: new launches wait
 * for the workers of the state to register again and say what they run
 * (the state may not hold the executors launched just before the last
 * master died, and placing them again would run them twice); those that do
 * not come back within worker_timeout_ms are lost.  Launches under way go
 * out again; both through the placement source: within the limit of calls
 * in flight, between requests. */
static void master_go_on_from_state(Master *m) {
        master_recovery_start(m);
        master_resume_launches(m);
        master_place_soon(m);
        master_schedule_worker_check(m);
}

int master_start(Master *m) {
        bool zookeeper = streq(m->config.master.recovery_mode, "zookeeper");
        char error[256] = "";
        int r;

        r = daemon_setup_signals(m->event, on_reload, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m");

        r = daemon_watch_tls(m->event, &m->config);
        if (r < 0)
                return log_error_errno(r, "Failed to watch TLS handshakes: %m");

        /* before the sockets: what was running goes on (with ZooKeeper,
         * once elected: master_became_leader()) */
        if (!zookeeper) {
                r = master_state_load(m);
                if (r < 0)
                        return r;
        }

        r = event_pub_new(m->config.master.events_listen, 0, &m->tls, &m->events);
        if (r < 0)
                return log_error_errno(r, "Failed to listen for subscribers on %s: %m", m->config.master.events_listen);

        r = rpc_server_new_envelope(m->event, m->config.master.listen, &(RpcServerConfig) { .tls = &m->tls },
                                    master_handle_request, m, &m->server);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", m->config.master.listen);
        r = rpc_server_set_roles(m->server, master_required_roles, daemon_role_refused, m, error, sizeof(error));
        if (r < 0)
                return log_error_errno(r, "Failed to check roles on %s: %s", m->config.master.listen, error);

        r = master_http_start(m);
        if (r < 0)
                return r;

        r = sd_event_add_time_relative(m->event, &m->status_timer, CLOCK_MONOTONIC, USEC_PER_SEC, 0, on_status_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the status timer: %m");
        (void) sd_event_source_set_enabled(m->status_timer, SD_EVENT_ON);

        if (zookeeper) {
                r = master_ha_start(m, &m->ha);
                if (r < 0)
                        return r;
        } else
                master_go_on_from_state(m);
        log_info("Master %s listening on %s, events on %s", cluster_id(m->cluster), m->config.master.listen,
                 m->config.master.events_listen);
        master_update_status(m);
        daemon_notify_ready(m->status);
        return 0;
}

int master_became_leader(Master *m) {
        int r;

        r = master_state_load(m);
        if (r < 0)
                return r;
        /* Workers and drivers find us as they find the old leader gone */
        master_go_on_from_state(m);
        master_update_status(m);
        return 0;
}

void master_deposed(Master *m, const char *why) {
        log_struct(LOG_ERR, LOG_FIELDS(.message_id = SPARK_MESSAGE_MASTER_FENCED),
                   "No longer the leader: %s; exiting, to start again as a standby", why);
        /* nothing more goes out: not even the final save */
        m->state_dirty = false;
        (void) sd_event_exit(m->event, -ETIME);
}

int master_run(Master *m) {
        return sd_event_loop(m->event);
}
