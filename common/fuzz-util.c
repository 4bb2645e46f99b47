/* Helpers of the libFuzzer targets; see fuzz-util.h. */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz-util.h"
#include "log.h"
#include "macro.h"

size_t fuzz_split(const uint8_t *data, size_t size, FuzzChunk *chunks, size_t max) {
        size_t n = 0;

        if (max == 0)
                return 0;
        while (n + 1 < max) {
                const uint8_t *sep = size >= FUZZ_SEPARATOR_LEN ? memmem(data, size, FUZZ_SEPARATOR, FUZZ_SEPARATOR_LEN)
                                                                : NULL;
                if (!sep)
                        break;
                chunks[n++] = (FuzzChunk) { data, (size_t) (sep - data) };
                size -= (size_t) (sep - data) + FUZZ_SEPARATOR_LEN;
                data = sep + FUZZ_SEPARATOR_LEN;
        }
        chunks[n++] = (FuzzChunk) { data, size };
        return n;
}

static char tmpdir[PATH_MAX];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag;
        if (ftw->level > 0)
                (void) remove(path);
        return 0;
}

void fuzz_rm_rf_below(const char *path) {
        (void) nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void fuzz_rm_rf(const char *path) {
        fuzz_rm_rf_below(path);
        (void) remove(path);
}

static void tmpdir_remove(void) {
        if (tmpdir[0]) {
                fuzz_rm_rf_below(tmpdir);
                (void) rmdir(tmpdir);
        }
}

const char *fuzz_tmpdir(void) {
        const char *base;

        if (tmpdir[0])
                return tmpdir;
        base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof(tmpdir), "%s/spark-fuzz.XXXXXX", isempty(base) ? "/tmp" : base);
        if (!mkdtemp(tmpdir))
                fuzz_fail("cannot create a temporary directory: %m");
        atexit(tmpdir_remove);
        return tmpdir;
}

const char *fuzz_tmp_path(const char *name) {
        static char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", fuzz_tmpdir(), name);
        return path;
}

int fuzz_write_file(const char *path, const void *data, size_t len) {
        _cleanup_close_ int fd = -1;
        const uint8_t *p = data;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        while (len > 0) {
                ssize_t k = write(fd, p, len);
                if (k < 0)
                        return -errno;
                p += k;
                len -= (size_t) k;
        }
        return 0;
}

void fuzz_quiet_logs(void) {
        const char *keep = getenv("SPARK_FUZZ_LOG");

        log_setup("spark-fuzz", LOG_TARGET_STDERR);
        if (!keep || !streq(keep, "1"))
                log_set_max_level(-1);
}

const char *fuzz_seed_dir(void) {
        const char *d = getenv("SPARK_FUZZ_WRITE_SEEDS");
        return isempty(d) ? NULL : d;
}

void fuzz_write_seeds_if_asked(void (*write_seeds)(const char *dir)) {
        const char *dir = fuzz_seed_dir();

        if (!dir)
                return;
        write_seeds(dir);
        exit(EXIT_SUCCESS);
}

void fuzz_write_seed_raw(const char *dir, const char *name, const void *data, size_t len) {
        char path[PATH_MAX];
        int r;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        r = fuzz_write_file(path, data, len);
        if (r < 0)
                fuzz_fail("cannot write %s: %s", path, strerror(-r));
}

void fuzz_write_seed(const char *dir, const char *name, Envelope *const *msgs, size_t n) {
        _cleanup_free_ uint8_t *all = NULL;
        size_t len = 0;

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ void *buf = NULL;
                size_t k;
                uint8_t *t;
                int r;

                r = envelope_encode(msgs[i], &buf, &k);
                if (r < 0)
                        fuzz_fail("cannot encode seed %s: %s", name, strerror(-r));
                t = realloc(all, len + FUZZ_SEPARATOR_LEN + k + 1);
                if (!t)
                        fuzz_fail("out of memory");
                all = t;
                if (i > 0) {
                        memcpy(all + len, FUZZ_SEPARATOR, FUZZ_SEPARATOR_LEN);
                        len += FUZZ_SEPARATOR_LEN;
                }
                memcpy(all + len, buf, k);
                len += k;
        }
        fuzz_write_seed_raw(dir, name, all, len);
}

_Noreturn void fuzz_fail(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fputs("FUZZ ORACLE FAILED: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        abort();
}
