/* Results beyond driver.result_memory_mb (driver-spill.h).  Each record is
 * a little-endian header, u32 length and i32 exit code, then the bytes,
 * padded to 8.  Appends gather in a write buffer; reads go through a small
 * read-ahead window, since a fetch reads the results of neighbouring tasks,
 * which mostly ended near each other in time and so lie near each other
 * in the file.  Nothing is synced: the journal (with driver.state_dir) is
 * the durable copy, and the spill is rebuilt from it on start. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "driver-spill.h"
#include "fileio.h"
#include "macro.h"

#define SPILL_WRITE_BUFFER (1024u * 1024u)
#define SPILL_READ_WINDOW (256u * 1024u)

struct ResultSpill {
        int fd;
        char *dir;
        uint64_t written;          /* bytes in the file */
        uint8_t *wbuf;             /* appended after them, not yet written */
        size_t wlen;
        uint8_t *rbuf;             /* the file's bytes [roff, roff + rlen) */
        uint64_t roff;
        size_t rlen;
        uint64_t live;             /* bytes of results not forgotten */
        uint64_t n_live;
};

static int spill_create_file(const char *dir) {
        char path[4096];
        int fd;

        fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
        if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
                return fd >= 0 ? fd : -errno;
        /* a file system without O_TMPFILE: a named file, unlinked at once */
        if (snprintf(path, sizeof(path), "%s/results.spill.XXXXXX", dir) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        (void) unlink(path);
        return fd;
}

int result_spill_open(const char *dir, ResultSpill **ret) {
        ResultSpill *s;
        int fd;

        if (!dir || dir[0] != '/')
                return -EINVAL;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = spill_create_file(dir);
        if (fd < 0)
                return fd;
        s = calloc(1, sizeof(*s));
        if (!s || !(s->dir = strdup(dir))) {
                free(s);
                close(fd);
                return -ENOMEM;
        }
        s->fd = fd;
        *ret = s;
        return 0;
}

ResultSpill *result_spill_free(ResultSpill *s) {
        if (!s)
                return NULL;
        if (s->fd >= 0)
                close(s->fd);
        free(s->wbuf);
        free(s->rbuf);
        free(s->dir);
        free(s);
        return NULL;
}

const char *result_spill_dir(const ResultSpill *s) {
        return s ? s->dir : "";
}

uint64_t result_spill_live_bytes(const ResultSpill *s) {
        return s ? s->live : 0;
}

uint64_t result_spill_file_bytes(const ResultSpill *s) {
        return s ? s->written + s->wlen : 0;
}

static int spill_write_out(ResultSpill *s) {
        int r = pwrite_full(s->fd, s->wbuf, s->wlen, (off_t) s->written);

        if (r < 0)
                return r;
        s->written += s->wlen;
        s->wlen = 0;
        return 0;
}

static void put_header(uint8_t *p, uint32_t len, int32_t exit_code) {
        uint32_t e = (uint32_t) exit_code;

        for (int i = 0; i < 4; i++) {
                p[i] = (uint8_t) (len >> (8 * i));
                p[4 + i] = (uint8_t) (e >> (8 * i));
        }
}

static size_t record_size(uint32_t len) {
        return (RESULT_SPILL_HEADER + (size_t) len + 7u) & ~(size_t) 7u;
}

int result_spill_append(ResultSpill *s, int32_t exit_code, const void *data, uint32_t len, uint64_t *ret_offset) {
        uint8_t header[RESULT_SPILL_HEADER], pad[8] = {};
        size_t size = record_size(len);
        uint64_t offset = s->written + s->wlen;
        int r;

        if (offset + size > RESULT_SPILL_OFFSET_MAX)
                return -EFBIG;
        put_header(header, len, exit_code);
        if (size > SPILL_WRITE_BUFFER) {
                /* a large result goes straight to the file */
                struct iovec iov[3] = {
                        { header, sizeof(header) }, { (void *) data, len }, { pad, size - sizeof(header) - len },
                };
                r = spill_write_out(s);
                if (r < 0)
                        return r;
                for (size_t i = 0, off = 0; i < ELEMENTSOF(iov); off += iov[i].iov_len, i++) {
                        r = pwrite_full(s->fd, iov[i].iov_base, iov[i].iov_len, (off_t) (s->written + off));
                        if (r < 0)
                                return r;
                }
                s->written += size;
        } else {
                if (s->wlen + size > SPILL_WRITE_BUFFER) {
                        r = spill_write_out(s);
                        if (r < 0)
                                return r;
                }
                if (!s->wbuf && !(s->wbuf = malloc(SPILL_WRITE_BUFFER)))
                        return -ENOMEM;
                memcpy(s->wbuf + s->wlen, header, sizeof(header));
                if (len)
                        memcpy(s->wbuf + s->wlen + sizeof(header), data, len);
                memset(s->wbuf + s->wlen + sizeof(header) + len, 0, size - sizeof(header) - len);
                s->wlen += size;
        }
        s->live += len;
        s->n_live++;
        *ret_offset = offset;
        return 0;
}

/* Copies the file's bytes [offset, offset + n) into buf. */
static int spill_pread(ResultSpill *s, uint64_t offset, void *buf, size_t n) {
        int r;

        if (offset + n > s->written + s->wlen)
                return -EBADMSG;
        if (offset + n > s->written) {
                /* still in the write buffer: out with it, then read as usual */
                r = spill_write_out(s);
                if (r < 0)
                        return r;
        }
        if (offset >= s->roff && offset + n <= s->roff + s->rlen) {
                memcpy(buf, s->rbuf + (offset - s->roff), n);
                return 0;
        }
        if (n > SPILL_READ_WINDOW / 2) {
                /* large: straight into buf */
                for (size_t done = 0; done < n;) {
                        ssize_t k = pread(s->fd, (uint8_t *) buf + done, n - done, (off_t) (offset + done));
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k <= 0)
                                return k < 0 ? -errno : -EIO;
                        done += (size_t) k;
                }
                return 0;
        }
        if (!s->rbuf && !(s->rbuf = malloc(SPILL_READ_WINDOW)))
                return -ENOMEM;
        s->rlen = 0;
        s->roff = offset;
        while (s->rlen < n) {
                ssize_t k = pread(s->fd, s->rbuf + s->rlen, SPILL_READ_WINDOW - s->rlen, (off_t) (offset + s->rlen));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        s->rlen = 0;
                        return k < 0 ? -errno : -EIO;
                }
                s->rlen += (size_t) k;
        }
        memcpy(buf, s->rbuf, n);
        return 0;
}

int result_spill_stat(ResultSpill *s, uint64_t offset, uint32_t *ret_len, int32_t *ret_exit_code) {
        uint8_t h[RESULT_SPILL_HEADER];
        uint32_t len = 0, e = 0;
        int r;

        if (offset % 8 != 0)
                return -EBADMSG;
        r = spill_pread(s, offset, h, sizeof(h));
        if (r < 0)
                return r;
        for (int i = 0; i < 4; i++) {
                len |= (uint32_t) h[i] << (8 * i);
                e |= (uint32_t) h[4 + i] << (8 * i);
        }
        if (offset + record_size(len) > s->written + s->wlen)
                return -EBADMSG;
        *ret_len = len;
        *ret_exit_code = (int32_t) e;
        return 0;
}

int result_spill_read(ResultSpill *s, uint64_t offset, void *buf, uint32_t len) {
        if (len == 0)
                return 0;
        return spill_pread(s, offset + RESULT_SPILL_HEADER, buf, len);
}

void result_spill_forget(ResultSpill *s, uint64_t n, uint64_t len) {
        if (!s || s->n_live == 0)
                return;
        s->live -= MIN(len, s->live);
        s->n_live -= MIN(n, s->n_live);
        if (s->n_live > 0)
                return;
        /* nothing live: the file starts again from nothing */
        s->live = 0;
        s->wlen = 0;
        s->rlen = 0;
        s->written = 0;
        (void) ftruncate(s->fd, 0);
}
