/* Identifiers in Spark's forms and the systemd unit names derived from them.
 * Every id that reaches a unit name or a path is checked here first. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define APP_ID_MAX 64
#define WORKER_ID_MAX 256
#define UNIT_NAME_MAX 256

/* "app-20261129172233-0001": the master's start time and a counter. */
int app_id_format(char *buf, size_t size, time_t t, unsigned counter);
bool app_id_is_valid(const char *id);

/* "worker-20261129172233-HOST-PORT" (Spark's form). */
int worker_id_format(char *buf, size_t size, time_t t, const char *host, unsigned port);
bool worker_id_is_valid(const char *id);

/* "job-0001" */
int job_id_format(char *buf, size_t size, unsigned counter);

/* "spark-executor-<app-id>-<executor-id>.service" */
int executor_unit_name(char *buf, size_t size, const char *app_id, int executor_id);
/* Parses a unit name made by executor_unit_name(); app_buf gets the app id. */
int executor_unit_parse(const char *unit, char *app_buf, size_t app_size, int *ret_executor_id);

/* systemd's unit-name escaping (as systemd-escape): every byte outside
 * [A-Za-z0-9:_.] and a leading '.' become \xNN, '/' becomes '-'. */
int unit_name_escape(const char *s, char *buf, size_t size);
