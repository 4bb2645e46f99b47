/* sd_journal_sendv(), the one journal call spark-executor makes
 * (common/log.c), without libsystemd: see sd-event-subset.c for why.
 *
 * It speaks journald's native protocol (systemd's "Native Journal
 * Protocol" document): one datagram to /run/systemd/journal/socket
 * holding the fields, each "NAME=value\n", or, for a value with a newline
 * in it, "NAME\n", the value's length as 64-bit little-endian, the value
 * and "\n".  A message too big for a datagram goes in a sealed memfd whose
 * descriptor the datagram carries instead, as libsystemd does.  Fields
 * come as "NAME=value" (log.c makes them); one without "=" is refused
 * with -EINVAL, as sd_journal_sendv() does. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static int send_fd(int fd) {
        union {
                struct cmsghdr cmsghdr;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = {
                .msg_name = (void *) &journal_address,
                .msg_namelen = sizeof(journal_address),
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&mh);

        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
        return sendmsg(journal_fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* The message in a sealed memfd, for one too big for a datagram. */
static int send_in_memfd(const struct iovec *w, size_t n) {
        int fd = memfd_create("journal-message", MFD_CLOEXEC | MFD_ALLOW_SEALING), r = 0;

        if (fd < 0)
                return -errno;
        for (size_t i = 0; i < n && r == 0; i++) {
                const char *p = w[i].iov_base;
                size_t left = w[i].iov_len;
                while (left > 0) {
                        ssize_t k = write(fd, p, left);
                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                r = -errno;
                                break;
                        }
                        p += k;
                        left -= (size_t) k;
                }
        }
        if (r == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
                r = -errno;
        if (r == 0)
                r = send_fd(fd);
        close(fd);
        return r;
}

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
                if (sendmsg(journal_fd, &mh, MSG_NOSIGNAL) >= 0)
                        r = 0;
                else if (errno == EMSGSIZE || errno == ENOBUFS)
                        r = send_in_memfd(w, k);
                else
                        r = -errno;
        }
done:
        free(w);
        free(lengths);
        return r;
}
