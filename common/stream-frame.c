/* The task channel's framing: stream-frame.h. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stream-frame.h"
#include "tls-session.h"

/* A read asks for at least this much room: one system call takes many
 * small frames. */
#define READ_CHUNK (64u * 1024u)

static uint32_t get_be32(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

static void put_be32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) (v >> 24);
        p[1] = (uint8_t) (v >> 16);
        p[2] = (uint8_t) (v >> 8);
        p[3] = (uint8_t) v;
}

/* Room for need more bytes after end, moving what is unconsumed to the
 * front first. */
static int buffer_reserve(uint8_t **buf, size_t *start, size_t *end, size_t *allocated, size_t need) {
        size_t used = *end - *start, want;
        uint8_t *n;

        if (*start > 0 && (used == 0 || *allocated - *end < need)) {
                memmove(*buf, *buf + *start, used);
                *start = 0;
                *end = used;
        }
        if (*allocated - *end >= need)
                return 0;
        if (need > SIZE_MAX / 2 - used)
                return -ENOMEM;
        want = used + need;
        want = want < *allocated * 2 ? *allocated * 2 : want;
        n = realloc(*buf, want);
        if (!n)
                return -ENOMEM;
        *buf = n;
        *allocated = want;
        return 0;
}

void stream_reader_init(StreamReader *r, size_t max_body) {
        *r = (StreamReader) { .max_body = max_body };
}

void stream_reader_done(StreamReader *r) {
        free(r->buf);
        *r = (StreamReader) { .max_body = r->max_body };
}

/* Room for the next read. */
static int reader_make_room(StreamReader *r) {
        size_t want = READ_CHUNK, have = r->end - r->start;

        /* the rest of a large frame in one read, when its length is known */
        if (have >= STREAM_FRAME_HEADER) {
                uint32_t body = get_be32(r->buf + r->start);

                if (body <= r->max_body && (size_t) body + STREAM_FRAME_HEADER > have + want)
                        want = (size_t) body + STREAM_FRAME_HEADER - have;
        }
        return buffer_reserve(&r->buf, &r->start, &r->end, &r->allocated, want);
}

int stream_reader_fill(StreamReader *r, int fd) {
        ssize_t n;
        int k;

        k = reader_make_room(r);
        if (k < 0)
                return k;
        n = recv(fd, r->buf + r->end, r->allocated - r->end, MSG_DONTWAIT);
        if (n < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        r->end += (size_t) n;
        return n > 0 ? 1 : 0;
}

int stream_reader_fill_tls(StreamReader *r, TlsSession *t) {
        bool got = false;

        do {
                ssize_t n;
                int k = reader_make_room(r);

                if (k < 0)
                        return k;
                n = tls_session_read(t, r->buf + r->end, r->allocated - r->end);
                if (n == -EAGAIN)
                        break;
                if (n <= 0)
                        return got ? 1 : (int) n; /* the end or the error comes again next time */
                r->end += (size_t) n;
                got = true;
        } while (tls_session_pending(t));
        return got ? 1 : -EAGAIN;
}

int stream_reader_next(StreamReader *r, uint32_t *tag, const uint8_t **body, size_t *len) {
        size_t have = r->end - r->start;
        uint32_t n;

        if (have < STREAM_FRAME_HEADER)
                return 0;
        n = get_be32(r->buf + r->start);
        if (n > r->max_body)
                return -EMSGSIZE;
        if (have - STREAM_FRAME_HEADER < n)
                return 0;
        *tag = get_be32(r->buf + r->start + 4);
        *body = r->buf + r->start + STREAM_FRAME_HEADER;
        *len = n;
        r->start += STREAM_FRAME_HEADER + n;
        return 1;
}

void stream_writer_done(StreamWriter *w) {
        free(w->buf);
        *w = (StreamWriter) {};
}

int stream_writer_append(StreamWriter *w, uint32_t tag, const void *body, size_t len) {
        int k;

        if (len > UINT32_MAX)
                return -EMSGSIZE;
        k = buffer_reserve(&w->buf, &w->start, &w->end, &w->allocated, STREAM_FRAME_HEADER + len);
        if (k < 0)
                return k;
        put_be32(w->buf + w->end, (uint32_t) len);
        put_be32(w->buf + w->end + 4, tag);
        if (len > 0)
                memcpy(w->buf + w->end + STREAM_FRAME_HEADER, body, len);
        w->end += STREAM_FRAME_HEADER + len;
        return 0;
}

int stream_writer_flush(StreamWriter *w, int fd) {
        while (w->end > w->start) {
                ssize_t n = send(fd, w->buf + w->start, w->end - w->start, MSG_DONTWAIT | MSG_NOSIGNAL);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EWOULDBLOCK ? 0 : -errno;
                }
                w->start += (size_t) n;
        }
        w->start = w->end = 0;
        return 1;
}

int stream_writer_flush_tls(StreamWriter *w, TlsSession *t) {
        while (w->end > w->start) {
                ssize_t n = tls_session_write(t, w->buf + w->start, w->end - w->start);

                if (n == -EAGAIN)
                        return 0;
                if (n < 0)
                        return (int) n;
                w->start += (size_t) n;
        }
        w->start = w->end = 0;
        return 1;
}
