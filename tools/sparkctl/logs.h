/* sparkctl logs APP [EXECUTOR]: the executors' output from every worker's
 * journal.  The master names the live workers (one per host: workers of one
 * host share its journal); each is asked for pages of ExecutorLogRequest,
 * and the pages are merged by time, so memory stays at one page per host. */
#pragma once

#include <stdio.h>

#include "args.h"
#include "call.h"

/* Returns the exit status: 0, or 1 when a worker could not be read (the
 * others' lines are shown). */
int run_logs(const Daemon *master, const Args *a, FILE *out);
