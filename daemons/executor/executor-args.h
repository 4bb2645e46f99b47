/* spark-executor's command line.  The worker starts it as
 *     spark-executor --driver URL --app-id APP --executor-id N --cores C --worker-id W
 *                    [--driver-channel-port P]
 * and also puts SPARK_DRIVER_URL, SPARK_APP_ID, SPARK_EXECUTOR_ID,
 * SPARK_EXECUTOR_CORES and SPARK_WORKER_ID in its environment; an option
 * that is absent is taken from there. */
#pragma once

#include <stdio.h>

#include "macro.h"

#define EXECUTOR_CORES_MAX 1024
#define EXIT_USAGE 2

typedef struct ExecutorArgs {
        char *driver_url;
        char *app_id;
        int executor_id;   /* >= 1 */
        int cores;         /* 1 .. EXECUTOR_CORES_MAX */
        char *worker_id;   /* "" if not given */
        char *work_dir;    /* absolute; default: the current directory */
        int driver_channel_port; /* the driver's task channel, registered on; 0: none */
} ExecutorArgs;

typedef enum ExecutorArgsAction {
        EXECUTOR_ARGS_RUN,
        EXECUTOR_ARGS_HELP,
        EXECUTOR_ARGS_VERSION,
        _EXECUTOR_ARGS_ACTION_MAX,
        _EXECUTOR_ARGS_ACTION_INVALID = -EINVAL,
} ExecutorArgsAction;

/* Parses and validates argv (and the environment).  Returns the action, or
 * -EINVAL with a one-line reason in error (a usage error: exit
 * EXIT_USAGE), or -ENOMEM. */
int executor_args_parse(int argc, char **argv, ExecutorArgs *ret, char *error, size_t error_size);
void executor_args_done(ExecutorArgs *a);

void executor_args_help(FILE *f);
