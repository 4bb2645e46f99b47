/* spark-driver: one application; runs the jobs clients submit. */
#include "daemon.h"
#include "driver.h"
#include "log.h"

static const DaemonOptions options = {
        .name = "spark-driver",
        .config_name = "driver",
        .summary = "The spark-deploy driver: runs one application's jobs on its executors.",
};

int main(int argc, char **argv) {
        _cleanup_(driver_freep) Driver *d = NULL;
        _cleanup_free_ char *config_path = NULL;
        int r, status = 0;

        log_setup("spark-driver", LOG_TARGET_AUTO);
        r = daemon_parse_args(&options, argc, argv, &config_path, &status);
        if (r != 0)
                return r < 0 ? EXIT_FAILURE : status;

        r = driver_new(config_path, &d);
        if (r < 0)
                return r == -EINVAL || r == -EBUSY ? EXIT_CONFIG : EXIT_FAILURE;
        r = driver_start(d);
        if (r < 0)
                return EXIT_FAILURE;
        r = sd_event_loop(d->event);
        driver_unregister(d);
        status = r < 0 ? EXIT_FAILURE : d->exit_status;
        daemon_exit_guard(status);
        return status;
}
