/* The executor secret: its exact message (a fixed vector), that it binds
 * both ids, the driver's check (constant-time compare, lengths), and
 * reading it from a credential file. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check-run.h"
#include "executor-secret.h"
#include "macro.h"

#define APP "app-20261129172233-0001"

static void test_key(uint8_t key[static EXECUTOR_KEY_SIZE]) {
        for (unsigned i = 0; i < EXECUTOR_KEY_SIZE; i++)
                key[i] = (uint8_t) i;
}

START_TEST(test_vector) {
        uint8_t key[EXECUTOR_KEY_SIZE], s[EXECUTOR_SECRET_SIZE];
        char hex[SHA256_HEX_SIZE];

        test_key(key);
        ck_assert_int_eq(executor_secret_compute(key, APP, 3, s), 0);
        /* HMAC-SHA256(00 01 … 1f, "spark-executor-secret v1\0" APP "\0" "3"),
         * computed independently (Python's hmac module). */
        ck_assert_str_eq(sha256_to_hex(s, hex), "385ba0dd0e1421ceeab7adb330f981a1b780b6f8be5b2eb7961e0d7dddbdd229");
}
END_TEST

START_TEST(test_binds_ids_and_key) {
        uint8_t key[EXECUTOR_KEY_SIZE], a[EXECUTOR_SECRET_SIZE], b[EXECUTOR_SECRET_SIZE];

        test_key(key);
        ck_assert_int_eq(executor_secret_compute(key, APP, 3, a), 0);
        ck_assert_int_eq(executor_secret_compute(key, APP, 3, b), 0);
        ck_assert_int_eq(executor_secret_check(a, b, sizeof(b)), 0);

        ck_assert_int_eq(executor_secret_compute(key, APP, 4, b), 0);
        ck_assert_int_eq(executor_secret_check(a, b, sizeof(b)), -EPERM);
        ck_assert_int_eq(executor_secret_compute(key, APP, 33, b), 0);
        ck_assert_int_eq(executor_secret_check(a, b, sizeof(b)), -EPERM);
        ck_assert_int_eq(executor_secret_compute(key, "app-20261129172233-0002", 3, b), 0);
        ck_assert_int_eq(executor_secret_check(a, b, sizeof(b)), -EPERM);
        key[31] ^= 1;
        ck_assert_int_eq(executor_secret_compute(key, APP, 3, b), 0);
        ck_assert_int_eq(executor_secret_check(a, b, sizeof(b)), -EPERM);

        ck_assert_int_eq(executor_secret_compute(key, "", 3, b), -EINVAL);
        ck_assert_int_eq(executor_secret_compute(key, NULL, 3, b), -EINVAL);
        ck_assert_int_eq(executor_secret_compute(key, APP, -1, b), -EINVAL);
}
END_TEST

START_TEST(test_check_lengths) {
        uint8_t key[EXECUTOR_KEY_SIZE], s[EXECUTOR_SECRET_SIZE], longer[EXECUTOR_SECRET_SIZE + 1];

        test_key(key);
        ck_assert_int_eq(executor_secret_compute(key, APP, 1, s), 0);
        ck_assert_int_eq(executor_secret_check(s, NULL, 0), -EPERM);
        ck_assert_int_eq(executor_secret_check(s, s, 0), -EPERM);
        ck_assert_int_eq(executor_secret_check(s, s, EXECUTOR_SECRET_SIZE - 1), -EPERM);
        memcpy(longer, s, sizeof(s));
        longer[EXECUTOR_SECRET_SIZE] = 0;
        ck_assert_int_eq(executor_secret_check(s, longer, sizeof(longer)), -EPERM);
        /* one bit anywhere */
        for (unsigned i = 0; i < EXECUTOR_SECRET_SIZE; i++) {
                uint8_t t[EXECUTOR_SECRET_SIZE];
                memcpy(t, s, sizeof(t));
                t[i] ^= 0x80;
                ck_assert_int_eq(executor_secret_check(s, t, sizeof(t)), -EPERM);
        }
        ck_assert(executor_key_is_valid(32));
        ck_assert(!executor_key_is_valid(0));
        ck_assert(!executor_key_is_valid(31));
        ck_assert(!executor_key_is_valid(33));
}
END_TEST

START_TEST(test_key_generate) {
        uint8_t a[EXECUTOR_KEY_SIZE], b[EXECUTOR_KEY_SIZE];

        ck_assert_int_eq(executor_key_generate(a), 0);
        ck_assert_int_eq(executor_key_generate(b), 0);
        ck_assert(memcmp(a, b, sizeof(a)) != 0);
}
END_TEST

static void write_file(const char *path, const void *data, size_t len) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, len), (ssize_t) len);
        close(fd);
}

START_TEST(test_read) {
        char dir[] = "/tmp/test-executor-secret.XXXXXX", path[64];
        uint8_t key[EXECUTOR_KEY_SIZE], s[EXECUTOR_SECRET_SIZE], got[EXECUTOR_SECRET_SIZE], big[64] = {};

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/secret", dir);
        test_key(key);
        ck_assert_int_eq(executor_secret_compute(key, APP, 2, s), 0);

        write_file(path, s, sizeof(s));
        ck_assert_int_eq(executor_secret_read(path, got), 0);
        ck_assert_mem_eq(got, s, sizeof(s));

        write_file(path, s, sizeof(s) - 1);
        ck_assert_int_eq(executor_secret_read(path, got), -EBADMSG);
        write_file(path, big, sizeof(big));
        ck_assert_int_eq(executor_secret_read(path, got), -EBADMSG);
        write_file(path, "", 0);
        ck_assert_int_eq(executor_secret_read(path, got), -EBADMSG);
        unlink(path);
        ck_assert_int_eq(executor_secret_read(path, got), -ENOENT);
        rmdir(dir);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_vector,
                test_binds_ids_and_key,
                test_check_lengths,
                test_key_generate,
                test_read,
                NULL,
        };

        return check_run_tests("executor-secret", NULL, tests);
}
