/* The SubmitJob that `sparkctl submit` sends, built from the command line
 * and the files it names.
 *
 * Command jobs are expanded here, not on the driver or the executor: each
 * task's complete command line (the template with {} and {#} substituted,
 * see template.h) travels as that task's input, kind TASK_COMMAND, and
 * `command` carries the template only so that the driver can show it.  The
 * driver runs inputs[i] as task i's command line as it is (TaskLaunch.command)
 * and substitutes nothing.  Quoting thus happens in one place, next to the
 * user who wrote the template, and a command job is always sent with
 * inputs, never with count.
 *
 * Function jobs carry the shared object's bytes in `library` and the symbol;
 * with --inputs one task per line (the line's bytes without the newline),
 * with --count `count` tasks whose input is the --arg bytes. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "codec.h"

typedef struct JobRequest {
        Spark__SubmitJob msg; /* points into the members below */
        ProtobufCBinaryData *inputs;
        char *input_data; /* the --inputs file; function inputs point into it */
        size_t input_size;
        char **commands; /* command jobs: one command line per task */
        size_t n_commands;
        char *library_path;
        void *library;
        size_t library_size;
        char library_hash[2 * 32 + 1]; /* its sha256 (hex), which names it to a driver that has it */
        char request_id[33];
} JobRequest;

/* Builds the request for a validated submit command line.  Returns 0, or a
 * negative errno with the reason in err (an unreadable file, a line that
 * cannot go into a command line, too many tasks, …). */
int job_request_build(const Args *a, JobRequest *ret, char *err, size_t err_size);
void job_request_done(JobRequest *j);

/* How many tasks the job has. */
int64_t job_request_tasks(const JobRequest *j);

/* Splits data into lines (without their '\n'; a last line without one
 * counts, an empty file has none).  *ret points into data. */
int split_lines(char *data, size_t size, ProtobufCBinaryData **ret, size_t *ret_n);
