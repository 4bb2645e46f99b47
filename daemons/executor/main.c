/* spark-executor: runs the tasks of one application for its driver. */
#include "executor-args.h"
#include "exit-guard.h"
#include "executor.h"
#include "executor-usage.h"
#include "log.h"
#include "sandbox-holder.h"

int main(int argc, char **argv) {
        _cleanup_(executor_args_done) ExecutorArgs args = {};
        _cleanup_(executor_freep) Executor *e = NULL;
        char error[512];
        int r;

        log_setup("spark-executor", LOG_TARGET_AUTO);

        r = executor_args_parse(argc, argv, &args, error, sizeof(error));
        if (r == -ENOMEM)
                return log_oom(), EXIT_FAILURE;
        if (r < 0) {
                fprintf(stderr, "spark-executor: %s\nTry 'spark-executor --help'.\n", error);
                return EXIT_USAGE;
        }
        if (r == EXECUTOR_ARGS_HELP) {
                executor_args_help(stdout);
                return EXIT_SUCCESS;
        }
        if (r == EXECUTOR_ARGS_VERSION) {
                printf("spark-executor %s\n", SPARK_VERSION);
                return EXIT_SUCCESS;
        }

        /* before any thread or connection (sandbox-holder.h) */
        (void) sandbox_holder_start();
        r = executor_new(&args, &e);
        if (r < 0)
                return EXIT_FAILURE;
        r = executor_run(e);
        /* for its application's totals (executor-usage.h); the worker reads
         * it once the unit has ended */
        {
                int k = executor_write_usage(".");
                if (k < 0)
                        log_debug_errno(k, "Failed to write " EXECUTOR_USAGE_FILE " in the working directory: %m");
        }
        daemon_exit_guard_within(r, EXECUTOR_EXIT_GRACE_SEC);
        return r;
}
