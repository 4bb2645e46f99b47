/* Shared by the executor's tests: temporary directories and the task
 * libraries of tests/helpers/tasks/, taken from the build directory when
 * `make test-helpers` built them, else compiled here with $CC (default cc). */
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fileio.h"
#include "macro.h"

extern char **environ;

/* $SPARK_BUILD, else the directory above this test binary's (build/tests/
 * → build/). */
static inline int test_build_dir(char *buf, size_t size) {
        const char *env = getenv("SPARK_BUILD");
        char exe[PATH_MAX];
        ssize_t n;

        if (!isempty(env)) {
                snprintf(buf, size, "%s", env);
                return 0;
        }
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n < 0)
                return -errno;
        exe[n] = '\0';
        snprintf(buf, size, "%s", dirname(dirname(exe)));
        return 0;
}

static inline int test_mkdtemp(char *buf, size_t size, const char *name) {
        snprintf(buf, size, "/tmp/%s-XXXXXX", name);
        return mkdtemp(buf) ? 0 : -errno;
}

/* Removes dir and the files (and empty subdirectories) in it. */
static inline void test_rm_rf(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno == EISDIR) {
                        char sub[PATH_MAX];

                        snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
                        test_rm_rf(sub);
                }
        }
        closedir(d);
        (void) rmdir(dir);
}

/* The shared object built from tests/helpers/tasks/NAME.c: the Makefile's
 * $BUILD/tests/helpers/tasks/NAME.so if it is there, else compiled into dir
 * as libNAME.so. */
static inline int test_task_library(const char *name, const char *dir, char *path, size_t size) {
        char build[PATH_MAX], src[PATH_MAX];
        const char *cc = getenv("CC");
        pid_t pid;
        int status, k;

        if (test_build_dir(build, sizeof(build)) >= 0) {
                k = snprintf(path, size, "%s/tests/helpers/tasks/%s.so", build, name);
                if (k > 0 && (size_t) k < size && access(path, R_OK) == 0)
                        return 0;
        }

        k = snprintf(src, sizeof(src), "tests/helpers/tasks/%s.c", name);
        if (k < 0 || (size_t) k >= sizeof(src))
                return -ENAMETOOLONG;
        k = snprintf(path, size, "%s/lib%s.so", dir, name);
        if (k < 0 || (size_t) k >= size)
                return -ENAMETOOLONG;
        if (isempty(cc))
                cc = "cc";
        {
                char *argv[] = { (char *) cc, (char *) "-std=gnu11", (char *) "-O1", (char *) "-shared",
                                 (char *) "-fPIC", (char *) "-Iinclude", (char *) "-o", path, src, NULL };

                k = posix_spawnp(&pid, cc, NULL, NULL, argv, environ);
        }
        if (k != 0)
                return -k;
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ENOEXEC;
}

/* Reads a whole (small) file into a malloc()ed buffer. */
static inline int test_read_file(const char *path, void **ret, size_t *ret_len) {
        char *b;
        int r = read_full_file(path, 0, 0, &b, ret_len);

        if (r >= 0)
                *ret = b;
        return r;
}
