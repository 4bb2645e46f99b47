/* Housekeeping of executors' work dirs (spark-worker(8), "WORK DIRECTORIES").
 * An application's directory, work_dir/<app>, is removed once it has been
 * idle for worker.work_dir_retention_s: no executor of the application runs
 * here, and its modification time (set when an executor's directory is
 * made, and again by the worker when an executor ends) is that old.  The
 * time lives on disk, so a restarted worker keeps counting; a worker only
 * scans after it has listed its running units, so that it never takes a
 * running application's directory for an idle one.
 *
 * With executor_user "dynamic", systemd keeps the files under
 * /var/lib/private (work_dir/<app>/<N> is a link there): that tree goes too. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "log.h"
#include "rm-rf.h"
#include "unit-sandbox.h"
#include "worker.h"

#define SCAN_INTERVAL_MIN_USEC USEC_PER_SEC
#define SCAN_INTERVAL_MAX_USEC (3600 * USEC_PER_SEC)
#define SCAN_INTERVAL_OFF_USEC (60 * USEC_PER_SEC) /* retention 0: look again for a reload */

static bool app_has_live_executor(WorkerManager *w, const char *app_id) {
        size_t i = 0;
        void *v;

        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                const LocalExecutor *e = v;

                if (streq(e->app_id, app_id) && (e->state == SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING ||
                                                 e->state == SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING))
                        return true;
        }
        return false;
}

/* Where systemd keeps a dynamic user's StateDirectory= for work_dir, or
 * -EINVAL when work_dir is not below /var/lib/. */
static int private_work_dir(const char *work_dir, char *buf, size_t size) {
        size_t root = strlen(EXECUTOR_STATE_ROOT);
        int n;

        if (strncmp(work_dir, EXECUTOR_STATE_ROOT, root) != 0)
                return -EINVAL;
        n = snprintf(buf, size, "%sprivate/%s", EXECUTOR_STATE_ROOT, work_dir + root);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

static int remove_app_dirs(WorkerManager *w, int work_fd, const char *app_id) {
        char private[PATH_MAX];
        int r;

        r = rm_rf_at(work_fd, app_id);
        if (r < 0)
                return r;
        if (private_work_dir(w->config.worker.work_dir, private, sizeof(private)) >= 0) {
                _cleanup_close_ int fd = open(private, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (fd < 0 && errno != ENOENT)
                        return -errno;
                if (fd >= 0)
                        return rm_rf_at(fd, app_id);
        }
        return 0;
}

/* Removes what has been idle for the retention time; returns how many
 * applications' directories went. */
static unsigned scan(WorkerManager *w, int64_t retention_s) {
        _cleanup_close_ int fd = -1;
        struct timespec now;
        struct dirent *de;
        unsigned removed = 0;
        DIR *d;

        fd = open(w->config.worker.work_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                log_warning_errno(-errno, "Failed to read %s for expired work dirs, ignoring: %m",
                                  w->config.worker.work_dir);
                return 0;
        }
        fd = -1;  /* d owns it */
        (void) clock_gettime(CLOCK_REALTIME, &now);
        while ((de = readdir(d))) {
                struct stat st;
                int64_t idle;
                int r;

                if (!app_id_is_valid(de->d_name))
                        continue;  /* worker-*.id and anything of the operator's */
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                idle = (int64_t) now.tv_sec - (int64_t) st.st_mtim.tv_sec;
                if (idle < retention_s || app_has_live_executor(w, de->d_name))
                        continue;
                r = remove_app_dirs(w, dirfd(d), de->d_name);
                if (r < 0) {
                        log_struct_errno(LOG_WARNING, r, LOG_FIELDS(.app_id = de->d_name, .worker_id = w->id),
                                         "Failed to remove the work dirs of %s in %s, ignoring: %m", de->d_name,
                                         w->config.worker.work_dir);
                        continue;
                }
                removed++;
                log_struct(LOG_INFO,
                           LOG_FIELDS(.app_id = de->d_name, .worker_id = w->id,
                                      .message_id = SPARK_MESSAGE_WORK_DIR_REMOVED),
                           "Removed the work dirs of %s (%s/%s): idle for %" PRIi64 " s, longer than "
                           "work_dir_retention_s %" PRIi64,
                           de->d_name, w->config.worker.work_dir, de->d_name, idle, retention_s);
        }
        closedir(d);
        return removed;
}

static usec_t scan_interval(int64_t retention_s) {
        usec_t u;

        if (retention_s <= 0)
                return SCAN_INTERVAL_OFF_USEC;
        /* a quarter of the retention time late at most, within bounds */
        u = (usec_t) retention_s * USEC_PER_SEC / 4;
        return MIN(MAX(u, SCAN_INTERVAL_MIN_USEC), SCAN_INTERVAL_MAX_USEC);
}

static int on_scan_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        WorkerManager *w = userdata;
        int64_t retention_s = w->config.worker.work_dir_retention_s; /* reloadable */

        if (w->adopted && retention_s > 0)
                (void) scan(w, retention_s);
        (void) sd_event_source_set_time(s, usec + scan_interval(retention_s));
        return 0;
}

int worker_work_dirs_start(WorkerManager *w) {
        int r;

        r = sd_event_add_time_relative(w->event, &w->work_dir_timer, CLOCK_MONOTONIC,
                                       scan_interval(w->config.worker.work_dir_retention_s), 0, on_scan_timer, w);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(w->work_dir_timer, SD_EVENT_ON);
}

void worker_work_dir_touch(WorkerManager *w, const char *app_id) {
        _cleanup_free_ char *path = NULL;

        if (!app_id_is_valid(app_id) || asprintf(&path, "%s/%s", w->config.worker.work_dir, app_id) < 0)
                return;
        /* the idle time starts now; a directory that is not there is no error */
        if (utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT)
                log_debug_errno(-errno, "Failed to mark %s as used now, ignoring: %m", path);
}
