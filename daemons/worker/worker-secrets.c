/* The executors' secrets on disk.  systemd reads each one when its unit
 * starts (LoadCredential=, unit-properties.c) and gives the executor a copy
 * in $CREDENTIALS_DIRECTORY; our file is only the hand-over.
 *
 *     RUNTIME/secrets/<worker.listen>/<unit name>    0400, in 0700 directories
 *
 * (worker.listen with every byte but [A-Za-z0-9._-] as '_': no ':', which
 * LoadCredential='s text form would take for the end of the name.)
 *
 * RUNTIME is $RUNTIME_DIRECTORY (RuntimeDirectory= of spark-worker.service),
 * else /run/spark-worker on the system bus and $XDG_RUNTIME_DIR/spark-worker
 * on the user bus.  Each worker has a directory of its own (several may
 * share a user manager), named by its listen endpoint, which a restart
 * keeps.  A file goes when its executor's unit ends, and at start every
 * file whose unit is gone is removed. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "log.h"
#include "worker.h"

static int listen_leaf(const char *listen, char *buf, size_t size) {
        size_t n = strlen(listen);

        if (n == 0 || n >= size)
                return -ENAMETOOLONG;
        for (size_t i = 0; i <= n; i++)
                buf[i] = i == n ? 0 : isalnum((unsigned char) listen[i]) || strchr("._-", listen[i]) ? listen[i] : '_';
        if (buf[0] == '.')
                buf[0] = '_';
        return 0;
}

static int runtime_base(const WorkerManager *w, char *buf, size_t size) {
        const char *rt = getenv("RUNTIME_DIRECTORY");
        int n;

        if (!isempty(rt)) {
                /* several directories are separated by ':'; ours is the first */
                size_t l = strcspn(rt, ":");
                n = snprintf(buf, size, "%.*s", (int) l, rt);
        } else if (streq(w->config.worker.systemd_bus, "user")) {
                rt = getenv("XDG_RUNTIME_DIR");
                if (isempty(rt))
                        return -ENXIO;
                n = snprintf(buf, size, "%s/spark-worker", rt);
        } else
                n = snprintf(buf, size, "/run/spark-worker");
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* mkdir that insists on a directory of ours, mode 0700. */
static int mkdir_private(const char *path) {
        struct stat st;

        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (lstat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                return -ENOTDIR;
        if ((st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0)
                return -errno;
        return 0;
}

int worker_secrets_init(WorkerManager *w) {
        char base[PATH_MAX - 512], leaf[UNIT_NAME_MAX];
        int r;

        r = runtime_base(w, base, sizeof(base));
        if (r < 0)
                return r;
        r = listen_leaf(w->config.worker.listen, leaf, sizeof(leaf));
        if (r < 0)
                return r;
        r = mkdir_private(base);
        if (r < 0)
                return r;
        snprintf(w->secrets_dir, sizeof(w->secrets_dir), "%s/secrets", base);
        r = mkdir_private(w->secrets_dir);
        if (r < 0)
                return r;
        if ((size_t) snprintf(w->secrets_dir, sizeof(w->secrets_dir), "%s/secrets/%s", base, leaf) >=
            sizeof(w->secrets_dir))
                return -ENAMETOOLONG;
        return mkdir_private(w->secrets_dir);
}

static int secret_path(const WorkerManager *w, const char *app_id, int executor_id, char *buf, size_t size) {
        char unit[UNIT_NAME_MAX];
        int r, n;

        r = executor_unit_name(unit, sizeof(unit), app_id, executor_id);
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s/%s", w->secrets_dir, unit);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int worker_secret_write(WorkerManager *w, const char *app_id, int executor_id, const uint8_t *key, size_t key_len,
                        char *path, size_t size) {
        uint8_t secret[EXECUTOR_SECRET_SIZE];
        _cleanup_close_ int fd = -1;
        ssize_t k;
        int r;

        if (!executor_key_is_valid(key_len))
                return -EINVAL;
        if (isempty(w->secrets_dir))
                return -ENXIO;  /* worker_secrets_init() not called */
        r = secret_path(w, app_id, executor_id, path, size);
        if (r < 0)
                return r;
        r = executor_secret_compute(key, app_id, executor_id, secret);
        if (r < 0)
                return r;
        /* A leftover of an earlier launch under this name is replaced. */
        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        k = write(fd, secret, sizeof(secret));
        if (k != (ssize_t) sizeof(secret)) {
                r = k < 0 ? -errno : -EIO;
                (void) unlink(path);
        }
out:
        explicit_bzero(secret, sizeof(secret));
        return r;
}

void worker_secret_remove(WorkerManager *w, const char *app_id, int executor_id) {
        char path[PATH_MAX];

        if (isempty(w->secrets_dir) || secret_path(w, app_id, executor_id, path, sizeof(path)) < 0)
                return;
        if (unlink(path) < 0 && errno != ENOENT)
                log_warning_errno(errno, "Failed to remove the executor secret %s: %m", path);
}

void worker_secrets_clean(WorkerManager *w, const AdoptedUnit *units, size_t n) {
        _cleanup_close_ int dfd = -1;
        DIR *d;
        struct dirent *de;
        unsigned removed = 0;

        if (isempty(w->secrets_dir))
                return;
        dfd = open(w->secrets_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return;
        d = fdopendir(dfd);
        if (!d)
                return;
        dfd = -1;  /* the DIR owns it now */
        while ((de = readdir(d))) {
                bool alive = false;

                if (de->d_name[0] == '.')
                        continue;
                for (size_t i = 0; i < n && !alive; i++)
                        alive = streq(units[i].unit, de->d_name);
                if (alive)
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) >= 0)
                        removed++;
        }
        closedir(d);
        if (removed > 0)
                log_info("Removed %u executor secrets of units that are gone, in %s", removed, w->secrets_dir);
}
