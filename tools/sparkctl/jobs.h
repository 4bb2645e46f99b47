/* sparkctl jobs / job ID / cancel ID: the driver's jobs. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "call.h"
#include "output.h"

int jobs_print_table(const Spark__JobList *list, FILE *f);
void job_print(const Spark__JobInfo *info, FILE *f);

/* Each returns the exit status. */
int run_jobs(const Daemon *driver, bool json, FILE *out);
int run_job(const Daemon *driver, const char *job_id, bool json, FILE *out);
int run_cancel(const Daemon *driver, const char *job_id);
