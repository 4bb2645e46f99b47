/* spark-worker's manager: configuration, identity, sockets, adoption of the
 * executors that outlived a previous run. */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "daemon.h"
#include "endpoint.h"
#include "log.h"
#include "peer-log.h"
#include "worker.h"

/* The worker keeps its id across restarts (in work_dir), so that the master
 * takes a restarted worker for the same one and its executors stay its own. */
/* The port in a worker id; an ipc:// worker has none, so a number derived
 * from its socket path keeps two workers of one host apart. */
static unsigned worker_id_port(const char *listen) {
        unsigned port = endpoint_port(listen);
        uint32_t h = 2166136261u;

        if (port > 0)
                return port;
        for (const char *p = listen; *p; p++)
                h = (h ^ (unsigned char) *p) * 16777619u;
        return 65536 + h % 900000;
}

static int worker_load_id(WorkerManager *w) {
        _cleanup_free_ char *path = NULL;
        unsigned port = worker_id_port(w->config.worker.listen);
        char buf[WORKER_ID_MAX] = "";
        FILE *f;
        int r;

        if (asprintf(&path, "%s/worker-%u.id", w->config.worker.work_dir, port) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (f) {
                if (fgets(buf, sizeof(buf), f))
                        buf[strcspn(buf, "\n")] = 0;
                fclose(f);
                /* the same host: keep it; a copied work_dir on another host must not */
                if (worker_id_is_valid(buf) && strstr(buf, w->host)) {
                        snprintf(w->id, sizeof(w->id), "%s", buf);
                        return 0;
                }
        }
        r = worker_id_format(w->id, sizeof(w->id), time(NULL), w->host, port);
        if (r < 0)
                return r;
        if (mkdir(w->config.worker.work_dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fprintf(f, "%s\n", w->id);
        r = fclose(f) == 0 ? 0 : -errno;
        return r;
}

/* memory_mb = 0 offers the physical memory but memory_reserve_mb, which
 * the host's own services and page cache keep. */
static int worker_detect_resources(WorkerManager *w) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
        int64_t physical_mb = (int64_t) pages * page_size / (1024 * 1024);

        w->cores = w->config.worker.cores > 0 ? (int) w->config.worker.cores : (int) MAX(cpus, 1);
        if (w->config.worker.memory_mb > 0) {
                w->memory_mb = w->config.worker.memory_mb;
                return 0;
        }
        if (physical_mb <= 0)
        {
                log_error("Failed to detect this host's memory; set worker.memory_mb in %s", w->config_path);
                return -EIO;
        }
        w->memory_mb = physical_mb - w->config.worker.memory_reserve_mb;
        if (w->memory_mb <= 0) {
                log_error("%s: worker.memory_reserve_mb = %" PRIi64 " leaves nothing of this host's %" PRIi64
                          " MiB to offer; lower it, or set worker.memory_mb",
                          w->config_path, w->config.worker.memory_reserve_mb, physical_mb);
                return -EINVAL;  /* a configuration error: EXIT_CONFIG */
        }
        return 0;
}

int worker_new(const char *config_path, WorkerManager **ret) {
        _cleanup_(worker_freep) WorkerManager *w = NULL;
        _cleanup_free_ char *epoch_path = NULL;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->config_path = strdup(config_path);
        if (!w->config_path)
                return -ENOMEM;
        if (daemon_load_config(config_path, &w->config) != 0)
                return -EINVAL;
        w->tls = config_tls_for(&w->config, CONFIG_SECTION_WORKER);

        if (!isempty(w->config.worker.advertise_host))
                snprintf(w->host, sizeof(w->host), "%s", w->config.worker.advertise_host);
        else if ((r = host_name(w->host, sizeof(w->host))) < 0)
                return log_error_errno(r, "Failed to get the host name: %m");

        r = endpoint_advertise(w->config.worker.listen, w->host, &w->endpoint);
        if (r >= 0)
                r = endpoint_advertise(w->config.worker.events_listen, w->host, &w->events_endpoint);
        if (r < 0)
                return log_error_errno(r, "Failed to derive the advertised endpoints: %m");

        r = worker_detect_resources(w);  /* logs */
        if (r < 0)
                return r;
        r = worker_load_id(w);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the worker id in %s: %m", w->config.worker.work_dir);
        if (asprintf(&epoch_path, "%s/worker-%u.epoch", w->config.worker.work_dir,
                     worker_id_port(w->config.worker.listen)) < 0)
                return log_oom();
        r = worker_load_master_epoch(w, epoch_path);  /* logs */
        if (r < 0)
                return r;

        r = hashmap_new(&w->executors);
        if (r < 0)
                return log_oom();
        r = sd_event_default(&w->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");

        *ret = TAKE_PTR(w);
        return 0;
}

WorkerManager *worker_free(WorkerManager *w) {
        size_t i = 0;
        void *v;

        if (!w)
                return NULL;
        /* first everything that may call back into the executor table */
        worker_http_done(w);
        w->master = rpc_client_free(w->master);
        master_link_done(&w->master_link);
        w->server = rpc_server_free(w->server);
        w->units = unit_manager_free(w->units);
        event_pub_free(w->events);
        worker_resources_done(w);
        if (w->executors)
                while (hashmap_iterate(w->executors, &i, &v, NULL))
                        free(v);
        hashmap_free(w->executors);
        sd_event_source_unref(w->heartbeat_timer);
        sd_event_source_unref(w->retry_timer);
        sd_event_source_unref(w->status_timer);
        sd_event_source_unref(w->work_dir_timer);
        sd_event_unref(w->event);
        config_done(&w->config);
        free(w->endpoint);
        free(w->epoch_path);
        free(w->events_endpoint);
        free(w->config_path);
        free(w);
        return NULL;
}

static void on_units_listed(UnitManager *m, int error, const AdoptedUnit *units, size_t n, void *userdata) {
        WorkerManager *w = userdata;
        size_t adopted = 0;
        (void) m;

        if (error < 0)
                log_warning_errno(error, "Failed to list executor units, adopting none: %m");
        else
                worker_secrets_clean(w, units, n);
        for (size_t i = 0; i < n; i++) {
                const AdoptedUnit *u = &units[i];
                LocalExecutor *e;

                /* On a shared (user) manager other workers' units show up too. */
                if (!streq(u->worker_id, w->id))
                        continue;
                if (worker_executor_add(w, u->app_id, u->executor_id, u->cores, u->memory_mb,
                                        SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, &e) < 0)
                        continue;
                e->pid = u->pid;
                adopted++;
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = u->app_id, .executor_id = u->executor_id, .worker_id = w->id,
                                                .unit = u->unit),
                           "Adopted running executor %s/%d (%s, pid %" PRIi64 ")", u->app_id, u->executor_id,
                           u->unit, u->pid);
        }
        w->adopted = true;
        if (adopted > 0)
                log_info("Adopted %zu running executors", adopted);
        worker_register(w);
}

static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        WorkerManager *w = userdata;
        char status[256];

        snprintf(status, sizeof(status), "%s, %zu executors, %d cores", w->registered ? "registered" : "registering",
                 unit_manager_watched(w->units), w->cores);
        daemon_notify_status(status);
        worker_sample_usage(w);
        (void) sd_event_source_set_time(s, usec + USEC_PER_SEC);
        return 0;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        WorkerManager *w = userdata;
        (void) s, (void) si;

        (void) daemon_reload_config(w->config_path, &w->config, CONFIG_SECTION_MASK(CONFIG_SECTION_WORKER));
        return 0;
}

int worker_start(WorkerManager *w) {
        char error[256] = "";
        bool user_bus = streq(w->config.worker.systemd_bus, "user");
        int r;

        r = daemon_setup_signals(w->event, on_reload, w);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m");

        /* before anything else runs: a discovery script is a child of ours */
        r = worker_resources_load(w);
        if (r < 0)
                return r;

        r = worker_secrets_init(w);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the directory of executor secrets%s%s: %m",
                                       w->secrets_dir[0] ? " " : "", w->secrets_dir);

        r = unit_manager_new(w->event, user_bus, worker_on_unit_state, w, &w->units);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the %s bus: %m", w->config.worker.systemd_bus);

        r = daemon_watch_tls(w->event, &w->config);
        if (r < 0)
                return log_error_errno(r, "Failed to watch TLS handshakes: %m");
        r = event_pub_new(w->config.worker.events_listen, 0, &w->tls, &w->events);
        if (r < 0)
                return log_error_errno(r, "Failed to listen for subscribers on %s: %m", w->config.worker.events_listen);
        r = rpc_server_new_envelope(w->event, w->config.worker.listen, &(RpcServerConfig) { .tls = &w->tls },
                                    worker_handle_request, w, &w->server);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", w->config.worker.listen);
        r = rpc_server_set_roles(w->server, worker_required_roles, daemon_role_refused, w, error, sizeof(error));
        if (r < 0)
                return log_error_errno(r, "Failed to check roles on %s: %s", w->config.worker.listen, error);
        r = master_link_init(&w->master_link, w->config.cluster.master);
        if (r < 0)
                return log_error_errno(r, "Failed to parse cluster.master \"%s\": %m", w->config.cluster.master);
        r = rpc_client_new(w->event, master_link_url(&w->master_link), &(RpcClientConfig) { .tls = &w->tls },
                           &w->master);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the connection to the master at %s: %m",
                                       w->config.cluster.master);

        r = worker_http_start(w);
        if (r < 0)
                return r;

        r = worker_start_heartbeats(w);
        if (r < 0)
                return log_error_errno(r, "Failed to start heartbeats: %m");

        r = sd_event_add_time_relative(w->event, &w->status_timer, CLOCK_MONOTONIC, USEC_PER_SEC, 0, on_status_timer, w);
        if (r < 0)
                return log_error_errno(r, "Failed to add the status timer: %m");
        (void) sd_event_source_set_enabled(w->status_timer, SD_EVENT_ON);

        r = worker_work_dirs_start(w);
        if (r < 0)
                return log_error_errno(r, "Failed to add the work dir timer: %m");

        /* Register only after adoption, so the master hears of every executor. */
        r = unit_manager_list(w->units, on_units_listed, w);
        if (r < 0)
                return log_error_errno(r, "Failed to list executor units: %m");

        log_info("Worker %s: %d cores, %" PRIi64 " MiB, listening on %s, events on %s, master %s", w->id, w->cores,
                 w->memory_mb, w->config.worker.listen, w->config.worker.events_listen, w->config.cluster.master);
        daemon_notify_ready("registering with the master");
        return 0;
}
