/* sparkctl kill-executor / kill-app: ask the master to stop one executor
 * (the application is given another) or to remove an application. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "call.h"

int run_kill_executor(const Daemon *master, const char *app_id, int32_t executor_id);
int run_kill_app(const Daemon *master, const char *app_id);
/* sparkctl drain / undrain (sparkctl(1)): the master answers at once; the
 * drain itself goes on, shown by status. */
int run_drain(const Daemon *master, const char *worker_id, int32_t timeout_ms, bool undrain);
