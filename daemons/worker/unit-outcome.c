/* See unit-outcome.h. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "unit-outcome.h"

/* systemd's exit statuses for failures of its own before or at exec
 * (src/basic/exit-status.c). */
static const char *const systemd_exit_status_names[] = {
        [200] = "CHDIR",
        [201] = "NICE",
        [202] = "FDS",
        [203] = "EXEC",
        [204] = "MEMORY",
        [205] = "LIMITS",
        [206] = "OOM_ADJUST",
        [207] = "SIGNAL_MASK",
        [208] = "STDIN",
        [209] = "STDOUT",
        [210] = "CHROOT",
        [211] = "IOPRIO",
        [212] = "TIMERSLACK",
        [213] = "SECUREBITS",
        [214] = "SETSCHEDULER",
        [215] = "CPUAFFINITY",
        [216] = "GROUP",
        [217] = "USER",
        [218] = "CAPABILITIES",
        [219] = "CGROUP",
        [220] = "SETSID",
        [221] = "CONFIRM",
        [222] = "STDERR",
        [224] = "PAM",
        [225] = "NETWORK",
        [226] = "NAMESPACE",
        [227] = "NO_NEW_PRIVILEGES",
        [228] = "SECCOMP",
        [229] = "SELINUX_CONTEXT",
        [230] = "PERSONALITY",
        [231] = "APPARMOR",
        [232] = "ADDRESS_FAMILIES",
        [233] = "RUNTIME_DIRECTORY",
        [235] = "CHOWN",
        [236] = "SMACK_PROCESS_LABEL",
        [237] = "KEYRING",
        [238] = "STATE_DIRECTORY",
        [239] = "CACHE_DIRECTORY",
        [240] = "LOGS_DIRECTORY",
        [241] = "CONFIGURATION_DIRECTORY",
        [242] = "NUMA_POLICY",
        [243] = "CREDENTIALS",
        [245] = "BPF",
        [255] = "EXCEPTION",
};

const char *unit_exit_status_name(int status) {
        if (status < 200 || (size_t) status >= ELEMENTSOF(systemd_exit_status_names))
                return NULL;
        return systemd_exit_status_names[status];
}

const char *unit_signal_name(int sig, char *buf, size_t size) {
        const char *name = NULL;

        if (sig > 0 && sig < SIGRTMIN)
                name = sigabbrev_np(sig);
        if (name)
                snprintf(buf, size, "%s", name);
        else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
                snprintf(buf, size, "RTMIN+%d", sig - SIGRTMIN);
        else
                snprintf(buf, size, "%d", sig);
        return buf;
}

bool unit_status_is_terminal(const UnitStatus *s) {
        return streq(s->active_state, "inactive") || streq(s->active_state, "failed");
}

bool unit_status_is_live(const UnitStatus *s) {
        return streq(s->active_state, "activating") || streq(s->active_state, "active") ||
               streq(s->active_state, "reloading") || streq(s->active_state, "deactivating");
}

static void outcome_set(UnitOutcome *o, Spark__ExecutorState state, int exit_code, const char *fmt, ...)
        _printf_(4, 5);

static void outcome_set(UnitOutcome *o, Spark__ExecutorState state, int exit_code, const char *fmt, ...) {
        va_list ap;

        *o = (UnitOutcome) { .state = state, .exit_code = exit_code };
        va_start(ap, fmt);
        vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
        va_end(ap);
}

void unit_outcome_running(const UnitStatus *s, UnitOutcome *ret) {
        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, 0, "running");
        ret->pid = s->main_pid;
}

/* "exit-code 3", "exit-code 203/EXEC", "signal KILL", "signal SEGV (core
 * dumped)": how the main process ended, from ExecMainCode/Status.  Returns
 * false when systemd did not tell us (no main process ended). */
static bool describe_main_exit(const UnitStatus *s, bool memory_limit_hit, char *buf, size_t size,
                               int *ret_exit_code) {
        char sig[16];
        const char *name;

        switch (s->exec_main_code) {
        case UNIT_CLD_EXITED:
                name = unit_exit_status_name(s->exec_main_status);
                if (name)
                        snprintf(buf, size, "exit-code %d/%s", s->exec_main_status, name);
                else
                        snprintf(buf, size, "exit-code %d", s->exec_main_status);
                *ret_exit_code = s->exec_main_status;
                return true;
        case UNIT_CLD_KILLED:
        case UNIT_CLD_DUMPED:
                unit_signal_name(s->exec_main_status, sig, sizeof(sig));
                snprintf(buf, size, "signal %s%s", sig,
                         s->exec_main_code == UNIT_CLD_DUMPED ? " (core dumped)"
                         : memory_limit_hit && s->exec_main_status == SIGKILL ? " (memory limit)"
                                                                               : "");
                *ret_exit_code = 128 + s->exec_main_status;
                return true;
        default:
                *ret_exit_code = 0;
                return false;
        }
}

/* The main process was executed and ended on its own terms: by a signal,
 * or with a status that is not one of systemd's for failures before exec. */
static bool main_process_ran(const UnitStatus *s) {
        if (s->exec_main_code == UNIT_CLD_KILLED || s->exec_main_code == UNIT_CLD_DUMPED)
                return true;
        return s->exec_main_code == UNIT_CLD_EXITED && !unit_exit_status_name(s->exec_main_status);
}

/* Our stop request is what ended it, unless its main process had died of a
 * cause of its own first: a signal no stop sends (a stop sends TERM, and
 * KILL only once it timed out) — the OOM killer's KILL, a SEGV — or an OOM
 * kill systemd saw.  An executor that dies makes its driver ask for its
 * stop at once, often before systemd tells us how it died. */
static bool ended_by_our_stop(const UnitStatus *s) {
        if (streq(s->result, "oom-kill"))
                return false;
        if (s->exec_main_code != UNIT_CLD_KILLED && s->exec_main_code != UNIT_CLD_DUMPED)
                return true;
        return s->exec_main_status == SIGTERM || streq(s->result, "timeout");
}

void unit_outcome_terminal(const UnitStatus *s, const UnitEnd *end, UnitOutcome *ret) {
        static const UnitEnd no_end = {};
        char how[UNIT_OUTCOME_REASON_MAX / 2];
        bool have_how;
        int exit_code;

        if (!end)
                end = &no_end;
        have_how = describe_main_exit(s, end->memory_limit_hit, how, sizeof(how), &exit_code);

        if (end->stop_requested && ended_by_our_stop(s)) {
                if (isempty(end->stop_reason))
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED, exit_code,
                                    "stopped on request");
                else
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED, exit_code,
                                    "stopped on request: %.200s", end->stop_reason);
                return;
        }

        if (end->start_error) {
                outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, 0, "start failed: %.200s",
                            end->start_error);
                return;
        }

        /* With Type=exec a process that exits at once can end before
         * systemd has seen its exec succeed: the start job "failed", yet the
         * process ran, and how it ended is the outcome. */
        if (end->start_job_result && !main_process_ran(s)) {
                /* The unit's own account is the more precise one: a job
                 * "failed" because exec returned ENOENT is "exit-code
                 * 203/EXEC". */
                if (!isempty(s->result) && !streq(s->result, "success"))
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, exit_code,
                                    "start failed: %s", have_how ? how : s->result);
                else
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, exit_code,
                                    "start failed: %.200s", end->start_job_result);
                return;
        }

        if (streq(s->result, "oom-kill")) {
                outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, have_how ? exit_code : 128 + SIGKILL,
                            "oom-kill");
                return;
        }

        if (isempty(s->result) || streq(s->result, "success")) {
                if (s->exec_main_code == UNIT_CLD_KILLED || s->exec_main_code == UNIT_CLD_DUMPED)
                        /* systemd counts TERM, INT, HUP and PIPE as a clean
                         * end: someone stopped it, and it was not us. */
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED, exit_code, "%s", how);
                else if (have_how)
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_EXITED, exit_code, "%s", how);
                else
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_EXITED, 0, "exit-code 0");
                return;
        }

        if (streq(s->result, "exit-code") || streq(s->result, "signal") || streq(s->result, "core-dump")) {
                if (have_how)
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, exit_code, "%s", how);
                else
                        outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, 0, "%s", s->result);
                return;
        }

        /* timeout, watchdog, start-limit-hit, resources, protocol, …: the
         * Result names the cause better than the process's status, which is
         * then only how systemd put it down. */
        if (have_how)
                outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, exit_code, "%s (%s)", s->result, how);
        else
                outcome_set(ret, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, 0, "%s", s->result);
}
