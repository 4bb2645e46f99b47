/* See rpc-channel-call.h. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nng/nng.h>

#include "macro.h"
#include "nng-util.h"
#include "rpc-channel-call.h"

/* Waits until fd is ready for events or the deadline passes. */
static int wait_for(int fd, short events, uint64_t deadline_ms) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                int remaining = nng_util_remaining_ms(deadline_ms), n;

                if (remaining <= 0)
                        return -ETIMEDOUT;
                n = poll(&p, 1, remaining);
                if (n > 0)
                        return 0;
                if (n < 0 && errno != EINTR)
                        return -errno;
        }
}

int channel_connect_start(const char *url, uint16_t port, int *ret_fd) {
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        char service[8];
        nng_url *u = NULL;
        int fd, k, one = 1;

        if (!url || port == 0 || !ret_fd)
                return -EINVAL;
        k = nng_errno(nng_url_parse(&u, url));
        if (k < 0)
                return k;
        snprintf(service, sizeof(service), "%u", (unsigned) port);
        k = getaddrinfo(u->u_hostname, service, &hints, &ai);
        nng_url_free(u);
        if (k != 0)
                return k == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                k = -errno;
                freeaddrinfo(ai);
                return k;
        }
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        k = connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 1;
        freeaddrinfo(ai);
        if (k == -EINPROGRESS)
                k = 0;
        if (k < 0) {
                close(fd);
                return k;
        }
        *ret_fd = fd;
        return k;
}

int channel_link_open(ChannelLink *l, const char *url, uint16_t port, uint64_t deadline_ms) {
        int fd, k, err = 0;
        socklen_t len = sizeof(err);

        if (!l || !url || port == 0)
                return -EINVAL;
        channel_link_close(l);
        if (strncmp(url, "tcp://", 6) != 0)
                return -EOPNOTSUPP;
        k = channel_connect_start(url, port, &fd);
        if (k == 0) {
                k = wait_for(fd, POLLOUT, deadline_ms);
                if (k >= 0)
                        k = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 ? -errno : -err;
                if (k < 0)
                        close(fd);
        }
        if (k < 0)
                return k;
        l->fd = fd;
        stream_reader_init(&l->reader, 0);
        l->writer = (StreamWriter) {};
        return 0;
}

void channel_link_close(ChannelLink *l) {
        if (!l || l->fd < 0)
                return;
        close(l->fd);
        l->fd = -1;
        stream_reader_done(&l->reader);
        stream_writer_done(&l->writer);
}

static int link_send(ChannelLink *l, uint32_t tag, const void *buf, size_t len, uint64_t deadline_ms) {
        int k = stream_writer_append(&l->writer, tag, buf, len);

        while (k >= 0) {
                k = stream_writer_flush(&l->writer, l->fd);
                if (k != 0)
                        break;
                k = wait_for(l->fd, POLLOUT, deadline_ms);
        }
        return k < 0 ? k : 0;
}

/* The answer tagged tag; an answer to an earlier call that timed out
 * cannot come, since that closed the link. */
static int link_receive(ChannelLink *l, uint32_t tag, size_t max_reply, uint64_t deadline_ms, Envelope **ret) {
        l->reader.max_body = max_reply;
        for (;;) {
                const uint8_t *body;
                uint32_t got;
                size_t len;
                int k = stream_reader_next(&l->reader, &got, &body, &len);

                if (k < 0)
                        return k;
                if (k > 0) {
                        if (got != tag)
                                return -EPROTO;
                        return envelope_decode(body, len, max_reply, ret);
                }
                k = stream_reader_fill(&l->reader, l->fd);
                if (k == 0)
                        return -ECONNRESET;
                if (k == -EAGAIN)
                        k = wait_for(l->fd, POLLIN, deadline_ms);
                if (k < 0)
                        return k;
        }
}

int channel_link_call(ChannelLink *l, const void *buf, size_t len, size_t max_reply, uint64_t deadline_ms,
                      Envelope **ret) {
        uint32_t tag;
        int k;

        if (!l || l->fd < 0 || !buf || !ret)
                return -EINVAL;
        tag = l->next_tag++;
        k = link_send(l, tag, buf, len, deadline_ms);
        if (k >= 0)
                k = link_receive(l, tag, max_reply, deadline_ms, ret);
        if (k < 0)
                channel_link_close(l);
        return k;
}
