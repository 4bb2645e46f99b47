/* Shared by the unit tests: the files a test writes for what it tests (a
 * configuration, a state file), failing the test if it cannot. */
#pragma once

#include <check.h>
#include <stdarg.h>
#include <stdio.h>

static inline void test_write_file(const char *path, const char *format, ...) __attribute__((format(printf, 2, 3)));
static inline void test_write_file(const char *path, const char *format, ...) {
        FILE *f = fopen(path, "we");
        va_list ap;

        ck_assert_msg(f, "cannot create %s", path);
        va_start(ap, format);
        vfprintf(f, format, ap);
        va_end(ap);
        ck_assert_int_eq(fclose(f), 0);
}
