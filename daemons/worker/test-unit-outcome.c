/* The pure mapping from what systemd says about a unit to an executor state
 * and reason (unit-outcome.c). */
#include <check.h>
#include <signal.h>

#include "check-run.h"
#include "macro.h"
#include "unit-outcome.h"

#define EXITED SPARK__EXECUTOR_STATE__EXECUTOR_EXITED
#define FAILED SPARK__EXECUTOR_STATE__EXECUTOR_FAILED
#define KILLED SPARK__EXECUTOR_STATE__EXECUTOR_KILLED
#define RUNNING SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING

static UnitStatus status(const char *active, const char *result, int code, int st) {
        UnitStatus s = { .exec_main_code = code, .exec_main_status = st };

        snprintf(s.active_state, sizeof(s.active_state), "%s", active);
        snprintf(s.result, sizeof(s.result), "%s", result);
        return s;
}

static UnitOutcome terminal(UnitStatus s, const UnitEnd *end) {
        UnitOutcome o;

        unit_outcome_terminal(&s, end, &o);
        return o;
}

/* One unit's end and what it maps to; only what a case names is checked. */
typedef struct TerminalCase {
        struct {
                const char *active, *result;
                int code, status;
        } s;
        UnitEnd end;                    /* all zero: as no UnitEnd at all */
        Spark__ExecutorState state;     /* 0: not checked */
        const char *reason;             /* NULL: not checked */
        bool check_exit_code;
        int exit_code;
} TerminalCase;

#define EXIT_CODE(n) .check_exit_code = true, .exit_code = (n)

static void assert_terminal_cases(const TerminalCase *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const TerminalCase *t = &cases[i];
                UnitOutcome o = terminal(status(t->s.active, t->s.result, t->s.code, t->s.status), &t->end);

                if (t->state != 0)
                        ck_assert_msg(o.state == t->state, "case %zu (%s/%s): state %d, not %d", i, t->s.active,
                                      t->s.result, o.state, t->state);
                if (t->reason)
                        ck_assert_msg(streq(o.reason, t->reason), "case %zu (%s/%s): reason \"%s\", not \"%s\"", i,
                                      t->s.active, t->s.result, o.reason, t->reason);
                if (t->check_exit_code)
                        ck_assert_msg(o.exit_code == t->exit_code, "case %zu (%s/%s): exit code %d, not %d", i,
                                      t->s.active, t->s.result, o.exit_code, t->exit_code);
                /* the pid is the running process's only */
                ck_assert_int_eq(o.pid, 0);
        }
}

START_TEST(test_running) {
        UnitStatus s = status("active", "success", 0, 0);
        UnitOutcome o;

        s.main_pid = 4242;
        unit_outcome_running(&s, &o);
        ck_assert_int_eq(o.state, RUNNING);
        ck_assert_str_eq(o.reason, "running");
        ck_assert_int_eq(o.pid, 4242);
        ck_assert_int_eq(o.exit_code, 0);
}
END_TEST

START_TEST(test_exit_codes) {
        const TerminalCase cases[] = {
                { { "inactive", "success", UNIT_CLD_EXITED, 0 }, .state = EXITED, .reason = "exit-code 0",
                  EXIT_CODE(0) },
                { { "failed", "exit-code", UNIT_CLD_EXITED, 3 }, .state = FAILED, .reason = "exit-code 3",
                  EXIT_CODE(3) },
                /* systemd's own statuses are named */
                { { "failed", "exit-code", UNIT_CLD_EXITED, 200 }, .reason = "exit-code 200/CHDIR" },
                { { "failed", "exit-code", UNIT_CLD_EXITED, 217 }, .reason = "exit-code 217/USER" },
                { { "failed", "exit-code", UNIT_CLD_EXITED, 199 }, .reason = "exit-code 199" },
                /* Result=exit-code without the status (should not happen): the Result */
                { { "failed", "exit-code", 0, 0 }, .state = FAILED, .reason = "exit-code" },
                /* nothing known beyond "it is inactive" */
                { { "inactive", "", 0, 0 }, .state = EXITED, .reason = "exit-code 0" },
        };

        assert_terminal_cases(cases, ELEMENTSOF(cases));
}
END_TEST

START_TEST(test_signals) {
        const TerminalCase cases[] = {
                { { "failed", "signal", UNIT_CLD_KILLED, SIGKILL }, .state = FAILED, .reason = "signal KILL",
                  EXIT_CODE(128 + SIGKILL) },
                { { "failed", "core-dump", UNIT_CLD_DUMPED, SIGSEGV }, .state = FAILED,
                  .reason = "signal SEGV (core dumped)", EXIT_CODE(128 + SIGSEGV) },
                { { "failed", "signal", UNIT_CLD_KILLED, SIGRTMIN + 2 }, .reason = "signal RTMIN+2" },
                /* cgroup v1: the memory controller's kill looks like any SIGKILL */
                { { "failed", "signal", UNIT_CLD_KILLED, SIGKILL }, { .memory_limit_hit = true }, .state = FAILED,
                  .reason = "signal KILL (memory limit)" },
                /* A clean signal (TERM) is Result=success: stopped, not by us */
                { { "inactive", "success", UNIT_CLD_KILLED, SIGTERM }, .state = KILLED, .reason = "signal TERM",
                  EXIT_CODE(128 + SIGTERM) },
        };

        assert_terminal_cases(cases, ELEMENTSOF(cases));
}
END_TEST

START_TEST(test_oom_and_others) {
        const TerminalCase cases[] = {
                { { "failed", "oom-kill", UNIT_CLD_KILLED, SIGKILL }, .state = FAILED, .reason = "oom-kill",
                  EXIT_CODE(128 + SIGKILL) },
                { { "failed", "timeout", UNIT_CLD_KILLED, SIGKILL }, .state = FAILED,
                  .reason = "timeout (signal KILL)" },
                { { "failed", "start-limit-hit", 0, 0 }, .state = FAILED, .reason = "start-limit-hit" },
                { { "failed", "resources", 0, 0 }, .reason = "resources" },
        };

        assert_terminal_cases(cases, ELEMENTSOF(cases));
}
END_TEST

START_TEST(test_stop_requested) {
        const TerminalCase cases[] = {
                /* however the process ends on our stop, it is KILLED */
                { { "inactive", "success", UNIT_CLD_KILLED, SIGTERM }, { .stop_requested = true }, .state = KILLED,
                  .reason = "stopped on request" },
                { { "failed", "exit-code", UNIT_CLD_EXITED, 143 },
                  { .stop_requested = true, .stop_reason = "application removed" }, .state = KILLED,
                  .reason = "stopped on request: application removed", EXIT_CODE(143) },
                /* even one whose start we cancelled, or that systemd refused */
                { { "inactive", "", 0, 0 }, { .stop_requested = true, .start_job_result = "canceled" }, .state = KILLED,
                  .reason = "stopped on request" },
                { { "", "", 0, 0 }, { .stop_requested = true, .start_error = "nope" }, .state = KILLED },
                /* a stop that timed out ends in KILL: still ours */
                { { "failed", "timeout", UNIT_CLD_KILLED, SIGKILL }, { .stop_requested = true }, .state = KILLED,
                  .reason = "stopped on request" },
                /* but a process that died of its own before the stop took effect (the
                 * driver saw its socket close and asked for the stop) says how */
                { { "failed", "signal", UNIT_CLD_KILLED, SIGKILL },
                  { .stop_requested = true, .stop_reason = "socket disconnected" }, .state = FAILED,
                  .reason = "signal KILL", EXIT_CODE(128 + SIGKILL) },
                { { "failed", "core-dump", UNIT_CLD_DUMPED, SIGSEGV }, { .stop_requested = true }, .state = FAILED,
                  .reason = "signal SEGV (core dumped)" },
                { { "failed", "oom-kill", UNIT_CLD_KILLED, SIGKILL }, { .stop_requested = true }, .state = FAILED,
                  .reason = "oom-kill" },
        };

        assert_terminal_cases(cases, ELEMENTSOF(cases));
}
END_TEST

START_TEST(test_start_failures) {
        const TerminalCase cases[] = {
                { { "", "", 0, 0 }, { .start_error = "Unit spark-executor-x.service already exists." }, .state = FAILED,
                  .reason = "start failed: Unit spark-executor-x.service already exists." },
                /* Type=exec and a binary that is not there: the job fails, and the
                 * unit says why */
                { { "failed", "exit-code", UNIT_CLD_EXITED, 203 }, { .start_job_result = "failed" }, .state = FAILED,
                  .reason = "start failed: exit-code 203/EXEC", EXIT_CODE(203) },
                /* the job failed, but the process ran: it exited (or was killed)
                 * before systemd saw its exec succeed */
                { { "failed", "exit-code", UNIT_CLD_EXITED, 3 }, { .start_job_result = "failed" }, .state = FAILED,
                  .reason = "exit-code 3" },
                { { "failed", "signal", UNIT_CLD_KILLED, SIGKILL }, { .start_job_result = "failed" },
                  .reason = "signal KILL" },
                { { "inactive", "success", UNIT_CLD_EXITED, 0 }, { .start_job_result = "failed" }, .state = EXITED,
                  .reason = "exit-code 0" },
                /* the job result when the unit has nothing to add */
                { { "inactive", "success", 0, 0 }, { .start_job_result = "dependency" }, .state = FAILED,
                  .reason = "start failed: dependency" },
                { { "failed", "timeout", 0, 0 }, { .start_job_result = "timeout" }, .reason = "start failed: timeout" },
        };
        char longmsg[1000];
        UnitOutcome o;

        assert_terminal_cases(cases, ELEMENTSOF(cases));

        /* reasons stay bounded */
        memset(longmsg, 'x', sizeof(longmsg) - 1);
        longmsg[sizeof(longmsg) - 1] = 0;
        o = terminal(status("", "", 0, 0), &(UnitEnd) { .start_error = longmsg });
        ck_assert_uint_lt(strlen(o.reason), UNIT_OUTCOME_REASON_MAX);
}
END_TEST
START_TEST(test_names) {
        char buf[16];

        ck_assert_str_eq(unit_signal_name(SIGKILL, buf, sizeof(buf)), "KILL");
        ck_assert_str_eq(unit_signal_name(SIGTERM, buf, sizeof(buf)), "TERM");
        ck_assert_str_eq(unit_signal_name(0, buf, sizeof(buf)), "0");
        ck_assert_str_eq(unit_signal_name(999, buf, sizeof(buf)), "999");
        ck_assert_str_eq(unit_exit_status_name(203), "EXEC");
        ck_assert_ptr_null(unit_exit_status_name(1));
        ck_assert_ptr_null(unit_exit_status_name(223));
        ck_assert_ptr_null(unit_exit_status_name(256));
        ck_assert_ptr_null(unit_exit_status_name(-1));
        ck_assert_str_eq(unit_exit_status_name(255), "EXCEPTION");
}
END_TEST

START_TEST(test_states) {
        UnitStatus s = status("inactive", "", 0, 0);

        ck_assert(unit_status_is_terminal(&s));
        ck_assert(!unit_status_is_live(&s));
        s = status("failed", "", 0, 0);
        ck_assert(unit_status_is_terminal(&s));
        s = status("deactivating", "", 0, 0);
        ck_assert(!unit_status_is_terminal(&s));
        ck_assert(unit_status_is_live(&s));
        s = status("", "", 0, 0);
        ck_assert(!unit_status_is_terminal(&s));
        ck_assert(!unit_status_is_live(&s));
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_running,
                test_exit_codes,
                test_signals,
                test_oom_and_others,
                test_stop_requested,
                test_start_failures,
                test_names,
                test_states,
                NULL,
        };

        return check_run_tests("unit-outcome", NULL, tests);
}
