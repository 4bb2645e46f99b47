/* A plain HTTP/1.0 GET for the bench programs: what a scraper such as
 * Prometheus does to a daemon's /metrics, timed from connect() to the last
 * byte of the response (the server closes the connection after it).  IPv4
 * literal addresses only: the bench runs everything on 127.0.0.1. */
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench-util.h"

/* GETs path from host:port; on success returns 0 with the response's size
 * (headers included) in *ret_bytes, its status in *ret_status and the time
 * it took in *ret_usec.  A negative errno otherwise; timeout_s bounds
 * every read and write. */
static inline int bench_http_get(const char *host, int port, const char *path, unsigned timeout_s,
                                 size_t *ret_bytes, unsigned *ret_status, uint64_t *ret_usec) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        struct timeval tv = { .tv_sec = timeout_s };
        char req[512], buf[65536];
        size_t total = 0;
        unsigned status = 0;
        uint64_t t0;
        ssize_t n;
        int fd, r = 0;

        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || port < 1 || port > 65535)
                return -EINVAL;
        n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s:%d\r\nAccept: text/plain\r\n\r\n", path, host, port);
        if (n < 0 || (size_t) n >= sizeof(req))
                return -EINVAL;
        t0 = bench_now_usec();
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
            connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || write(fd, req, (size_t) n) != n) {
                r = -errno;
                goto out;
        }
        for (;;) {
                n = read(fd, buf, sizeof(buf));
                if (n < 0) {
                        r = -errno;
                        goto out;
                }
                if (n == 0)
                        break;
                /* the status line is in the first read: "HTTP/1.x NNN ..." */
                if (total == 0 && n >= 12 && memcmp(buf, "HTTP/1.", 7) == 0)
                        status = (unsigned) (buf[9] - '0') * 100 + (unsigned) (buf[10] - '0') * 10 +
                                 (unsigned) (buf[11] - '0');
                total += (size_t) n;
        }
        if (status == 0)
                r = -EPROTO;
out:
        close(fd);
        if (r < 0)
                return r;
        *ret_bytes = total;
        *ret_status = status;
        *ret_usec = bench_now_usec() - t0;
        return 0;
}
