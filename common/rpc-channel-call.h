/* Blocking calls over a server's task channel (docs/DESIGN.md §4), for a
 * client that makes one call after another, as rpc_sync_session_call()
 * does: a plain TCP connection to the port an answer over nng named
 * (Envelope.channel_port), on the host of the server's tcp:// URL, each
 * request a frame (stream-frame.h) and its answer the frame that carries
 * its tag back.
 *
 * Why: nng 1.5 hands each message through its own threads on both sides;
 * on the channel the server's loop reads and answers the socket itself, and
 * the client blocks in poll() on it — a round trip of a few context
 * switches instead of a dozen.
 *
 * A call that fails leaves the link closed; the caller decides whether to
 * open it again or to go back to nng (the requests are idempotent, so
 * sending one again is safe). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "stream-frame.h"

typedef struct ChannelLink {
        int fd; /* -1: closed */
        uint32_t next_tag;
        StreamReader reader;
        StreamWriter writer;
} ChannelLink;

#define CHANNEL_LINK_INIT { .fd = -1 }

/* Starts a TCP connection to port on the host of url (tcp:// or
 * tls+tcp://, the server's endpoint), as the executors' channel and
 * channel_link_open() make it: *ret_fd is a non-blocking socket with
 * TCP_NODELAY (one small frame each way per call: no Nagle delay).
 * Returns 1 when it connected at once, 0 when the connection is under way
 * (the socket turns writable once it is done), < 0 when it cannot start. */
int channel_connect_start(const char *url, uint16_t port, int *ret_fd);

/* Connects to port on the host of url (tcp:// only: -EOPNOTSUPP for
 * others) before the deadline (nng_util_now_ms() time). */
int channel_link_open(ChannelLink *l, const char *url, uint16_t port, uint64_t deadline_ms);
/* Sends the encoded request (buf, len) and decodes its answer into *ret,
 * both before the deadline: -ETIMEDOUT otherwise; -EMSGSIZE for an answer
 * over max_reply bytes; -ECONNRESET when the server closed the link.
 * Any failure closes the link. */
int channel_link_call(ChannelLink *l, const void *buf, size_t len, size_t max_reply, uint64_t deadline_ms,
                      Envelope **ret);
void channel_link_close(ChannelLink *l);
static inline bool channel_link_is_open(const ChannelLink *l) {
        return l->fd >= 0;
}
