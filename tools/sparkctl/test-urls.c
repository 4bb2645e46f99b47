/* Default URLs: flags over environment over /etc/spark files over built-in
 * defaults, and listen addresses made dialable. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-run.h"
#include "macro.h"
#include "urls.h"

static char conf_dir[] = "/tmp/test-sparkctl-urls.XXXXXX";

static void write_file(const char *name, const char *text) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", conf_dir, name);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

static void remove_file(const char *name) {
        char path[256];

        snprintf(path, sizeof(path), "%s/%s", conf_dir, name);
        (void) unlink(path);
}

static void setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(conf_dir));
        setenv("SPARK_CONF_DIR", conf_dir, 1);
        unsetenv(MASTER_URL_ENV);
        unsetenv(DRIVER_URL_ENV);
}

static void teardown(void) {
        remove_file("cluster.conf");
        remove_file("driver.conf");
        (void) rmdir(conf_dir);
}

#define ck_dial(listen, expected)                                       \
        do {                                                            \
                _cleanup_free_ char *_s = NULL;                         \
                ck_assert_int_eq(url_listen_to_dial((listen), &_s), 0); \
                ck_assert_str_eq(_s, (expected));                       \
        } while (0)

#define ck_resolve(kind, flag, expected)                                                        \
        do {                                                                                    \
                _cleanup_free_ char *_s = NULL;                                                 \
                char _err[256] = "";                                                            \
                ck_assert_int_eq(url_resolve((kind), (flag), &_s, _err, sizeof(_err)), 0);      \
                ck_assert_str_eq(_s, (expected));                                               \
        } while (0)

START_TEST(test_listen_to_dial) {
        ck_dial("tcp://0.0.0.0:7091", "tcp://127.0.0.1:7091");
        ck_dial("tcp://*:7091", "tcp://127.0.0.1:7091");
        ck_dial("tcp://:7091", "tcp://127.0.0.1:7091");
        ck_dial("tcp://[::]:7091", "tcp://[::1]:7091");
        ck_dial("tls+tcp://0.0.0.0:7091", "tls+tcp://127.0.0.1:7091");
        ck_dial("tcp://10.1.2.3:7091", "tcp://10.1.2.3:7091");
        ck_dial("tcp://node1:7091", "tcp://node1:7091");
        ck_dial("tcp://0.0.0.01:7091", "tcp://0.0.0.01:7091");
        ck_dial("ipc:///run/spark/driver.sock", "ipc:///run/spark/driver.sock");
}
END_TEST

START_TEST(test_defaults) {
        /* no files at all */
        ck_resolve(DAEMON_MASTER, NULL, MASTER_URL_DEFAULT);
        ck_resolve(DAEMON_DRIVER, NULL, DRIVER_URL_DEFAULT);
}
END_TEST

START_TEST(test_files) {
        /* a driver listening on every address (which needs insecure) is dialed on loopback */
        write_file("cluster.conf", "cluster: { master = \"tcp://master.lan:7177\"; insecure = true; };\n");
        write_file("driver.conf", "@include \"cluster.conf\"\ndriver: { listen = \"tcp://0.0.0.0:7191\"; };\n");
        ck_resolve(DAEMON_MASTER, NULL, "tcp://master.lan:7177");
        ck_resolve(DAEMON_DRIVER, NULL, "tcp://127.0.0.1:7191");

        /* the environment beats the files, a flag beats everything */
        setenv(MASTER_URL_ENV, "ipc:///tmp/m.sock", 1);
        setenv(DRIVER_URL_ENV, "tcp://d:1", 1);
        ck_resolve(DAEMON_MASTER, NULL, "ipc:///tmp/m.sock");
        ck_resolve(DAEMON_DRIVER, NULL, "tcp://d:1");
        ck_resolve(DAEMON_MASTER, "tcp://flag:2", "tcp://flag:2");
        ck_resolve(DAEMON_DRIVER, "tcp://flag:3", "tcp://flag:3");

        /* an empty variable counts as unset */
        setenv(MASTER_URL_ENV, "", 1);
        ck_resolve(DAEMON_MASTER, NULL, "tcp://master.lan:7177");
}
END_TEST

START_TEST(test_broken_file) {
        /* a file with errors is ignored (with a warning): the default holds */
        write_file("cluster.conf", "cluster: { master = 7; };\n");
        write_file("driver.conf", "driver: { listen = \"ipc:///tmp/d.sock\"; bogus = 1; };\n");
        ck_resolve(DAEMON_MASTER, NULL, MASTER_URL_DEFAULT);
        ck_resolve(DAEMON_DRIVER, NULL, DRIVER_URL_DEFAULT);
        /* a driver.conf without a driver section: the default listen address */
        write_file("driver.conf", "cluster: { master = \"tcp://m:1\"; };\n");
        ck_resolve(DAEMON_DRIVER, NULL, DRIVER_URL_DEFAULT);
}
END_TEST

START_TEST(test_invalid) {
        _cleanup_free_ char *s = NULL;
        char err[256] = "";

        ck_assert_int_eq(url_resolve(DAEMON_MASTER, "http://x:1", &s, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "--master"));
        ck_assert_int_eq(url_resolve(DAEMON_DRIVER, "tcp://x", &s, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "--driver"));
        setenv(DRIVER_URL_ENV, "tcp://a b:1", 1);
        ck_assert_int_eq(url_resolve(DAEMON_DRIVER, NULL, &s, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, DRIVER_URL_ENV));
        ck_assert_ptr_null(s);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_listen_to_dial,
                test_defaults,
                test_files,
                test_broken_file,
                test_invalid,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown };

        return check_run_tests("sparkctl-urls", &options, tests);
}
