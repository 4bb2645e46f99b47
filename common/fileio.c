/* See fileio.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc-util.h"
#include "fileio.h"
#include "macro.h"

#define READ_CHUNK ((size_t) 64 * 1024)

int read_full_file(const char *path, ReadFileFlags flags, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int owned = -1;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;
        struct stat st;
        int fd;

        if (max == 0)
                max = SIZE_MAX - 1;

        if ((flags & READ_FILE_DASH_STDIN) && streq(path, "-"))
                fd = STDIN_FILENO;
        else {
                fd = owned = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
                                                (flags & READ_FILE_NOFOLLOW ? O_NOFOLLOW : 0));
                if (fd < 0)
                        return negative_errno();
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if ((flags & READ_FILE_REGULAR) && !S_ISREG(st.st_mode))
                return -EBADF;
        if (S_ISREG(st.st_mode) && (uint64_t) st.st_size > max)
                return -EFBIG;

        /* A regular file's size is a good first guess: one read, one byte
         * beyond it to see the end.  Else read in chunks. */
        if (GREEDY_REALLOC(buf, allocated, S_ISREG(st.st_mode) ? (size_t) st.st_size + 2 : READ_CHUNK) < 0)
                return -ENOMEM;
        for (;;) {
                ssize_t k;

                if (allocated - size < 2 && GREEDY_REALLOC(buf, allocated, size + READ_CHUNK) < 0)
                        return -ENOMEM;
                k = read(fd, buf + size, MIN(allocated - size - 1, max + 1 - size));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                size += (size_t) k;
                if (size > max)
                        return -EFBIG;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int pwrite_full(int fd, const void *p, size_t n, off_t offset) {
        const uint8_t *q = p;

        while (n > 0) {
                ssize_t k = pwrite(fd, q, n, offset);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                q += k;
                n -= (size_t) k;
                offset += k;
        }
        return 0;
}

int write_full(int fd, const void *p, size_t n) {
        const uint8_t *q = p;

        while (n > 0) {
                ssize_t k = write(fd, q, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                q += k;
                n -= (size_t) k;
        }
        return 0;
}
