/* What an executor's unit did, in the terms the master understands: the pure
 * mapping from what systemd told us about a unit (its ActiveState, Result,
 * ExecMainCode/Status, the start job's result, a start call's error) to an
 * ExecutorState with a precise reason.  No I/O here, so every case is tested
 * without a bus (test-unit-outcome.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spark.pb-c.h"

#define UNIT_OUTCOME_REASON_MAX 256
#define UNIT_STATE_STRING_MAX 32

/* si_code values systemd reports in ExecMainCode (see waitid(2)). */
#define UNIT_CLD_EXITED 1
#define UNIT_CLD_KILLED 2
#define UNIT_CLD_DUMPED 3

typedef struct UnitOutcome {
        Spark__ExecutorState state;
        char reason[UNIT_OUTCOME_REASON_MAX];
        /* The exit status when the main process exited, 128 + the signal
         * number when a signal ended it (the shell's convention), else 0. */
        int exit_code;
        int64_t pid;                     /* RUNNING: the main process, else 0 */
} UnitOutcome;

/* What we know of a unit, accumulated from PropertiesChanged payloads and
 * GetAll replies.  Strings are "" until systemd tells us. */
typedef struct UnitStatus {
        char active_state[UNIT_STATE_STRING_MAX]; /* Unit.ActiveState */
        char sub_state[UNIT_STATE_STRING_MAX];    /* Unit.SubState */
        char load_state[UNIT_STATE_STRING_MAX];   /* Unit.LoadState */
        char result[UNIT_STATE_STRING_MAX];       /* Service.Result */
        int exec_main_code;                       /* Service.ExecMainCode, UNIT_CLD_* or 0 */
        int exec_main_status;                     /* Service.ExecMainStatus */
        uint32_t main_pid;                        /* Service.MainPID */
} UnitStatus;

/* How a unit ended, besides its status. */
typedef struct UnitEnd {
        bool stop_requested;             /* we asked systemd to stop it */
        const char *stop_reason;         /* why, if we were told; may be NULL */
        const char *start_error;         /* StartTransientUnit's error message, or NULL */
        const char *start_job_result;    /* the start job's result when not "done", or NULL */
        bool memory_limit_hit;           /* cgroup v1: the memory controller OOM-killed in it */
} UnitEnd;

/* ActiveState is "inactive" or "failed": the unit has ended. */
bool unit_status_is_terminal(const UnitStatus *s);
/* ActiveState is one a unit passes through while it has a process or a job:
 * activating, active, reloading, deactivating. */
bool unit_status_is_live(const UnitStatus *s);

/* EXECUTOR_RUNNING, reason "running", the main pid. */
void unit_outcome_running(const UnitStatus *s, UnitOutcome *ret);

/* The terminal outcome.  In order of precedence:
 *   stopped on request (unless the main process  → KILLED "stopped on request[: REASON]"
 *   died first of a signal no stop sends, or
 *   Result=oom-kill: then as below)
 *   StartTransientUnit failed                    → FAILED "start failed: MESSAGE"
 *   the start job did not finish "done" and the  → FAILED "start failed: DETAIL", DETAIL the
 *   main process never ran (no exit status, or     unit's own failure when it has one (e.g.
 *   one of systemd's own 200… statuses)            "exit-code 203/EXEC"), else the job result
 *                                                  (a process that ran but ended before systemd
 *                                                  saw its exec succeed is mapped as below)
 *   Result=oom-kill                              → FAILED "oom-kill"
 *   Result=success, exited 0                     → EXITED "exit-code 0"
 *   Result=success, a clean signal (TERM, …)     → KILLED "signal TERM" (stopped outside spark)
 *   Result=exit-code                             → FAILED "exit-code N" ("exit-code 203/EXEC"
 *                                                  for systemd's own statuses)
 *   Result=signal / core-dump                    → FAILED "signal KILL" / "signal SEGV (core dumped)",
 *                                                  "signal KILL (memory limit)" when
 *                                                  memory_limit_hit (cgroup v1 OOM)
 *   any other Result (timeout, watchdog, …)      → FAILED "<result>" */
void unit_outcome_terminal(const UnitStatus *s, const UnitEnd *end, UnitOutcome *ret);

/* "KILL" for SIGKILL, "RTMIN+3", or the number for anything unknown; buf
 * holds at least 16 bytes. */
const char *unit_signal_name(int sig, char *buf, size_t size);
/* systemd's name for its own exit statuses 200…255 ("EXEC"), else NULL. */
const char *unit_exit_status_name(int status);
