/* What every sparkctl command shares: exit statuses (sparkctl(1)) and timeouts. */
#pragma once

/* The exit statuses people and scripts rely on. */
enum {
        SPARKCTL_EXIT_OK = 0,          /* every task succeeded, or the command did what it was asked */
        SPARKCTL_EXIT_FAILED = 1,      /* the job failed or was cancelled, or a daemon said no */
        SPARKCTL_EXIT_USAGE = 2,       /* bad command line */
        SPARKCTL_EXIT_UNREACHABLE = 3, /* the master or the driver cannot be reached */
};

/* One request to a daemon that answers at once. */
#define SPARKCTL_TIMEOUT_MS 5000
