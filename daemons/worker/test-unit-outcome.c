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
        UnitOutcome o;

        o = terminal(status("inactive", "success", UNIT_CLD_EXITED, 0), NULL);
        ck_assert_int_eq(o.state, EXITED);
        ck_assert_str_eq(o.reason, "exit-code 0");
        ck_assert_int_eq(o.exit_code, 0);
        ck_assert_int_eq(o.pid, 0);

        o = terminal(status("failed", "exit-code", UNIT_CLD_EXITED, 3), NULL);
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "exit-code 3");
        ck_assert_int_eq(o.exit_code, 3);

        /* systemd's own statuses are named */
        o = terminal(status("failed", "exit-code", UNIT_CLD_EXITED, 200), NULL);
        ck_assert_str_eq(o.reason, "exit-code 200/CHDIR");
        o = terminal(status("failed", "exit-code", UNIT_CLD_EXITED, 217), NULL);
        ck_assert_str_eq(o.reason, "exit-code 217/USER");
        o = terminal(status("failed", "exit-code", UNIT_CLD_EXITED, 199), NULL);
        ck_assert_str_eq(o.reason, "exit-code 199");

        /* Result=exit-code without the status (should not happen): the Result */
        o = terminal(status("failed", "exit-code", 0, 0), NULL);
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "exit-code");

        /* nothing known beyond "it is inactive" */
        o = terminal(status("inactive", "", 0, 0), NULL);
        ck_assert_int_eq(o.state, EXITED);
        ck_assert_str_eq(o.reason, "exit-code 0");
}
END_TEST

START_TEST(test_signals) {
        UnitOutcome o;

        o = terminal(status("failed", "signal", UNIT_CLD_KILLED, SIGKILL), NULL);
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "signal KILL");
        ck_assert_int_eq(o.exit_code, 128 + SIGKILL);

        o = terminal(status("failed", "core-dump", UNIT_CLD_DUMPED, SIGSEGV), NULL);
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "signal SEGV (core dumped)");
        ck_assert_int_eq(o.exit_code, 128 + SIGSEGV);

        o = terminal(status("failed", "signal", UNIT_CLD_KILLED, SIGRTMIN + 2), NULL);
        ck_assert_str_eq(o.reason, "signal RTMIN+2");

        /* cgroup v1: the memory controller's kill looks like any SIGKILL */
        o = terminal(status("failed", "signal", UNIT_CLD_KILLED, SIGKILL), &(UnitEnd) { .memory_limit_hit = true });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "signal KILL (memory limit)");

        /* A clean signal (TERM) is Result=success: stopped, not by us */
        o = terminal(status("inactive", "success", UNIT_CLD_KILLED, SIGTERM), NULL);
        ck_assert_int_eq(o.state, KILLED);
        ck_assert_str_eq(o.reason, "signal TERM");
        ck_assert_int_eq(o.exit_code, 128 + SIGTERM);
}
END_TEST

START_TEST(test_oom_and_others) {
        UnitOutcome o;

        o = terminal(status("failed", "oom-kill", UNIT_CLD_KILLED, SIGKILL), NULL);
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "oom-kill");
        ck_assert_int_eq(o.exit_code, 128 + SIGKILL);

        o = terminal(status("failed", "timeout", UNIT_CLD_KILLED, SIGKILL), NULL);
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "timeout (signal KILL)");

        o = terminal(status("failed", "start-limit-hit", 0, 0), NULL);
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "start-limit-hit");

        o = terminal(status("failed", "resources", 0, 0), NULL);
        ck_assert_str_eq(o.reason, "resources");
}
END_TEST

START_TEST(test_stop_requested) {
        UnitOutcome o;

        /* however the process ends on our stop, it is KILLED */
        o = terminal(status("inactive", "success", UNIT_CLD_KILLED, SIGTERM), &(UnitEnd) { .stop_requested = true });
        ck_assert_int_eq(o.state, KILLED);
        ck_assert_str_eq(o.reason, "stopped on request");

        o = terminal(status("failed", "exit-code", UNIT_CLD_EXITED, 143),
                     &(UnitEnd) { .stop_requested = true, .stop_reason = "application removed" });
        ck_assert_int_eq(o.state, KILLED);
        ck_assert_str_eq(o.reason, "stopped on request: application removed");
        ck_assert_int_eq(o.exit_code, 143);

        /* even one whose start we cancelled, or that systemd refused */
        o = terminal(status("inactive", "", 0, 0),
                     &(UnitEnd) { .stop_requested = true, .start_job_result = "canceled" });
        ck_assert_int_eq(o.state, KILLED);
        ck_assert_str_eq(o.reason, "stopped on request");
        o = terminal(status("", "", 0, 0), &(UnitEnd) { .stop_requested = true, .start_error = "nope" });
        ck_assert_int_eq(o.state, KILLED);

        /* a stop that timed out ends in KILL: still ours */
        o = terminal(status("failed", "timeout", UNIT_CLD_KILLED, SIGKILL), &(UnitEnd) { .stop_requested = true });
        ck_assert_int_eq(o.state, KILLED);
        ck_assert_str_eq(o.reason, "stopped on request");

        /* but a process that died of its own before the stop took effect (the
         * driver saw its socket close and asked for the stop) says how */
        o = terminal(status("failed", "signal", UNIT_CLD_KILLED, SIGKILL),
                     &(UnitEnd) { .stop_requested = true, .stop_reason = "socket disconnected" });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "signal KILL");
        ck_assert_int_eq(o.exit_code, 128 + SIGKILL);
        o = terminal(status("failed", "core-dump", UNIT_CLD_DUMPED, SIGSEGV), &(UnitEnd) { .stop_requested = true });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "signal SEGV (core dumped)");
        o = terminal(status("failed", "oom-kill", UNIT_CLD_KILLED, SIGKILL), &(UnitEnd) { .stop_requested = true });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "oom-kill");
}
END_TEST

START_TEST(test_start_failures) {
        UnitOutcome o;

        o = terminal(status("", "", 0, 0),
                     &(UnitEnd) { .start_error = "Unit spark-executor-x.service already exists." });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "start failed: Unit spark-executor-x.service already exists.");

        /* Type=exec and a binary that is not there: the job fails, and the
         * unit says why */
        o = terminal(status("failed", "exit-code", UNIT_CLD_EXITED, 203), &(UnitEnd) { .start_job_result = "failed" });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "start failed: exit-code 203/EXEC");
        ck_assert_int_eq(o.exit_code, 203);

        /* the job failed, but the process ran: it exited (or was killed)
         * before systemd saw its exec succeed */
        o = terminal(status("failed", "exit-code", UNIT_CLD_EXITED, 3), &(UnitEnd) { .start_job_result = "failed" });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "exit-code 3");
        o = terminal(status("failed", "signal", UNIT_CLD_KILLED, SIGKILL), &(UnitEnd) { .start_job_result = "failed" });
        ck_assert_str_eq(o.reason, "signal KILL");
        o = terminal(status("inactive", "success", UNIT_CLD_EXITED, 0), &(UnitEnd) { .start_job_result = "failed" });
        ck_assert_int_eq(o.state, EXITED);
        ck_assert_str_eq(o.reason, "exit-code 0");

        /* the job result when the unit has nothing to add */
        o = terminal(status("inactive", "success", 0, 0), &(UnitEnd) { .start_job_result = "dependency" });
        ck_assert_int_eq(o.state, FAILED);
        ck_assert_str_eq(o.reason, "start failed: dependency");

        o = terminal(status("failed", "timeout", 0, 0), &(UnitEnd) { .start_job_result = "timeout" });
        ck_assert_str_eq(o.reason, "start failed: timeout");

        /* reasons stay bounded */
        char longmsg[1000];
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
        Suite *s = suite_create("unit-outcome");
        TCase *tc = tcase_create("unit-outcome");

        tcase_add_test(tc, test_running);
        tcase_add_test(tc, test_exit_codes);
        tcase_add_test(tc, test_signals);
        tcase_add_test(tc, test_oom_and_others);
        tcase_add_test(tc, test_stop_requested);
        tcase_add_test(tc, test_start_failures);
        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_states);
        suite_add_tcase(s, tc);
        return check_run(s);
}
