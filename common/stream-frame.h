/* The framing of the task channel (docs/DESIGN.md §4): a plain stream
 * socket between an executor and its driver that carries the same
 * envelopes as the driver's request endpoint, one per frame:
 *
 *   [u32 BE: body length][u32 BE: tag][body: one envelope]
 *
 * The asking side picks the tag; the answer carries it back.  A reader
 * buffers what arrives and hands out whole frames; a writer buffers what a
 * non-blocking socket did not take yet.  Both work on a file descriptor
 * but keep no other state, so a test can drive them through a socketpair.
 * Over TLS (tls-session.h) the same frames go through a session on the
 * socket instead. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tls-session.h"

#define STREAM_FRAME_HEADER 8u

typedef struct StreamReader {
        uint8_t *buf;
        size_t start, end, allocated; /* unconsumed bytes: buf[start..end) */
        size_t max_body;              /* a longer frame is an error */
} StreamReader;

typedef struct StreamWriter {
        uint8_t *buf;
        size_t start, end, allocated; /* bytes not written yet: buf[start..end) */
} StreamWriter;

void stream_reader_init(StreamReader *r, size_t max_body);
void stream_reader_done(StreamReader *r);
/* Reads what the socket has (non-blocking).  Returns > 0 when bytes came,
 * -EAGAIN when there were none, 0 at the end of the stream, or another
 * negative errno. */
int stream_reader_fill(StreamReader *r, int fd);
/* The same through a TLS session: reads until the session holds nothing
 * more that has arrived (which the socket would not announce again). */
int stream_reader_fill_tls(StreamReader *r, TlsSession *t);
/* The next whole frame: returns 1 with its tag and body (valid until the
 * next fill), 0 when the rest has not come yet, -EMSGSIZE when its length
 * exceeds max_body (the stream cannot be trusted after that). */
int stream_reader_next(StreamReader *r, uint32_t *tag, const uint8_t **body, size_t *len);

void stream_writer_done(StreamWriter *w);
/* Queues one frame.  -EMSGSIZE for a body that a length word cannot say. */
int stream_writer_append(StreamWriter *w, uint32_t tag, const void *body, size_t len);
/* Writes what is queued (non-blocking): 1 when all of it went, 0 when the
 * socket took part of it (wait for it to be writable), < 0 on error. */
int stream_writer_flush(StreamWriter *w, int fd);
/* The same through a TLS session (0: it waits for the socket, which way
 * tls_session_wants_write() says). */
int stream_writer_flush_tls(StreamWriter *w, TlsSession *t);
static inline bool stream_writer_pending(const StreamWriter *w) {
        return w->end > w->start;
}
