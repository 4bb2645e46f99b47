/* See epoch-file.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc-util.h"
#include "epoch-file.h"
#include "fileio.h"
#include "macro.h"

#define EPOCH_FILE_MAGIC "spark-epoch "
#define EPOCH_FILE_MAX 64

int epoch_file_load(const char *path, uint64_t *ret) {
        _cleanup_free_ char *buf = NULL;
        const char *p;
        char *end;
        size_t size;
        uint64_t v;
        int r;

        r = read_full_file(path, READ_FILE_REGULAR | READ_FILE_NOFOLLOW, EPOCH_FILE_MAX, &buf, &size);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        if (strlen(buf) != size || strncmp(buf, EPOCH_FILE_MAGIC, strlen(EPOCH_FILE_MAGIC)) != 0)
                return -EBADMSG;
        p = buf + strlen(EPOCH_FILE_MAGIC);
        if (*p < '0' || *p > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoull(p, &end, 10);
        if (errno != 0 || !streq(end, "\n"))
                return -EBADMSG;
        *ret = v;
        return 0;
}

int epoch_file_save(const char *path, uint64_t epoch) {
        _cleanup_free_ char *tmp = NULL, *dir_copy = NULL;
        _cleanup_close_ int fd = -1, dfd = -1;
        char line[EPOCH_FILE_MAX];
        int n, r;

        n = snprintf(line, sizeof(line), EPOCH_FILE_MAGIC "%" PRIu64 "\n", epoch);
        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return -ENOMEM;
        dir_copy = strdup(path);
        if (!dir_copy)
                return -ENOMEM;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return negative_errno();
        if (write(fd, line, (size_t) n) != n || fsync(fd) < 0) {
                r = errno > 0 ? -errno : -EIO;
                (void) unlink(tmp);
                return r;
        }
        if (rename(tmp, path) < 0) {
                r = negative_errno();
                (void) unlink(tmp);
                return r;
        }
        /* the rename itself must reach the disk */
        dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                (void) fsync(dfd);
        return 0;
}
