/* epoch_file_save()/epoch_file_load(): a saved epoch reads back, a newer
 * one replaces it and leaves no temporary file; a missing file is -ENOENT;
 * a torn, foreign, oversized or non-regular file is -EBADMSG or an error,
 * never an epoch.  leader_epoch_accept(): what a worker or driver obeys. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-run.h"
#include "epoch-file.h"
#include "macro.h"

static char root[] = "/tmp/test-epoch-file.XXXXXX";
static char path[256];

static void setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(root));
        snprintf(path, sizeof(path), "%s/worker-7078.epoch", root);
}

static void teardown(void) {
        char cmd[sizeof(root) + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        (void) system(cmd);
        snprintf(root, sizeof(root), "/tmp/test-epoch-file.XXXXXX");
}

static void write_raw(const char *s) {
        FILE *f = fopen(path, "we");

        ck_assert_ptr_nonnull(f);
        fputs(s, f);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_round_trip) {
        char tmp[300];
        uint64_t e = 0;

        ck_assert_int_eq(epoch_file_load(path, &e), -ENOENT);
        ck_assert_int_eq(epoch_file_save(path, 41), 0);
        ck_assert_int_eq(epoch_file_load(path, &e), 0);
        ck_assert_uint_eq(e, 41);
        ck_assert_int_eq(epoch_file_save(path, UINT64_MAX), 0);
        ck_assert_int_eq(epoch_file_load(path, &e), 0);
        ck_assert(e == UINT64_MAX);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        ck_assert_int_eq(access(tmp, F_OK), -1);
}
END_TEST

START_TEST(test_garbage) {
        static const char *const bad[] = {
                "",                             /* torn: empty */
                "spark-epoch ",                 /* no number */
                "spark-epoch 12",               /* no newline: torn */
                "spark-epoch -3\n",
                "spark-epoch 12x\n",
                "spark-epoch 12\n13\n",
                "spark-epoch 99999999999999999999999\n", /* overflows */
                "epoch 12\n",
        };
        char big[200];
        uint64_t e = 5;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                write_raw(bad[i]);
                ck_assert_msg(epoch_file_load(path, &e) == -EBADMSG, "accepted \"%s\"", bad[i]);
        }
        memset(big, '1', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        memcpy(big, "spark-epoch ", 12);
        write_raw(big);
        ck_assert_int_eq(epoch_file_load(path, &e), -EBADMSG);
        ck_assert_uint_eq(e, 5);  /* untouched */

        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        ck_assert_int_lt(epoch_file_load(path, &e), 0);
        ck_assert_int_lt(epoch_file_save(path, 3), 0);  /* cannot rename over a directory */
        ck_assert_uint_eq(e, 5);
}
END_TEST

START_TEST(test_symlink) {
        char target[300];
        uint64_t e = 0;

        snprintf(target, sizeof(target), "%s/elsewhere", root);
        ck_assert_int_eq(epoch_file_save(target, 9), 0);
        ck_assert_int_eq(symlink(target, path), 0);
        ck_assert_int_eq(epoch_file_load(path, &e), -ELOOP);
        /* a save replaces the link itself, the file it named stays */
        ck_assert_int_eq(epoch_file_save(path, 10), 0);
        ck_assert_int_eq(epoch_file_load(path, &e), 0);
        ck_assert_uint_eq(e, 10);
        ck_assert_int_eq(epoch_file_load(target, &e), 0);
        ck_assert_uint_eq(e, 9);
}
END_TEST

START_TEST(test_accept) {
        uint64_t highest = 0;

        ck_assert(leader_epoch_accept(&highest, 0));
        ck_assert_uint_eq(highest, 0);
        ck_assert(leader_epoch_accept(&highest, 5));
        ck_assert_uint_eq(highest, 5);
        ck_assert(leader_epoch_accept(&highest, 5));   /* the same leader again */
        ck_assert(!leader_epoch_accept(&highest, 4));  /* a deposed one */
        ck_assert_uint_eq(highest, 5);
        ck_assert(leader_epoch_accept(&highest, 0));   /* not fenced */
        ck_assert_uint_eq(highest, 5);
        ck_assert(leader_epoch_accept(&highest, 9));
        ck_assert(!leader_epoch_accept(&highest, 5));
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_round_trip,
                test_garbage,
                test_symlink,
                test_accept,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown };

        return check_run_tests("epoch-file", &options, tests);
}
