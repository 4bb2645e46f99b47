/* See executor-env.h. */
#include <string.h>

#include "executor-env.h"
#include "macro.h"

static const char *const reserved_names[] = {
        EXECUTOR_ENV_APP_ID, EXECUTOR_ENV_EXECUTOR_ID, EXECUTOR_ENV_WORKER_ID,
        EXECUTOR_ENV_DRIVER_URL, EXECUTOR_ENV_CORES, EXECUTOR_ENV_MEMORY_MB,
};

bool executor_env_name_is_reserved(const char *name, size_t len) {
        if (!name)
                return false;
        if (len >= strlen(EXECUTOR_ENV_TLS_PREFIX) &&
            strncmp(name, EXECUTOR_ENV_TLS_PREFIX, strlen(EXECUTOR_ENV_TLS_PREFIX)) == 0)
                return true;
        if (len >= strlen(EXECUTOR_ENV_RESOURCE_PREFIX) &&
            strncmp(name, EXECUTOR_ENV_RESOURCE_PREFIX, strlen(EXECUTOR_ENV_RESOURCE_PREFIX)) == 0)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(reserved_names); i++)
                if (strlen(reserved_names[i]) == len && strncmp(name, reserved_names[i], len) == 0)
                        return true;
        return false;
}
