/* Command tasks: exit codes, stdout capture and its bound, the stderr tail,
 * stdin, signals, kills through the hooks (before and after the start) and
 * the whole process group, and the outcome each of these becomes. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check-run.h"
#include "command-task.h"

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

static void run(const char *cmd, size_t max, CommandResult *r) {
        ck_assert_int_eq(command_run(cmd, max, NULL, r), 0);
}

/* The exit status of cmd, where that is all a case looks at. */
static int exit_code_of(const char *cmd) {
        CommandResult r;
        int code;

        run(cmd, 1024, &r);
        code = r.exit_code;
        command_result_done(&r);
        return code;
}

START_TEST(test_exit_codes_and_stdout) {
        CommandResult r;
        TaskOutcome o = {};

        run("echo hello; echo world", 1024, &r);
        ck_assert_int_eq(r.exit_code, 0);
        ck_assert_int_eq(r.signal, 0);
        ck_assert_uint_eq(r.output_len, 12);
        ck_assert_mem_eq(r.output, "hello\nworld\n", 12);
        command_result_to_outcome(&r, 1024, &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_OK);
        ck_assert_int_eq(o.exit_code, 0);
        ck_assert_uint_eq(o.output_len, 12);
        ck_assert_ptr_null(o.error);
        command_result_done(&r);
        task_outcome_done(&o);

        run("printf partial; exit 3", 1024, &r);
        ck_assert_int_eq(r.exit_code, 3);
        command_result_to_outcome(&r, 1024, &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_FAILED);
        ck_assert_int_eq(o.exit_code, 3);
        ck_assert_str_eq(o.error, "exited with status 3");
        command_result_done(&r);
        task_outcome_done(&o);

        ck_assert_int_eq(exit_code_of("exit 255"), 255);
        ck_assert_int_eq(exit_code_of("no-such-command-xyz 2>/dev/null"), 127);

        /* No output at all. */
        run("true", 1024, &r);
        ck_assert_int_eq(r.exit_code, 0);
        ck_assert_uint_eq(r.output_len, 0);
        command_result_done(&r);
}
END_TEST

/* Lines of plain words run without the shell (command-words.h); what they
 * do, and how a program that cannot run fails, must not change. */
START_TEST(test_without_the_shell) {
        CommandResult r;
        TaskOutcome o = {};

        /* quoting as sparkctl does it, and a word sh would expand if it
         * were not quoted */
        run("/bin/echo a 'b  c' 'it'\\''s' '$HOME'", 1024, &r);
        ck_assert_int_eq(r.exit_code, 0);
        ck_assert_str_eq(r.output, "a b  c it's $HOME\n");
        command_result_done(&r);

        /* found in PATH, its exit status kept */
        ck_assert_int_eq(exit_code_of("sh -c 'exit 7'"), 7);

        /* not found: the shell says so, as without this path */
        run("no-such-command-xyz a b", 1024, &r);
        ck_assert_int_eq(r.exit_code, 127);
        ck_assert_ptr_nonnull(strstr(r.stderr_tail, "no-such-command-xyz"));
        ck_assert_ptr_nonnull(strstr(r.stderr_tail, "not found"));
        command_result_to_outcome(&r, 1024, &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_FAILED);
        ck_assert_int_eq(o.exit_code, 127);
        command_result_done(&r);
        task_outcome_done(&o);

        /* not executable: 126, from the shell; a script without "#!": run
         * by the shell, as sh does (its output is the proof) */
        {
                char path[] = "/tmp/test-command-task.XXXXXX", cmd[64];
                int fd = mkstemp(path);

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, "echo from the script\n", 21), 21);
                close(fd);
                snprintf(cmd, sizeof(cmd), "%s x", path);
                ck_assert_int_eq(exit_code_of(cmd), 126);
                ck_assert_int_eq(chmod(path, 0700), 0);
                run(cmd, 1024, &r);
                ck_assert_int_eq(r.exit_code, 0);
                ck_assert_str_eq(r.output, "from the script\n");
                command_result_done(&r);
                unlink(path);
        }

        /* its own process group, stdin from /dev/null */
        run("/bin/sh -c 'ps -o pgid= -p $$; cat; echo $$'", 1024, &r);
        ck_assert_int_eq(r.exit_code, 0);
        {
                long pgid = 0, pid = -1;
                ck_assert_int_eq(sscanf(r.output, " %ld %ld", &pgid, &pid), 2);
                ck_assert_int_eq(pgid, pid);
        }
        command_result_done(&r);
}
END_TEST

START_TEST(test_stdin_is_dev_null) {
        uint64_t start = now_ms();
        CommandResult r;

        run("cat; echo done", 1024, &r);
        ck_assert_int_eq(r.exit_code, 0);
        ck_assert_str_eq(r.output, "done\n");
        ck_assert_uint_lt(now_ms() - start, 5000);
        command_result_done(&r);
}
END_TEST

START_TEST(test_bounded_output) {
        CommandResult r;
        TaskOutcome o = {};

        /* Exactly at the limit is fine. */
        run("head -c 1000 /dev/zero", 1000, &r);
        ck_assert_int_eq(r.exit_code, 0);
        ck_assert(!r.output_overflow);
        ck_assert_uint_eq(r.output_len, 1000);
        command_result_done(&r);

        /* Endless output: killed once it passes the limit, and fails. */
        run("yes", 100000, &r);
        ck_assert(r.output_overflow);
        command_result_to_outcome(&r, 100000, &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_FAILED);
        ck_assert_ptr_nonnull(strstr(o.error, "exceeds max_result_bytes (100000)"));
        ck_assert_uint_eq(o.output_len, 0);
        command_result_done(&r);
        task_outcome_done(&o);
}
END_TEST

START_TEST(test_stderr_tail) {
        CommandResult r;
        TaskOutcome o = {};

        run("echo oops >&2; exit 1", 1024, &r);
        ck_assert_str_eq(r.stderr_tail, "oops\n");
        ck_assert(!r.stderr_truncated);
        command_result_to_outcome(&r, 1024, &o);
        ck_assert_str_eq(o.error, "oops\n");
        ck_assert_int_eq(o.exit_code, 1);
        command_result_done(&r);
        task_outcome_done(&o);

        /* 10000 lines of 6 bytes, then a marker: only the last 4 KiB stay. */
        run("i=0; while [ $i -lt 10000 ]; do echo 12345; i=$((i+1)); done >&2; printf END >&2; exit 2", 1024, &r);
        ck_assert(r.stderr_truncated);
        ck_assert_uint_eq(r.stderr_len, COMMAND_STDERR_TAIL);
        ck_assert_uint_eq(strlen(r.stderr_tail), COMMAND_STDERR_TAIL);
        ck_assert_str_eq(r.stderr_tail + COMMAND_STDERR_TAIL - 9, "12345\nEND");
        command_result_to_outcome(&r, 1024, &o);
        ck_assert(strncmp(o.error, "...", 3) == 0);
        ck_assert_uint_eq(strlen(o.error), COMMAND_STDERR_TAIL + 3);
        command_result_done(&r);
        task_outcome_done(&o);

        /* Invalid UTF-8 on stderr becomes '?' in the error. */
        run("printf 'bad \\377 byte' >&2; exit 1", 1024, &r);
        command_result_to_outcome(&r, 1024, &o);
        ck_assert_str_eq(o.error, "bad ? byte");
        command_result_done(&r);
        task_outcome_done(&o);
}
END_TEST

START_TEST(test_signal) {
        CommandResult r;
        TaskOutcome o = {};

        run("echo dying >&2; kill -SEGV $$", 1024, &r);
        ck_assert_int_eq(r.signal, SIGSEGV);
        ck_assert_int_eq(r.exit_code, 128 + SIGSEGV);
        command_result_to_outcome(&r, 1024, &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_FAILED);
        ck_assert_str_eq(o.error, "killed by signal SEGV\ndying\n");
        command_result_done(&r);
        task_outcome_done(&o);
}
END_TEST

typedef struct KillState {
        pthread_mutex_t lock;
        pid_t pid;
        bool kill_at_start;
        bool exited;
} KillState;

static bool on_started(pid_t pid, void *userdata) {
        KillState *k = userdata;

        pthread_mutex_lock(&k->lock);
        k->pid = pid;
        pthread_mutex_unlock(&k->lock);
        return k->kill_at_start;
}

static void on_exiting(pid_t pid, void *userdata) {
        KillState *k = userdata;

        ck_assert_int_eq(pid, k->pid);
        pthread_mutex_lock(&k->lock);
        k->pid = 0;
        k->exited = true;
        pthread_mutex_unlock(&k->lock);
}

static void *killer(void *arg) {
        KillState *k = arg;

        for (;;) {
                pid_t pid;

                pthread_mutex_lock(&k->lock);
                pid = k->pid;
                pthread_mutex_unlock(&k->lock);
                if (pid > 0) {
                        usleep(100 * 1000);
                        pthread_mutex_lock(&k->lock);
                        if (k->pid > 0)
                                (void) kill(-k->pid, SIGKILL);
                        pthread_mutex_unlock(&k->lock);
                        return NULL;
                }
                usleep(1000);
        }
}

START_TEST(test_kill_process_group) {
        KillState k = { .lock = PTHREAD_MUTEX_INITIALIZER };
        CommandHooks hooks = { .started = on_started, .exiting = on_exiting, .userdata = &k };
        uint64_t start = now_ms();
        CommandResult r;
        pthread_t t;

        /* A background child that holds stdout open: only a kill of the
         * whole group ends the command. */
        ck_assert_int_eq(pthread_create(&t, NULL, killer, &k), 0);
        ck_assert_int_eq(command_run("sleep 30 & sleep 30; wait", 1024, &hooks, &r), 0);
        pthread_join(t, NULL);
        ck_assert_int_eq(r.signal, SIGKILL);
        ck_assert_int_eq(r.exit_code, 128 + SIGKILL);
        ck_assert(k.exited);
        ck_assert_uint_lt(now_ms() - start, 5000);
        command_result_done(&r);
}
END_TEST

START_TEST(test_kill_before_start) {
        KillState k = { .lock = PTHREAD_MUTEX_INITIALIZER, .kill_at_start = true };
        CommandHooks hooks = { .started = on_started, .exiting = on_exiting, .userdata = &k };
        uint64_t start = now_ms();
        CommandResult r;

        ck_assert_int_eq(command_run("sleep 30", 1024, &hooks, &r), 0);
        ck_assert_int_eq(r.signal, SIGKILL);
        ck_assert_uint_lt(now_ms() - start, 5000);
        command_result_done(&r);
}
END_TEST

START_TEST(test_environment_and_signals_reset) {
        sigset_t mask, old;
        CommandResult r;

        /* The executor blocks SIGTERM and ignores SIGPIPE; commands must
         * not inherit that. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &mask, &old), 0);
        signal(SIGPIPE, SIG_IGN);
        run("kill -TERM $$; echo survived", 1024, &r);
        ck_assert_int_eq(r.signal, SIGTERM);
        ck_assert_uint_eq(r.output_len, 0);
        command_result_done(&r);
        run("kill -PIPE $$; echo survived", 1024, &r);
        ck_assert_int_eq(r.signal, SIGPIPE);
        command_result_done(&r);
        ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
        signal(SIGPIPE, SIG_DFL);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_exit_codes_and_stdout,
                test_without_the_shell,
                test_stdin_is_dev_null,
                test_bounded_output,
                test_stderr_tail,
                test_signal,
                test_kill_process_group,
                test_kill_before_start,
                test_environment_and_signals_reset,
                NULL,
        };
        const CheckOptions options = { .timeout = 60 };

        return check_run_tests("command-task", &options, tests);
}
