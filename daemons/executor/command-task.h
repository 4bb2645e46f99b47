/* Command tasks: `/bin/sh -c COMMAND` (or, for a line of plain words, the
 * program itself: command-words.h) in its own process group, stdin from
 * /dev/null, stdout captured up to a limit, the last COMMAND_STDERR_TAIL
 * bytes of stderr kept. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "executor-task.h"

#define COMMAND_STDERR_TAIL 4096u
#define COMMAND_SHELL "/bin/sh"

/* Lets the caller reach the process while it runs (to kill it). */
typedef struct CommandHooks {
        /* The child runs; pid is also its process group id.  Return true to
         * have it killed at once (a kill that came before it started). */
        bool (*started)(pid_t pid, void *userdata);
        /* The child has exited and is about to be reaped: from now on its pid
         * may be reused, so nothing may signal it any more. */
        void (*exiting)(pid_t pid, void *userdata);
        void *userdata;
} CommandHooks;

typedef struct CommandResult {
        int exit_code;            /* exit status, or 128 + signal */
        int signal;               /* the signal that ended it, or 0 */
        bool output_overflow;     /* stdout passed max_output: it was killed */
        char *output;             /* malloc()ed, NUL-terminated for convenience */
        size_t output_len;
        char stderr_tail[COMMAND_STDERR_TAIL + 1];
        size_t stderr_len;
        bool stderr_truncated;    /* more was written than the tail holds */
} CommandResult;

/* Runs command to completion (until its stdout and stderr close and it
 * exits).  Returns 0 with *ret filled — whatever the command's own fate —
 * or a negative errno if it could not be started.  hooks may be NULL. */
int command_run(const char *command, size_t max_output, const CommandHooks *hooks, CommandResult *ret);
void command_result_done(CommandResult *r);

/* The TaskOutcome of a finished command: OK iff it exited 0; the error is
 * its stderr tail, or why it ended ("killed by signal KILL", "output of more
 * than N bytes exceeds max_result_bytes"). */
void command_result_to_outcome(CommandResult *r, size_t max_output, TaskOutcome *o);
