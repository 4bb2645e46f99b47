/* sparkctl submit: send a job to the driver, then wait for it, writing each
 * task's outcome in task order as soon as it and every task before it are
 * done (like `parallel -k`).
 *
 * Waiting is polling: FetchResults from the first task not written yet,
 * sooner while results flow, backing off to POLL_MAX_MS while they do not.
 * The driver should answer FetchResults at once (with what it has, possibly
 * nothing); the reply's JobInfo says when the job has ended.
 *
 * SIGINT, SIGTERM and SIGHUP cancel the job (CancelJob) and exit 1; so does a
 * closed standard output (SIGPIPE/EPIPE).  They are blocked and taken with
 * sigtimedwait() while we wait, so no handler and no global flag are
 * needed. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "args.h"
#include "call.h"

/* Returns the exit status: 0 when every task succeeded.  With --detach:
 * prints the job id once the driver has the job, and returns 0. */
int run_submit(const Daemon *driver, const Args *a, bool progress, FILE *out);

/* sparkctl results ID: the outcomes of a job submitted before, in task order,
 * waiting for the ones not done yet, as submit does; a signal stops the
 * waiting but leaves the job alone.  Returns the exit status. */
int run_results(const Daemon *driver, const char *job_id, bool json, bool progress, FILE *out);
