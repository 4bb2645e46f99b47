/* Shared by the driver's tests that run a whole Driver (driver_new()) in a
 * temporary directory. */
#pragma once

#include "test-files.h"

/* Writes path: the configuration of a driver of application app_name with
 * its sockets and its master's in dir, no HTTP server, and the driver
 * settings of extra besides. */
static inline void test_driver_conf(const char *path, const char *dir, const char *app_name, const char *extra) {
        test_write_file(path,
                        "cluster: { master = \"ipc://%1$s/master.sock\"; master_events = \"ipc://%1$s/master-events.sock\"; };\n"
                        "driver: { app_name = \"%2$s\"; listen = \"ipc://%1$s/driver.sock\"; http_listen = \"\";\n"
                        "          events_listen = \"ipc://%1$s/driver-events.sock\"; %3$s };\n",
                        dir, app_name, extra);
}
