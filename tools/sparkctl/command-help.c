/* `sparkctl COMMAND --help`: one screen per command (args.h). */
#include "args.h"
#include "macro.h"

#define COMMON_MASTER                                                                           \
        "     --master URL        The master's request endpoint (default: $SPARK_MASTER_URL,\n" \
        "                         else cluster.master in cluster.conf)\n"
#define COMMON_DRIVER                                                                            \
        "     --driver URL        The driver's request endpoint (default: $SPARK_DRIVER_URL,\n"  \
        "                         else driver.listen in driver.conf)\n"                          \
        "     --app ID|NAME       Instead of --driver: the driver of this application, found\n" \
        "                         through the master (--master)\n"
#define COMMON_TLS                                                                            \
        "     --tls-ca FILE, --tls-cert FILE, --tls-key FILE\n"                             \
        "                         For tls+tcp:// URLs (see sparkctl --help)\n"

static const char *const command_help[_COMMAND_MAX] = {
        [COMMAND_STATUS] =
                "Usage: sparkctl [--master URL] status [--json]\n\n"
                "The master's view of the cluster: its workers (with their state, cores and\n"
                "memory in use), applications and executors (with their unit names).  Worker\n"
                "ids are shortened in the tables when that keeps them apart; --json has them\n"
                "in full.\n\nOptions:\n" COMMON_MASTER COMMON_TLS
                "     --json              One JSON object\n",
        [COMMAND_SUBMIT] =
                "Usage: sparkctl [--driver URL | --app ID|NAME] submit [--name N] [--json]\n"
                "                (--command 'CMD {}' | --function LIB.so:SYMBOL)\n"
                "                (--inputs FILE | --count N [--arg S]) [--detach]\n\n"
                "Runs a job on the driver's executors, waits for it and writes each task's\n"
                "output in task order; failed tasks are reported on standard error.  Ctrl-C\n"
                "cancels the job.  Exit status 0 when every task succeeded, 1 otherwise.\n\n"
                "Options:\n" COMMON_DRIVER COMMON_TLS
                "     --name N            The job's name\n"
                "     --command CMD       Each task runs CMD with /bin/sh -c; {} is its input,\n"
                "                         shell-quoted, {#} its index (from 0)\n"
                "     --function LIB.so:SYMBOL\n"
                "                         Each task calls SYMBOL (include/spark/task.h) in LIB.so,\n"
                "                         which is sent with the job\n"
                "     --inputs FILE       One task per line of FILE (- : standard input)\n"
                "     --count N           N tasks, each with the input --arg (default: empty)\n"
                "     --arg S             The input of every task with --count\n"
                "     --json              One JSON line per task\n"
                "     --detach            Print the job's id once the driver has it and exit;\n"
                "                         'sparkctl results ID' writes the outputs later\n",
        [COMMAND_JOBS] =
                "Usage: sparkctl [--driver URL | --app ID|NAME] jobs [--json]\n\n"
                "The driver's jobs: id, name, state, tasks done, failed and running.\n\n"
                "Options:\n" COMMON_DRIVER COMMON_TLS "     --json              One JSON object\n",
        [COMMAND_JOB] =
                "Usage: sparkctl [--driver URL | --app ID|NAME] job ID [--json]\n\n"
                "One job's state and counts.\n\n"
                "Options:\n" COMMON_DRIVER COMMON_TLS "     --json              One JSON object\n",
        [COMMAND_CANCEL] =
                "Usage: sparkctl [--driver URL | --app ID|NAME] cancel ID\n\n"
                "Cancels a job: its running tasks are killed, the rest never start.\n\n"
                "Options:\n" COMMON_DRIVER COMMON_TLS,
        [COMMAND_RESULTS] =
                "Usage: sparkctl [--driver URL | --app ID|NAME] results ID [--json]\n\n"
                "Writes a job's task outputs in task order, as submit does, waiting for\n"
                "the tasks that have not finished yet (for a job submitted with --detach).\n"
                "Ctrl-C stops waiting; the job goes on.  Exit status 0 when every task\n"
                "succeeded, 1 otherwise.\n\n"
                "Options:\n" COMMON_DRIVER COMMON_TLS "     --json              One JSON line per task\n",
        [COMMAND_LOGS] =
                "Usage: sparkctl [--master URL] logs APP [EXECUTOR] [--follow] [--since WHEN]\n\n"
                "The output of application APP's executors (or of executor EXECUTOR only),\n"
                "read by each live worker from its host's journal and shown in time order,\n"
                "one line each: time, host, executor id, message.  The master tells which\n"
                "workers there are; a worker that cannot be reached is reported and skipped.\n\n"
                "Options:\n" COMMON_MASTER COMMON_TLS
                "     --follow            Go on showing new lines, every second, until Ctrl-C\n"
                "     --since WHEN        Only lines since N[s|m|h|d] ago (10m, 2h), or since\n"
                "                         @SECONDS (a UNIX time)\n",
        [COMMAND_KILL_EXECUTOR] =
                "Usage: sparkctl [--master URL] kill-executor APP EXEC\n\n"
                "Stops executor EXEC of application APP; the master gives the application\n"
                "another one.  Needs the admin role or the application's driver (TLS).\n\n"
                "Options:\n" COMMON_MASTER COMMON_TLS,
        [COMMAND_KILL_APP] =
                "Usage: sparkctl [--master URL] kill-app APP\n\n"
                "Removes application APP as failed: every executor of it is stopped, and its\n"
                "driver exits with status 79, which the packaged units do not restart.\n"
                "Needs the admin role (TLS).\n\n"
                "Options:\n" COMMON_MASTER COMMON_TLS,
};

void args_command_help(Command c, FILE *f) {
        if (c < 0 || c >= _COMMAND_MAX || !command_help[c])
                return args_help(f);
        fputs(command_help[c], f);
}
