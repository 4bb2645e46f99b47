/* sd_journal_sendv(), the one journal call spark-executor makes
 * (common/log.c), without libsystemd: see sd-event-subset.c for why.
 *
 * It speaks journald's native protocol (systemd's "Native Journal
 * Protocol" document): one datagram to /run/systemd/journal/socket
 * holding the fields, each "NAME=value\n", or, for a value with a newline
 * in it, "NAME\n", the value's length as 64-bit little-endian, the value
 * and "\n".  Fields come as "NAME=value" (log.c makes them); one without
 * "=" is refused with -EINVAL, as sd_journal_sendv() does.  log.c bounds
 * a message to a few KiB, far below what a datagram may hold, so there is
 * no fallback for bigger ones (libsystemd passes those in a memfd): one
 * fails with -EMSGSIZE. */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static int journal_fd = -1;

static void journal_open(void) {
        journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

static const struct sockaddr_un journal_address = {
        .sun_family = AF_UNIX,
        .sun_path = JOURNAL_SOCKET,
};

int sd_journal_sendv(const struct iovec *iov, int n) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        static const char newline = '\n', equals = '=';
        struct iovec *w;
        uint64_t *lengths;
        size_t k = 0;
        int r = 0;

        if (!iov || n <= 0)
                return -EINVAL;
        pthread_once(&once, journal_open);
        if (journal_fd < 0)
                return -ENOTCONN;
        w = calloc((size_t) n * 5, sizeof(*w));
        lengths = calloc((size_t) n, sizeof(*lengths));
        if (!w || !lengths) {
                free(w);
                free(lengths);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                const char *field = iov[i].iov_base;
                const char *eq = memchr(field, '=', iov[i].iov_len);
                size_t name_len, value_len;

                if (!eq || eq == field) {
                        r = -EINVAL;
                        goto done;
                }
                name_len = (size_t) (eq - field);
                value_len = iov[i].iov_len - name_len - 1;
                if (memchr(eq + 1, '\n', value_len)) {
                        /* NAME\n, then the value's length and the value */
                        lengths[i] = htole64((uint64_t) value_len);
                        w[k++] = (struct iovec) { (void *) field, name_len };
                        w[k++] = (struct iovec) { (void *) &newline, 1 };
                        w[k++] = (struct iovec) { &lengths[i], sizeof(lengths[i]) };
                        w[k++] = (struct iovec) { (void *) (eq + 1), value_len };
                } else {
                        w[k++] = (struct iovec) { (void *) field, name_len };
                        w[k++] = (struct iovec) { (void *) &equals, 1 };
                        w[k++] = (struct iovec) { (void *) (eq + 1), value_len };
                }
                w[k++] = (struct iovec) { (void *) &newline, 1 };
        }
        {
                struct msghdr mh = {
                        .msg_name = (void *) &journal_address,
                        .msg_namelen = sizeof(journal_address),
                        .msg_iov = w,
                        .msg_iovlen = k,
                };
                r = sendmsg(journal_fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
        }
done:
        free(w);
        free(lengths);
        return r;
}
