/* rm_rf_at(): a tree with files, empty and nested directories goes; a
 * symbolic link in it is removed and what it points to stays; a missing
 * name is no error; names with a slash or dots are refused; a tree deeper
 * than RM_RF_DEPTH_MAX stops with -ELOOP. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-run.h"
#include "macro.h"
#include "rm-rf.h"

static char root[] = "/tmp/test-rm-rf.XXXXXX";

static void setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void) {
        char cmd[sizeof(root) + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        (void) system(cmd);
        snprintf(root, sizeof(root), "/tmp/test-rm-rf.XXXXXX");
}

static void touch(const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "x", 1), 1);
        close(fd);
}

static bool exists(const char *path) {
        struct stat st;

        return lstat(path, &st) == 0;
}

START_TEST(test_tree) {
        _cleanup_close_ int fd = -1;
        char p[256];

        snprintf(p, sizeof(p), "%s/keep", root);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        snprintf(p, sizeof(p), "%s/keep/precious", root);
        touch(p);
        snprintf(p, sizeof(p), "%s/app", root);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        snprintf(p, sizeof(p), "%s/app/1", root);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        snprintf(p, sizeof(p), "%s/app/1/empty", root);
        ck_assert_int_eq(mkdir(p, 0), 0);  /* not even readable */
        snprintf(p, sizeof(p), "%s/app/1/out", root);
        touch(p);
        snprintf(p, sizeof(p), "%s/app/link", root);
        ck_assert_int_eq(symlink("../keep", p), 0);

        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(rm_rf_at(fd, "app"), 0);
        snprintf(p, sizeof(p), "%s/app", root);
        ck_assert(!exists(p));
        snprintf(p, sizeof(p), "%s/keep/precious", root);
        ck_assert_msg(exists(p), "followed a symbolic link");
        ck_assert_int_eq(rm_rf_at(fd, "app"), 0);
        ck_assert_int_eq(rm_rf_at(fd, "keep"), 0);
        snprintf(p, sizeof(p), "%s/keep", root);
        ck_assert(!exists(p));
}
END_TEST

START_TEST(test_bad_names) {
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, ""), -EINVAL);
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, "."), -EINVAL);
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, ".."), -EINVAL);
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, "a/b"), -EINVAL);
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, NULL), -EINVAL);
}
END_TEST

START_TEST(test_too_deep) {
        _cleanup_close_ int fd = -1;
        char p[4096];
        size_t n;

        n = (size_t) snprintf(p, sizeof(p), "%s/d", root);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        for (int i = 0; i < RM_RF_DEPTH_MAX + 2; i++) {
                n += (size_t) snprintf(p + n, sizeof(p) - n, "/d");
                ck_assert_int_eq(mkdir(p, 0700), 0);
        }
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_eq(rm_rf_at(fd, "d"), -ELOOP);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_tree,
                test_bad_names,
                test_too_deep,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown };

        return check_run_tests("rm-rf", &options, tests);
}
