/* spark-master: the cluster manager. */
#include "daemon.h"
#include "log.h"
#include "master.h"

static const DaemonOptions options = {
        .name = "spark-master",
        .config_name = "master",
        .summary = "The spark-deploy cluster manager: workers and applications register here.",
};

int main(int argc, char **argv) {
        _cleanup_(master_freep) Master *m = NULL;
        _cleanup_free_ char *config_path = NULL;
        int r, status = 0;

        log_setup("spark-master", LOG_TARGET_AUTO);
        r = daemon_parse_args(&options, argc, argv, &config_path, &status);
        if (r != 0)
                return r < 0 ? EXIT_FAILURE : status;

        r = master_new(config_path, &m);
        if (r < 0)
                return r == -EINVAL ? EXIT_CONFIG : EXIT_FAILURE;
        r = master_start(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = master_run(m);
        status = r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        daemon_exit_guard(status);
        return status;
}
