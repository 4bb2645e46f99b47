/* What `sparkctl submit` writes for each task, in task order: its output
 * bytes as they are, or with --json one line
 *   {"task":I,"status":"ok"|"failed","attempts":K,"exit_code":E,
 *    "output":"…","errors":["…"]}
 * and the progress line on a terminal. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "spark.pb-c.h"
#include "time-util.h"

bool task_outcome_ok(const Spark__TaskOutcome *o);
void task_outcome_write(const Spark__TaskOutcome *o, bool json, FILE *out);
/* "sparkctl: task 3 failed (exit status 1, 4 attempts): why; why" */
void task_outcome_report_failure(const Spark__TaskOutcome *o, FILE *f);

/* A line on stderr, rewritten in place with \r, when it is a terminal. */
typedef struct Progress {
        FILE *f;
        bool enabled;
        bool shown;
        usec_t last_usec;
} Progress;

/* "job-0001: 350/1000 done, 2 failed, 1234 tasks/s, 4 executors, 12.3s" */
void progress_format(char *buf, size_t size, const Spark__JobInfo *info);
/* Redraws at most ten times a second unless force. */
void progress_show(Progress *p, const Spark__JobInfo *info, bool force);
/* Erases the line (before output goes to the same terminal, and at the end). */
void progress_clear(Progress *p);
