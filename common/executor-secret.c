/* See executor-secret.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "executor-secret.h"
#include "macro.h"

int executor_key_generate(uint8_t key[static EXECUTOR_KEY_SIZE]) {
        size_t n = 0;

        while (n < EXECUTOR_KEY_SIZE) {
                ssize_t k = getrandom(key + n, EXECUTOR_KEY_SIZE - n, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                n += (size_t) k;
        }
        return 0;
}

int executor_secret_compute(const uint8_t key[static EXECUTOR_KEY_SIZE], const char *app_id, int executor_id,
                            uint8_t secret[static EXECUTOR_SECRET_SIZE]) {
        char id[16];

        if (isempty(app_id) || executor_id < 0)
                return -EINVAL;
        snprintf(id, sizeof(id), "%d", executor_id);
        /* Each piece ends in its NUL (the id is the last one and needs
         * none): "a" NUL "1" NUL "2" and "a" NUL "12" differ. */
        hmac_sha256_v(key, EXECUTOR_KEY_SIZE,
                      (const void *const[]) { EXECUTOR_SECRET_LABEL, app_id, id },
                      (const size_t[]) { strlen(EXECUTOR_SECRET_LABEL) + 1, strlen(app_id) + 1, strlen(id) }, 3,
                      secret);
        return 0;
}

int executor_secret_check(const uint8_t expected[static EXECUTOR_SECRET_SIZE], const uint8_t *given,
                          size_t given_len) {
        uint8_t diff = 0;

        /* The length is no secret: every valid secret has this one. */
        if (!given || given_len != EXECUTOR_SECRET_SIZE)
                return -EPERM;
        for (size_t i = 0; i < EXECUTOR_SECRET_SIZE; i++)
                diff |= (uint8_t) (expected[i] ^ given[i]);
        return diff == 0 ? 0 : -EPERM;
}

int executor_secret_read(const char *path, uint8_t secret[static EXECUTOR_SECRET_SIZE]) {
        _cleanup_close_ int fd = -1;
        uint8_t buf[EXECUTOR_SECRET_SIZE + 1];
        size_t n = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        while (n < sizeof(buf)) {
                ssize_t k = read(fd, buf + n, sizeof(buf) - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        if (n != EXECUTOR_SECRET_SIZE) {
                explicit_bzero(buf, sizeof(buf));
                return -EBADMSG;
        }
        memcpy(secret, buf, EXECUTOR_SECRET_SIZE);
        explicit_bzero(buf, sizeof(buf));
        return 0;
}
