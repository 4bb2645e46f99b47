/* See rm-rf.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "rm-rf.h"

static int rm_children(int fd, unsigned depth);

static int rm_entry(int dir_fd, const char *name, unsigned depth) {
        _cleanup_close_ int fd = -1;
        int r;

        if (unlinkat(dir_fd, name, 0) >= 0)
                return 0;
        if (errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return -errno;
        /* a directory (Linux says EISDIR; POSIX allows EPERM) */
        if (depth >= RM_RF_DEPTH_MAX)
                return -ELOOP;
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        r = rm_children(TAKE_FD(fd), depth + 1);
        if (unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return r < 0 ? r : -errno;
        return r;
}

/* Takes fd. */
static int rm_children(int fd, unsigned depth) {
        DIR *d = fdopendir(fd);
        struct dirent *de;
        int r = 0;

        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((errno = 0, de = readdir(d))) {
                int k;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                k = rm_entry(dirfd(d), de->d_name, depth);
                if (k < 0 && r == 0)
                        r = k;
        }
        if (errno != 0 && r == 0)
                r = -errno;
        closedir(d);
        return r;
}

int rm_rf_at(int dir_fd, const char *name) {
        if (!name || !*name || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
                return -EINVAL;
        return rm_entry(dir_fd, name, 0);
}
