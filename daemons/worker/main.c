/* spark-worker: runs executors as transient systemd units on this host. */
#include "daemon.h"
#include "log.h"
#include "worker.h"

static const DaemonOptions options = {
        .name = "spark-worker",
        .config_name = "worker",
        .summary = "The spark-deploy worker: starts executors as transient systemd units on this host.",
};

int main(int argc, char **argv) {
        _cleanup_(worker_freep) WorkerManager *w = NULL;
        _cleanup_free_ char *config_path = NULL;
        int r, status = 0;

        log_setup("spark-worker", LOG_TARGET_AUTO);
        r = daemon_parse_args(&options, argc, argv, &config_path, &status);
        if (r != 0)
                return r < 0 ? EXIT_FAILURE : status;

        r = worker_new(config_path, &w);
        if (r < 0)
                return r == -EINVAL ? EXIT_CONFIG : EXIT_FAILURE;
        r = worker_start(w);
        if (r < 0)
                return EXIT_FAILURE;
        /* a non-zero exit code comes from losing the bus: systemd restarts us */
        r = sd_event_loop(w->event);
        status = r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        daemon_exit_guard(status);
        return status;
}
