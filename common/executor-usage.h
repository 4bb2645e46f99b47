/* What an executor used, from its own getrusage() at its end: it writes
 * one line "spark-usage CPU_NS PEAK_BYTES" into its working directory
 * (EXECUTOR_USAGE_FILE), and its worker reads it once the unit has ended.
 * The unit's own counters vanish when systemd collects it and the worker
 * samples them only once a second, so without this the last second of an
 * executor's CPU time would be missing from its application's totals
 * (daemons/worker/worker-usage.c). */
#pragma once

#include <stdint.h>

#define EXECUTOR_USAGE_FILE ".spark-usage"
#define EXECUTOR_USAGE_MAGIC "spark-usage"
#define EXECUTOR_USAGE_MAX 128

/* The executor at its end: writes the file into dir (its working
 * directory), atomically. */
int executor_write_usage(const char *dir);

/* Parses the file's text; -EBADMSG: not one well-formed line. */
int executor_usage_parse(const char *text, uint64_t *ret_cpu_ns, uint64_t *ret_peak_bytes);
