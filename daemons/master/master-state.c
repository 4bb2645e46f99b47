/* The master's state on disk (state_dir/state.pb), so that a restart loses
 * nothing: applications with their id counters, workers, and the executors
 * running on them.  Written atomically (temporary file, fsync, rename,
 * fsync of the directory) a moment after each change — at once when a new
 * application id was handed out, so that no id is ever handed out twice. */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "log.h"
#include "master.h"

#define STATE_FILE "state.pb"
#define STATE_VERSION 1u
#define STATE_MAX_BYTES (512u * 1024u * 1024u)
#define STATE_SAVE_DELAY_USEC (50 * USEC_PER_MSEC)

typedef struct StateBuffers {
        Spark__MasterSnapshot snap;
        Spark__AppRecord *records;
        Spark__AppRecord **record_ptrs;
        Spark__AppInfo *apps;
        Spark__KeyValue *env;
        Spark__KeyValue **env_ptrs;
        Spark__WorkerInfo *workers;
        Spark__WorkerInfo **worker_ptrs;
        Spark__ExecutorInfo *executors;
        Spark__ExecutorInfo **executor_ptrs;
        char (*units)[UNIT_NAME_MAX];
        char **env_keys;
        size_t n_env_keys;
} StateBuffers;

static void state_buffers_done(StateBuffers *b) {
        for (size_t i = 0; i < b->n_env_keys; i++)
                free(b->env_keys[i]);
        free(b->env_keys);
        free(b->records);
        free(b->record_ptrs);
        free(b->apps);
        free(b->env);
        free(b->env_ptrs);
        free(b->workers);
        free(b->worker_ptrs);
        free(b->executors);
        free(b->executor_ptrs);
        free(b->units);
}

static int state_build(Master *m, StateBuffers *b) {
        Hashmap *workers = cluster_workers(m->cluster);
        size_t na = 0, ne = 0, nenv = 0, nw = hashmap_size(workers), i = 0;
        void *v;

        for (App *a = cluster_apps(m->cluster); a; a = a->next) {
                na++;
                ne += a->n_live_executors;
                nenv += a->n_env;
        }
        b->records = calloc(na + 1, sizeof(*b->records));
        b->record_ptrs = calloc(na + 1, sizeof(*b->record_ptrs));
        b->apps = calloc(na + 1, sizeof(*b->apps));
        b->env = calloc(nenv + 1, sizeof(*b->env));
        b->env_ptrs = calloc(nenv + 1, sizeof(*b->env_ptrs));
        b->env_keys = calloc(nenv + 1, sizeof(*b->env_keys));
        b->workers = calloc(nw + 1, sizeof(*b->workers));
        b->worker_ptrs = calloc(nw + 1, sizeof(*b->worker_ptrs));
        b->executors = calloc(ne + 1, sizeof(*b->executors));
        b->executor_ptrs = calloc(ne + 1, sizeof(*b->executor_ptrs));
        b->units = calloc(ne + 1, sizeof(*b->units));
        if (!b->records || !b->record_ptrs || !b->apps || !b->env || !b->env_ptrs || !b->env_keys || !b->workers ||
            !b->worker_ptrs || !b->executors || !b->executor_ptrs || !b->units)
                return -ENOMEM;

        spark__master_snapshot__init(&b->snap);
        b->snap.version = STATE_VERSION;
        b->snap.start_time = cluster_start_time(m->cluster);
        b->snap.next_app_number = cluster_next_app_number(m->cluster);

        while (hashmap_iterate(workers, &i, &v, NULL)) {
                Worker *w = v;
                Spark__WorkerInfo *wi = &b->workers[b->snap.n_workers];
                spark__worker_info__init(wi);
                wi->worker_id = w->id;
                wi->host = w->host;
                wi->endpoint = w->endpoint;
                wi->events_endpoint = w->events_endpoint;
                wi->cores = w->cores;
                wi->memory_mb = w->memory_mb;
                wi->state = w->state;
                b->worker_ptrs[b->snap.n_workers++] = wi;
        }

        for (App *a = cluster_apps(m->cluster); a; a = a->next) {
                Spark__AppRecord *r = &b->records[b->snap.n_apps];
                Spark__AppInfo *ai = &b->apps[b->snap.n_apps];

                spark__app_record__init(r);
                spark__app_info__init(ai);
                ai->app_id = a->id;
                ai->name = a->name;
                ai->driver_url = a->driver_url;
                ai->state = a->state;
                ai->max_cores = a->max_cores;
                ai->cores_per_executor = a->cores_per_executor;
                ai->executor_memory_mb = a->executor_memory_mb;
                r->info = ai;
                r->driver_events = a->driver_events;
                r->next_executor_id = a->next_executor_id;
                r->executor_limit = a->executor_limit;
                r->retry_count = a->retry_count;
                r->env = &b->env_ptrs[b->n_env_keys];
                for (size_t k = 0; k < a->n_env; k++) {
                        Spark__KeyValue *kv = &b->env[b->n_env_keys];
                        const char *eq = strchr(a->env[k], '=');
                        spark__key_value__init(kv);
                        kv->key = b->env_keys[b->n_env_keys] = strndup(a->env[k], (size_t) (eq - a->env[k]));
                        if (!kv->key)
                                return -ENOMEM;
                        kv->value = (char *) eq + 1;
                        b->env_ptrs[b->n_env_keys++] = kv;
                        r->n_env++;
                }
                b->record_ptrs[b->snap.n_apps++] = r;

                for (size_t k = 0; k < a->n_executors_allocated; k++) {
                        Executor *e = a->executors[k];
                        if (!e || executor_state_is_terminal(e->state) || !e->worker || b->snap.n_executors >= ne)
                                continue;
                        executor_info_fill(e, &b->executors[b->snap.n_executors], b->units[b->snap.n_executors],
                                           UNIT_NAME_MAX);
                        b->executor_ptrs[b->snap.n_executors] = &b->executors[b->snap.n_executors];
                        b->snap.n_executors++;
                }
        }
        b->snap.apps = b->record_ptrs;
        b->snap.workers = b->worker_ptrs;
        b->snap.executors = b->executor_ptrs;
        return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int master_state_save(Master *m) {
        _cleanup_(state_buffers_done) StateBuffers b = {};
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        _cleanup_close_ int fd = -1, dfd = -1;
        const char *dir = m->config.master.state_dir;
        size_t len;
        int r;

        m->state_dirty = false;
        r = state_build(m, &b);
        if (r < 0)
                return log_error_errno(r, "Failed to collect the state to save: %m");
        len = spark__master_snapshot__get_packed_size(&b.snap);
        buf = malloc(len ? len : 1);
        if (!buf)
                return log_oom();
        spark__master_snapshot__pack(&b.snap, buf);

        if (asprintf(&path, "%s/" STATE_FILE, dir) < 0 || asprintf(&tmp, "%s/." STATE_FILE ".tmp", dir) < 0)
                return log_oom();
        if (mkdir(dir, 0750) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create %s: %m", dir);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
        if (fd < 0)
                return log_error_errno(errno, "Failed to create %s: %m", tmp);
        r = write_all(fd, buf, len);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return log_error_errno(r, "Failed to write %s: %m", tmp);
        }
        if (rename(tmp, path) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return log_error_errno(r, "Failed to replace %s: %m", path);
        }
        /* the rename itself must reach the disk */
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                (void) fsync(dfd);
        log_debug("Saved the state: %zu apps, %zu workers, %zu executors (%zu bytes)", b.snap.n_apps,
                  b.snap.n_workers, b.snap.n_executors, len);
        return 0;
}

static int on_save_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Master *m = userdata;
        (void) s, (void) usec;

        if (m->state_dirty)
                (void) master_state_save(m);
        return 0;
}

void master_state_changed(Master *m) {
        if (m->state_dirty || !m->state_timer)
                return;
        m->state_dirty = true;
        (void) sd_event_source_set_time_relative(m->state_timer, STATE_SAVE_DELAY_USEC);
        (void) sd_event_source_set_enabled(m->state_timer, SD_EVENT_ONESHOT);
}

static int read_file(const char *path, uint8_t **ret, size_t *ret_len) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        size_t off = 0;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((uint64_t) st.st_size > STATE_MAX_BYTES)
                return -EFBIG;
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        while (off < (size_t) st.st_size) {
                ssize_t k = read(fd, buf + off, (size_t) st.st_size - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                off += (size_t) k;
        }
        *ret = TAKE_PTR(buf);
        *ret_len = off;
        return 0;
}

static int restore(Master *m, const Spark__MasterSnapshot *snap, usec_t now, size_t *ret_executors) {
        size_t restored = 0;

        cluster_restore_counters(m->cluster, (time_t) snap->start_time, snap->next_app_number);
        for (size_t i = 0; i < snap->n_workers; i++) {
                const Spark__WorkerInfo *wi = snap->workers[i];
                WorkerRegistration reg = { wi->worker_id, wi->host, wi->endpoint, wi->events_endpoint,
                                           wi->cores, wi->memory_mb };
                if (cluster_restore_worker(m->cluster, &reg, now) < 0)
                        log_warning("State: skipping invalid worker record '%s'", strempty(wi->worker_id));
        }
        for (size_t i = 0; i < snap->n_apps; i++) {
                const Spark__AppRecord *r = snap->apps[i];
                _cleanup_free_ char **env = calloc(r->n_env + 1, sizeof(char *));
                AppRegistration reg;
                App *a;
                int k;

                if (!env || !r->info)
                        return -ENOMEM;
                for (size_t e = 0; e < r->n_env; e++)
                        if (asprintf(&env[e], "%s=%s", r->env[e]->key, r->env[e]->value) < 0)
                                env[e] = NULL;
                reg = (AppRegistration) {
                        .app_id = r->info->app_id, .name = r->info->name, .driver_url = r->info->driver_url,
                        .driver_events = r->driver_events, .max_cores = r->info->max_cores,
                        .cores_per_executor = r->info->cores_per_executor,
                        .executor_memory_mb = r->info->executor_memory_mb,
                        .env = (const char *const *) env, .n_env = r->n_env,
                };
                k = cluster_restore_app(m->cluster, &reg, r->info->state, r->next_executor_id, r->executor_limit,
                                        r->retry_count, now, &a);
                for (size_t e = 0; e < r->n_env; e++)
                        free(env[e]);
                if (k < 0) {
                        log_warning("State: skipping invalid application record '%s'", strempty(r->info->app_id));
                        continue;
                }
                for (size_t e = 0; e < snap->n_executors; e++) {
                        const Spark__ExecutorInfo *x = snap->executors[e];
                        if (!streq(strempty(x->app_id), a->id))
                                continue;
                        if (cluster_restore_executor(m->cluster, a, x->executor_id, strempty(x->worker_id), x->cores,
                                                     x->memory_mb, x->state, now) < 0)
                                log_warning("State: skipping invalid executor record %s/%d", a->id, x->executor_id);
                        else
                                restored++;
                }
        }
        *ret_executors = restored;
        return 0;
}

int master_state_load(Master *m) {
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        Spark__MasterSnapshot *snap;
        size_t len = 0, n_executors = 0, n_apps = 0;
        int r;

        if (asprintf(&path, "%s/" STATE_FILE, m->config.master.state_dir) < 0)
                return log_oom();
        r = sd_event_add_time(m->event, &m->state_timer, CLOCK_MONOTONIC, 0, 1000, on_save_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the state timer: %m");
        (void) sd_event_source_set_enabled(m->state_timer, SD_EVENT_OFF);

        r = read_file(path, &buf, &len);
        if (r == -ENOENT) {
                log_info("No saved state in %s: starting afresh", m->config.master.state_dir);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);

        snap = spark__master_snapshot__unpack(NULL, len, buf);
        if (!snap || snap->version != STATE_VERSION) {
                /* Keep the file for a post-mortem; the workers' and drivers'
                 * re-registrations rebuild what they can. */
                _cleanup_free_ char *bad = NULL;
                if (asprintf(&bad, "%s.corrupt-%llu", path, (unsigned long long) time(NULL)) >= 0)
                        (void) rename(path, bad);
                log_error("%s is %s; moved aside, starting afresh", path,
                          snap ? "of an unknown version" : "corrupt");
                spark__master_snapshot__free_unpacked(snap, NULL);
                return 0;
        }
        r = restore(m, snap, now_mono_usec(), &n_executors);
        n_apps = snap->n_apps;
        spark__master_snapshot__free_unpacked(snap, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to restore the state: %m");
        log_notice("Restored %zu applications, %zu workers and %zu executors from %s", n_apps,
                   hashmap_size(cluster_workers(m->cluster)), n_executors, path);
        return 0;
}
