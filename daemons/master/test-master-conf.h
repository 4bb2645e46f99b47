/* Shared by the master's tests that run a whole Master (master_new()) in a
 * temporary directory. */
#pragma once

#include "master.h"
#include "test-files.h"

/* A master named name: its configuration dir/NAME.conf, its sockets
 * dir/NAME.sock and dir/NAME-events.sock, its state in dir/NAME-state, and
 * the master settings of extra besides. */
static inline Master *test_master_new(const char *dir, const char *name, const char *extra) {
        char path[512];
        Master *m = NULL;

        snprintf(path, sizeof(path), "%s/%s.conf", dir, name);
        test_write_file(path,
                        "cluster: { master = \"ipc://%1$s/%2$s.sock\"; master_events = \"ipc://%1$s/%2$s-events.sock\"; };\n"
                        "master: { listen = \"ipc://%1$s/%2$s.sock\"; events_listen = \"ipc://%1$s/%2$s-events.sock\";\n"
                        "  state_dir = \"%1$s/%2$s-state\"; worker_timeout_ms = 600000;\n"
                        "  %3$s };\n",
                        dir, name, extra);
        ck_assert_int_eq(master_new(path, &m), 0);
        return m;
}
