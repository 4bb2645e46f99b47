/* Reading a whole file into memory, and writing a whole buffer, the one way
 * every program does it. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

typedef enum ReadFileFlags {
        READ_FILE_NOFOLLOW = 1 << 0,   /* a symbolic link as the last component: -ELOOP */
        READ_FILE_REGULAR = 1 << 1,    /* anything but a regular file: -EBADF */
        READ_FILE_DASH_STDIN = 1 << 2, /* "-" is standard input */
} ReadFileFlags;

/* Reads the file at path to its end (a pipe or a file that grows while it
 * is read, too), NUL-terminated for text; *ret_size does not count the NUL.
 * More than max bytes is -EFBIG (0: no limit).  A directory is -EISDIR.
 * ret_size may be NULL. */
int read_full_file(const char *path, ReadFileFlags flags, size_t max, char **ret, size_t *ret_size);

/* Writes all n bytes of p to fd, again after a short write or EINTR;
 * a negative errno on failure (then an unknown part was written). */
int write_full(int fd, const void *p, size_t n);
/* The same at offset (pwrite(2)): the file position does not move.  A write
 * of nothing (a full device that says so) is -EIO, not a loop. */
int pwrite_full(int fd, const void *p, size_t n, off_t offset);
