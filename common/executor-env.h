/* The environment a worker gives every executor it starts (docs/DESIGN.md §5), and so
 * the names an application's executor_env may not set.  One list for the
 * three places that check an executor_env: the configuration (driver.
 * executor_env, --check-config), the master (an app's registration) and the
 * worker (the transient unit's Environment=), so that what one accepts the
 * others accept too. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "tls.h"

/* Set by the worker for every executor, after the app's executor_env. */
#define EXECUTOR_ENV_APP_ID "SPARK_APP_ID"
#define EXECUTOR_ENV_EXECUTOR_ID "SPARK_EXECUTOR_ID"
#define EXECUTOR_ENV_WORKER_ID "SPARK_WORKER_ID"
#define EXECUTOR_ENV_DRIVER_URL "SPARK_DRIVER_URL"
#define EXECUTOR_ENV_CORES "SPARK_EXECUTOR_CORES"
#define EXECUTOR_ENV_MEMORY_MB "SPARK_EXECUTOR_MEMORY_MB"

/* sparkctl's TLS variables (tls.h).  An executor gets no TLS file in its
 * environment (its CA is a credential), but an application still may not
 * set these: an executor that inherited a worker's key path from a job's
 * environment is exactly what must never be. */
#define EXECUTOR_ENV_TLS_PREFIX "SPARK_TLS_"
/* SPARK_RESOURCE_<NAME>: the addresses of a named resource the worker gave
 * the executor (resources.h). */
#define EXECUTOR_ENV_RESOURCE_PREFIX "SPARK_RESOURCE_"

/* Whether the first len bytes of name (an environment variable's name, not
 * necessarily NUL-terminated there: "NAME=value" with len up to '=') are a
 * name the worker sets.  Names are case-sensitive. */
bool executor_env_name_is_reserved(const char *name, size_t len);
