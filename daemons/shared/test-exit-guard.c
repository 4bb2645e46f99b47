/* The exit guard: a process whose cleanup hangs still ends, with the
 * status it meant to exit with. */
#include <check.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-run.h"
#include "daemon.h"
#include "log.h"
#include "time-util.h"

/* Forks a child that arms the guard and then hangs as a stuck nng_close()
 * would; returns its wait status and how long it lived. */
static int run_hanging_child(int status, unsigned seconds, double *lived) {
        usec_t t0 = now_mono_usec();
        int ws = 0;
        pid_t pid;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                alarm(30); /* a guard that never fires fails the test, not the run */
                daemon_exit_guard_within(status, seconds);
                for (;;)
                        pause();
        }
        ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
        *lived = (double) (now_mono_usec() - t0) / USEC_PER_SEC;
        return ws;
}

START_TEST(test_guard_ends_a_hung_cleanup) {
        double lived;
        int ws = run_hanging_child(7, 1, &lived);

        ck_assert_msg(WIFEXITED(ws), "the child did not exit (wait status %d)", ws);
        ck_assert_int_eq(WEXITSTATUS(ws), 7);
        /* not before its time */
        ck_assert_msg(lived >= 0.9, "the guard fired after %.3f s of 1", lived);
}
END_TEST

START_TEST(test_guard_keeps_failure_status) {
        double lived;
        int ws = run_hanging_child(EXIT_FAILURE, 0, &lived);

        /* 0 s means the shortest guard, 1 s: a guard never fires at once */
        ck_assert(WIFEXITED(ws));
        ck_assert_int_eq(WEXITSTATUS(ws), EXIT_FAILURE);
        ck_assert_msg(lived >= 0.9, "the guard fired after %.3f s", lived);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_guard_ends_a_hung_cleanup,
                test_guard_keeps_failure_status,
                NULL,
        };

        log_set_max_level(LOG_ERR); /* the guard warns as it fires */
        return check_run_tests("exit-guard", NULL, tests);
}
