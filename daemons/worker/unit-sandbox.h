/* The sandbox of an executor unit (spark-worker(8), "Executor sandbox"):
 * the worker's built-in hardening properties, worker.executor_properties
 * over them, and the dynamic user an executor runs as on the system bus. */
#pragma once

/* The system calls an executor may make.  A sanitizer build's LeakSanitizer
 * stops the world with ptrace() when a program exits: without ptrace in the
 * filter every executor of such a build dies of SIGSYS there and hangs in
 * its exit (the tests' build under ASan only: Makefile, SANITIZE=1). */
#ifdef SPARK_SANITIZE
#define EXECUTOR_SYSCALL_FILTER "@system-service ptrace"
#else
#define EXECUTOR_SYSCALL_FILTER "@system-service"
#endif

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-bus.h>

#include "exec-property.h"
#include "executor-unit.h"

/* worker.executor_user's value that makes each application's executors
 * run as a user systemd allocates for it (DynamicUser=yes). */
#define EXECUTOR_USER_DYNAMIC "dynamic"
/* Processes and threads one executor unit may have. */
#define EXECUTOR_TASKS_MAX 4096
/* The only directory below which a dynamic user's work dir may be: systemd
 * makes StateDirectory= there. */
#define EXECUTOR_STATE_ROOT "/var/lib/"

bool executor_unit_user_is_dynamic(const ExecutorUnitSpec *spec, bool system_bus);

/* "spark-<app id>" (at most 32 characters: a long app id is replaced by a
 * hash of it), the name of the app's dynamic user. */
int executor_unit_dynamic_user(const char *app_id, char *buf, size_t size);

/* The built-in sandbox as "Name=value" strings: hardening, TasksMax,
 * ReadWritePaths= of work_dir unless a dynamic user's StateDirectory=
 * provides it, InaccessiblePaths= of spec->hidden_paths.  NULL-terminated;
 * free with unit_strv_free(). */
int executor_unit_sandbox(const ExecutorUnitSpec *spec, bool system_bus, const char *work_dir, char ***ret);

/* Appends one parsed property as an (sv). */
int exec_property_append(sd_bus_message *m, const ExecProperty *p);

/* Appends the built-in sandbox with every property spec->properties names
 * replaced by those entries.  -EINVAL if an entry does not parse (the
 * configuration was checked when loaded, so this means a bug). */
int executor_unit_append_sandbox(sd_bus_message *m, const ExecutorUnitSpec *spec, bool system_bus,
                                 const char *work_dir);

/* User=, DynamicUser= and StateDirectory= on the system bus; nothing on
 * the user bus, where units run as the manager's user. */
int executor_unit_append_user(sd_bus_message *m, const ExecutorUnitSpec *spec, bool system_bus);
