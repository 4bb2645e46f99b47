/* sparkctl's command line: parsing (getopt) and the checks that make a
 * usage error (exit 2) out of anything that cannot work, before a daemon is
 * asked anything.  Parsing only collects; args_validate() decides, with no
 * I/O, so the rules are unit-tested. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum Command {
        COMMAND_STATUS,
        COMMAND_SUBMIT,
        COMMAND_JOBS,
        COMMAND_JOB,
        COMMAND_CANCEL,
        COMMAND_KILL_EXECUTOR,
        COMMAND_KILL_APP,
        COMMAND_RESULTS,
        COMMAND_LOGS,
        COMMAND_DRAIN,
        COMMAND_UNDRAIN,
        _COMMAND_MAX,
        _COMMAND_INVALID = -EINVAL,
} Command;

const char *command_to_string(Command c);
Command command_from_string(const char *s);

/* Strings point into argv. */
typedef struct Args {
        bool help;
        bool version;
        const char *master_url; /* --master; NULL: the default (urls.h) */
        const char *driver_url; /* --driver */
        const char *app;        /* --app ID|NAME: the driver the master knows for it */
        const char *tls_ca;     /* --tls-ca FILE: the cluster CA, for tls+tcp:// */
        const char *tls_cert;   /* --tls-cert FILE, with --tls-key FILE */
        const char *tls_key;
        bool json;
        bool all;               /* status --all: the history too */

        /* submit */
        const char *name;
        const char *command_template; /* --command */
        const char *function;         /* --function LIB.so:SYMBOL */
        const char *inputs_path;      /* --inputs FILE ("-": stdin) */
        const char *count_string;     /* --count */
        const char *arg;              /* --arg */
        bool detach;                  /* --detach: print the job id, do not wait */

        /* logs */
        bool follow;              /* --follow */
        const char *since_string; /* --since */
        int64_t since_usec;       /* filled by args_validate(): 0, or CLOCK_REALTIME µs */

        /* drain */
        const char *timeout_string;   /* --timeout S */

        char **positional; /* the command word first */
        size_t n_positional;

        /* filled by args_validate() */
        Command command;
        int32_t count;       /* --count */
        const char *job_id;  /* job, cancel, results */
        const char *app_id;  /* kill-executor, kill-app, logs */
        int32_t executor_id; /* kill-executor; logs: 0 for every executor */
        const char *worker_id; /* drain, undrain */
        int32_t timeout_ms;  /* drain --timeout; 0: none */
} Args;

/* Collects argv into *a.  Returns 0, or -EINVAL after getopt printed what
 * was wrong. */
int args_parse(int argc, char **argv, Args *a);

/* Checks *a for the command it names and fills the derived fields.  Returns
 * 0, or -EINVAL with the reason in err. */
int args_validate(Args *a, char *err, size_t err_size);

/* "LIB.so:SYMBOL" → a copy of "LIB.so" and a pointer to "SYMBOL" within
 * spec.  -EINVAL if either part is missing or SYMBOL is no C identifier. */
int function_spec_split(const char *spec, char **ret_path, const char **ret_symbol);

/* --since: "N" or "N" followed by s, m, h or d (that long before now_usec),
 * or "@SECONDS" (a UNIX time).  The CLOCK_REALTIME µs in *ret. */
int parse_since(const char *s, int64_t now_usec, int64_t *ret);

/* A decimal number in [min, max], the whole string. */
int parse_int32(const char *s, int32_t min, int32_t max, int32_t *ret);

/* Whether c talks to a driver (submit, jobs, job, cancel, results). */
bool command_is_driver(Command c);

void args_help(FILE *f);
void args_usage(FILE *f);
/* `sparkctl COMMAND --help`: the command's synopsis, what it does and its
 * options. */
void args_command_help(Command c, FILE *f);
