/* The transient unit an executor runs in: checking the spec (every id and
 * string that reaches a unit name, a path, a command line or the
 * environment), its working directory, and the StartTransientUnit property
 * array.  Property names and D-Bus signatures follow systemd's
 * src/shared/bus-unit-util.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-bus.h>

#include "executor-unit.h"

#define EXECUTOR_ENV_MAX 256             /* entries in the app's executor_env */
#define EXECUTOR_ENV_ENTRY_MAX 4096      /* bytes in one KEY=VALUE */
#define EXECUTOR_CORES_MAX 4096
#define EXECUTOR_MEMORY_MB_MAX (INT64_C(1) << 30) /* 1 PiB */
#define EXECUTOR_SYSLOG_IDENTIFIER "spark-executor"
#define EXECUTOR_STOP_TIMEOUT_USEC (10ULL * 1000000ULL) /* TERM, then KILL after this */

/* 0 if spec is fine, else -EINVAL with a message naming the bad field in
 * error (may be NULL). */
int executor_unit_spec_validate(const ExecutorUnitSpec *spec, bool system_bus, char *error,
                                size_t error_size);

/* The command line: BINARY --driver URL --app-id APP --executor-id N
 * --cores C --worker-id W, and --driver-channel-port P when the driver has
 * a task channel.  NULL-terminated; free with unit_strv_free(). */
int executor_unit_argv(const ExecutorUnitSpec *spec, char ***ret);

/* The app's env followed by SPARK_APP_ID, SPARK_EXECUTOR_ID,
 * SPARK_WORKER_ID, SPARK_DRIVER_URL, SPARK_EXECUTOR_CORES and
 * SPARK_EXECUTOR_MEMORY_MB (the app's env may set none of them, nor any
 * SPARK_TLS_* name: executor-env.h).  No key, secret or path to one: those
 * are credentials (LoadCredential=, see executor_unit_append_properties()).  SPARK_DRIVER_URL, SPARK_EXECUTOR_CORES and
 * SPARK_EXECUTOR_MEMORY_MB let a restarted worker learn an adopted
 * executor's driver and resources. */
int executor_unit_environment(const ExecutorUnitSpec *spec, char ***ret);

/* WORK_DIR/<app>/<exec>. */
int executor_unit_work_dir(const ExecutorUnitSpec *spec, char *buf, size_t size);

/* Creates WORK_DIR (0755) if needed and the app and executor directories
 * (0750), chown'd to spec->user on the system bus, without following a
 * symlink planted in the work dir; the path lands in buf. */
int executor_unit_make_work_dir(const ExecutorUnitSpec *spec, bool system_bus, char *buf,
                                size_t size);

/* Appends the a(sv) property array (the container itself included) for a
 * StartTransientUnit call, LoadCredential= with the executor's secret (and
 * CA) among them. */
int executor_unit_append_properties(sd_bus_message *m, const ExecutorUnitSpec *spec,
                                    bool system_bus, const char *work_dir);

/* One property of a transient unit: unit_property_open() opens its (sv)
 * struct, appends NAME and opens the variant of SIGNATURE for the value;
 * unit_property_close() closes both. */
int unit_property_open(sd_bus_message *m, const char *name, const char *signature);
int unit_property_close(sd_bus_message *m);
/* The same for a property whose value is an array of ELEMENT: the array is
 * opened too, and closed with the rest. */
int unit_property_open_array(sd_bus_message *m, const char *name, const char *element);
int unit_property_close_array(sd_bus_message *m);

char **unit_strv_free(char **l);
/* Formats l[*n] and NULL-terminates l after it; l must have room for both. */
int unit_strv_push_printf(char **l, size_t *n, const char *fmt, ...) _printf_(3, 4);
static inline void unit_strv_freep(char ***l) {
        unit_strv_free(*l);
}
