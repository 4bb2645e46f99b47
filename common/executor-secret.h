/* How an executor proves to its driver which executor it is, without any
 * key of a cluster member.
 *
 * The driver makes a per-application key (EXECUTOR_KEY_SIZE random bytes)
 * and hands it, over req/rep only, to the master (RegisterApplication),
 * which hands it to the worker that starts an executor (LaunchExecutor).
 * The executor's secret is
 *
 *     HMAC-SHA256(key, "spark-executor-secret v1" NUL app_id NUL decimal executor id)
 *
 * The worker writes it to a root-only file that systemd passes to the unit
 * as the credential EXECUTOR_SECRET_CREDENTIAL; the executor sends it in
 * RegisterExecutor and in every Poll, and the driver, which computes the
 * same value, compares in constant time.  A secret is good for one
 * executor id of one application only: it cannot register a worker, reach
 * another executor's tasks or act at the master, which never checks it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"

#define EXECUTOR_KEY_SIZE 32u
#define EXECUTOR_SECRET_SIZE SHA256_DIGEST_SIZE

/* The systemd credentials an executor unit gets (LoadCredential=), read
 * from $CREDENTIALS_DIRECTORY/NAME: its secret (EXECUTOR_SECRET_SIZE raw
 * bytes) and, on a TLS cluster, the cluster CA to verify its driver. */
#define EXECUTOR_SECRET_CREDENTIAL "spark-executor-secret"
#define EXECUTOR_CA_CREDENTIAL "spark-ca"

/* The version tag at the start of the HMAC's message. */
#define EXECUTOR_SECRET_LABEL "spark-executor-secret v1"

/* EXECUTOR_KEY_SIZE bytes from getrandom(); a negative errno if the kernel
 * has none to give. */
int executor_key_generate(uint8_t key[static EXECUTOR_KEY_SIZE]);

/* Whether a key received from the network has the one valid length. */
static inline bool executor_key_is_valid(size_t len) {
        return len == EXECUTOR_KEY_SIZE;
}

/* Whether two keys are the same, in time that does not depend on where
 * they differ: a driver that takes its application back proves it is the
 * same driver with its key. */
static inline bool executor_key_equal(const uint8_t a[static EXECUTOR_KEY_SIZE],
                                      const uint8_t b[static EXECUTOR_KEY_SIZE]) {
        uint8_t diff = 0;

        for (size_t i = 0; i < EXECUTOR_KEY_SIZE; i++)
                diff |= (uint8_t) (a[i] ^ b[i]);
        return diff == 0;
}

/* The secret of executor_id of app_id under key.  -EINVAL for a NULL or
 * empty app id or a negative executor id. */
int executor_secret_compute(const uint8_t key[static EXECUTOR_KEY_SIZE], const char *app_id, int executor_id,
                            uint8_t secret[static EXECUTOR_SECRET_SIZE]);

/* Compares a presented secret with the expected one in time that does not
 * depend on where they differ.  0 if equal; -EPERM if they differ, or the
 * presented one is missing or of the wrong length. */
int executor_secret_check(const uint8_t expected[static EXECUTOR_SECRET_SIZE], const uint8_t *given,
                          size_t given_len);

/* Reads exactly EXECUTOR_SECRET_SIZE bytes from the file at path:
 * -EBADMSG if it holds fewer or more, a negative errno if it cannot be
 * read. */
int executor_secret_read(const char *path, uint8_t secret[static EXECUTOR_SECRET_SIZE]);
