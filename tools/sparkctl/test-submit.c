/* sparkctl submit end to end against a fake driver: an nng rep socket in a
 * thread that answers SubmitJob, FetchResults, JobStatus and CancelJob the
 * way the driver does, revealing results a few at a time.  Checks what is
 * sent (expanded command lines, the library, inputs), what is written
 * (task order, each outcome once, JSON lines), exit statuses, and the
 * cancellation on SIGINT and on a closed output. */
#include <check.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-run.h"
#include "args.h"
#include "codec.h"
#include "job-request.h"
#include "nng-util.h"
#include "sha256.h"
#include "sparkctl.h"
#include "submit.h"

typedef struct FakeDriver {
        nng_socket sock;
        char url[128];
        pthread_t thread;
        pthread_mutex_t lock;
        volatile bool stop;

        /* behaviour */
        int reveal_per_fetch;   /* outcomes that become available per FetchResults */
        int failing_task;       /* this task fails (-1: none) */
        bool fail_job;          /* the job fails after revealing what it has */
        int fail_after;         /* ... once this many are revealed */
        bool never_finish;      /* reveal nothing, run until cancelled */
        int interrupt_after;    /* send ourselves SIGINT after this many fetches (0: never) */
        bool resend_previous;   /* also return the outcome before from_index */
        bool refuse_submit;     /* answer SubmitJob with an Error */

        /* the shared object it holds (from a submission that carried it) */
        char library_hash[SHA256_HEX_SIZE];

        /* what it saw */
        Envelope *submitted;
        int unknown_hashes;     /* submissions naming an object it did not hold */
        int tasks;
        int revealed;
        int fetches;
        int cancels;
        atomic_int connections; /* nng's pipe callback counts them */
        Spark__JobState state;
} FakeDriver;

static void reply(FakeDriver *d, Envelope *env) {
        nng_msg *m = NULL;

        ck_assert_int_eq(nng_util_msg_from_envelope(env, &m), 0);
        if (nng_sendmsg(d->sock, m, 0) != 0)
                nng_msg_free(m);
}

static void reply_error_code(FakeDriver *d, int code, const char *message) {
        ErrorEnvelope e;

        error_envelope_init(&e, code, "%s", message);
        reply(d, &e.env);
}

static void reply_error(FakeDriver *d, const char *message) {
        reply_error_code(d, -EINVAL, message);
}

static void fill_info(FakeDriver *d, Spark__JobInfo *info) {
        spark__job_info__init(info);
        info->job_id = "job-0001";
        info->state = d->state;
        info->tasks = d->tasks;
        info->done = d->revealed;
        info->executors = 2;
        info->elapsed_ms = 10;
        if (d->state == SPARK__JOB_STATE__JOB_FAILED)
                info->reason = "task 1 failed 4 times";
}

/* Task i's output: its input (for command jobs, its command line) and a newline. */
static void fill_outcome(FakeDriver *d, int i, Spark__TaskOutcome *o, char *buf, size_t size) {
        const Spark__SubmitJob *sj = d->submitted->submit_job;
        size_t n = 0;
        static char *errors[] = { "attempt 1: exit status 3", "attempt 2: exit status 3" };

        spark__task_outcome__init(o);
        o->index = i;
        o->attempts = 1;
        o->status = SPARK__TASK_STATUS__TASK_OK;
        if ((size_t) i < sj->n_inputs)
                n = MIN(sj->inputs[i].len, size - 1);
        else
                n = MIN(sj->arg.len, size - 1);
        memcpy(buf, (size_t) i < sj->n_inputs ? sj->inputs[i].data : sj->arg.data, n);
        buf[n++] = '\n';
        o->output = (ProtobufCBinaryData) { .len = n, .data = (uint8_t *) buf };
        if (i == d->failing_task) {
                o->status = SPARK__TASK_STATUS__TASK_FAILED;
                o->attempts = 2;
                o->exit_code = 3;
                o->n_errors = 2;
                o->errors = errors;
        }
}

static void handle_fetch(FakeDriver *d, const Spark__FetchResults *fr) {
        Spark__FetchResultsReply r = SPARK__FETCH_RESULTS_REPLY__INIT;
        Spark__JobInfo info;
        Spark__TaskOutcome outcomes[64], *ptrs[64];
        char bufs[64][256];
        Envelope env = ENVELOPE_INIT;
        int from;

        ck_assert_str_eq(fr->job_id, "job-0001");
        d->fetches++;
        if (d->interrupt_after > 0 && d->fetches == d->interrupt_after)
                kill(getpid(), SIGINT);
        if (!d->never_finish && d->state == SPARK__JOB_STATE__JOB_RUNNING) {
                d->revealed = MIN(d->tasks, d->revealed + d->reveal_per_fetch);
                if (d->fail_job && d->revealed >= d->fail_after)
                        d->state = SPARK__JOB_STATE__JOB_FAILED;
                else if (d->revealed == d->tasks)
                        d->state = d->failing_task >= 0 ? SPARK__JOB_STATE__JOB_FAILED
                                                        : SPARK__JOB_STATE__JOB_SUCCEEDED;
        }
        from = fr->from_index;
        if (d->resend_previous && from > 0)
                from--;
        for (int i = from; i < d->revealed && r.n_outcomes < 64 && (int) r.n_outcomes < MAX(fr->max, 1); i++) {
                fill_outcome(d, i, &outcomes[r.n_outcomes], bufs[r.n_outcomes], sizeof(bufs[0]));
                ptrs[r.n_outcomes] = &outcomes[r.n_outcomes];
                r.n_outcomes++;
        }
        r.outcomes = ptrs;
        fill_info(d, &info);
        r.job = &info;
        ENVELOPE_SET(&env, FETCH_RESULTS_REPLY, fetch_results_reply, &r);
        reply(d, &env);
}

static void handle(FakeDriver *d, Envelope *req) {
        Spark__SubmitJobReply sr = SPARK__SUBMIT_JOB_REPLY__INIT;
        Spark__JobInfo info;
        Spark__Ack ack = SPARK__ACK__INIT;
        Envelope env = ENVELOPE_INIT;

        switch (req->body_case) {
        case SPARK__ENVELOPE__BODY_SUBMIT_JOB:
                if (d->refuse_submit) {
                        reply_error(d, "no executors: the application is not running");
                        break;
                }
                /* as the driver: a shared object by hash only if it holds it */
                if (req->submit_job->kind == SPARK__TASK_KIND__TASK_FUNCTION) {
                        const Spark__SubmitJob *sj = req->submit_job;

                        if (sj->library.len > 0)
                                sha256_hex(sj->library.data, sj->library.len, d->library_hash);
                        else if (!streq_ptr(sj->library_hash, d->library_hash)) {
                                d->unknown_hashes++;
                                reply_error_code(d, -ENOENT, "no shared object with that sha256: send it");
                                break;
                        }
                }
                envelope_free(d->submitted);
                d->submitted = req;
                d->tasks = (int) (req->submit_job->n_inputs ?: (size_t) req->submit_job->count);
                d->state = SPARK__JOB_STATE__JOB_RUNNING;
                sr.job_id = "job-0001";
                sr.tasks = d->tasks;
                ENVELOPE_SET(&env, SUBMIT_JOB_REPLY, submit_job_reply, &sr);
                return reply(d, &env);
        case SPARK__ENVELOPE__BODY_FETCH_RESULTS:
                handle_fetch(d, req->fetch_results);
                break;
        case SPARK__ENVELOPE__BODY_JOB_STATUS:
                fill_info(d, &info);
                ENVELOPE_SET(&env, JOB_INFO, job_info, &info);
                reply(d, &env);
                break;
        case SPARK__ENVELOPE__BODY_CANCEL_JOB:
                d->cancels++;
                d->state = SPARK__JOB_STATE__JOB_CANCELLED;
                ENVELOPE_SET(&env, ACK, ack, &ack);
                reply(d, &env);
                break;
        default:
                reply_error(d, "not a driver request");
        }
        envelope_free(req);
}

static void *fake_driver_thread(void *userdata) {
        FakeDriver *d = userdata;

        while (!d->stop) {
                Envelope *req = NULL;
                nng_msg *m = NULL;

                if (nng_recvmsg(d->sock, &m, 0) != 0)
                        continue; /* the receive timeout: look at stop */
                ck_assert_int_eq(envelope_decode(nng_msg_body(m), nng_msg_len(m), 1u << 30, &req), 0);
                nng_msg_free(m);
                pthread_mutex_lock(&d->lock);
                handle(d, req);
                pthread_mutex_unlock(&d->lock);
        }
        return NULL;
}

static void count_connection(nng_pipe p, nng_pipe_ev ev, void *userdata) {
        FakeDriver *d = userdata;

        (void) p;
        (void) ev;
        atomic_fetch_add(&d->connections, 1);
}

static FakeDriver driver;
/* the connections submit() keeps, as sparkctl's main() does */
static CallSessions sessions;
static char tmpdir[] = "/tmp/test-sparkctl-submit.XXXXXX";
static char *out;       /* what the last submit() wrote */
static size_t out_size;

static void setup(void) {
        sigset_t set;

        /* nng's threads must not take the signals that sparkctl waits for */
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        sigaddset(&set, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &set, NULL);

        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        driver = (FakeDriver) { .reveal_per_fetch = 2, .failing_task = -1 };
        pthread_mutex_init(&driver.lock, NULL);
        snprintf(driver.url, sizeof(driver.url), "ipc://%s/driver.sock", tmpdir);
        ck_assert_int_eq(nng_rep0_open(&driver.sock), 0);
        ck_assert_int_eq(nng_socket_set_ms(driver.sock, NNG_OPT_RECVTIMEO, 50), 0);
        ck_assert_int_eq(nng_socket_set_size(driver.sock, NNG_OPT_RECVMAXSZ, 1u << 30), 0);
        ck_assert_int_eq(nng_pipe_notify(driver.sock, NNG_PIPE_EV_ADD_POST, count_connection, &driver), 0);
        ck_assert_int_eq(nng_listen(driver.sock, driver.url, NULL, 0), 0);
        ck_assert_int_eq(pthread_create(&driver.thread, NULL, fake_driver_thread, &driver), 0);
}

static void teardown(void) {
        char path[256];

        call_sessions_done(&sessions);
        driver.stop = true;
        if (driver.thread)
                pthread_join(driver.thread, NULL);
        nng_close(driver.sock);
        envelope_free(driver.submitted);
        free(out);
        out = NULL;
        snprintf(path, sizeof(path), "%s/inputs", tmpdir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/lib.so", tmpdir);
        unlink(path);
        rmdir(tmpdir);
}

static const char *write_tmp(const char *name, const void *data, size_t n) {
        static char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, n, f), n);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

/* Runs `sparkctl submit ARGS...` (a NULL ends them) against d, writing to
 * f, or, if f is NULL, to out. */
static int submit_to(const Daemon *d, FILE *f, ...) {
        char *argv[32] = { (char *) "sparkctl", (char *) "submit" };
        char err[256];
        va_list ap;
        int argc = 2, r;
        Args a;

        va_start(ap, f);
        for (char *s; (s = va_arg(ap, char *));)
                argv[argc++] = s;
        va_end(ap);
        ck_assert_int_eq(args_parse(argc, argv, &a), 0);
        ck_assert_msg(args_validate(&a, err, sizeof(err)) == 0, "%s", err);

        if (f)
                return run_submit(d, &a, false, f);
        free(out);
        out = NULL;
        f = open_memstream(&out, &out_size);
        ck_assert_ptr_nonnull(f);
        r = run_submit(d, &a, false, f);
        ck_assert_int_eq(fclose(f), 0);
        return r;
}

/* The same against the fake driver. */
#define submit(...) \
        submit_to(&(Daemon) { .kind = DAEMON_DRIVER, .url = driver.url, .sessions = &sessions }, NULL, __VA_ARGS__)

#define SUBMITTED (driver.submitted->submit_job)

static void ck_input(size_t i, const char *expected) {
        ck_assert_uint_gt(SUBMITTED->n_inputs, i);
        ck_assert_uint_eq(SUBMITTED->inputs[i].len, strlen(expected));
        ck_assert_mem_eq(SUBMITTED->inputs[i].data, expected, strlen(expected));
}

START_TEST(test_command_inputs) {
        static const char lines[] = "alpha\nit's here\n\nlast without newline";
        const char *path = write_tmp("inputs", lines, sizeof(lines) - 1);

        ck_assert_int_eq(submit("--command", "echo {#} {}", "--inputs", path, "--name", "n", NULL), SPARKCTL_EXIT_OK);
        ck_assert_int_eq(SUBMITTED->kind, SPARK__TASK_KIND__TASK_COMMAND);
        ck_assert_str_eq(SUBMITTED->command, "echo {#} {}");
        ck_assert_str_eq(SUBMITTED->name, "n");
        ck_assert_int_eq(SUBMITTED->count, 0);
        ck_assert_uint_eq(SUBMITTED->n_inputs, 4);
        ck_input(0, "echo 0 alpha");
        ck_input(1, "echo 1 'it'\\''s here'");
        ck_input(2, "echo 2 ''");
        ck_input(3, "echo 3 'last without newline'");
        ck_assert_uint_eq(strlen(SUBMITTED->request_id), 32);
        /* every output once, in task order, although they came two per poll */
        ck_assert_str_eq(out, "echo 0 alpha\necho 1 'it'\\''s here'\necho 2 ''\necho 3 'last without newline'\n");
        ck_assert_int_ge(driver.fetches, 2);
        /* the submit and its fetches went over one connection */
        ck_assert_int_eq(atomic_load(&driver.connections), 1);
}
END_TEST

START_TEST(test_command_count) {
        driver.reveal_per_fetch = 100;
        ck_assert_int_eq(submit("--command", "seq {#}", "--count", "3", NULL), SPARKCTL_EXIT_OK);
        ck_assert_uint_eq(SUBMITTED->n_inputs, 3);
        ck_input(0, "seq 0");
        ck_input(2, "seq 2");
        ck_assert_str_eq(out, "seq 0\nseq 1\nseq 2\n");

        /* without placeholders, --inputs appends the input */
        ck_assert_int_eq(submit("--command", "wc -c", "--inputs", write_tmp("inputs", "a b\n", 4), NULL),
                         SPARKCTL_EXIT_OK);
        ck_input(0, "wc -c 'a b'");
}
END_TEST

START_TEST(test_json_and_failure) {
        driver.failing_task = 1;
        ck_assert_int_eq(submit("--json", "--command", "x {}", "--inputs",
                                write_tmp("inputs", "a\n\"q\"\nc\n", 8), NULL),
                         SPARKCTL_EXIT_FAILED);
        ck_assert_str_eq(out,
                         "{\"task\":0,\"status\":\"ok\",\"attempts\":1,\"exit_code\":0,\"output\":\"x a\\n\",\"errors\":[]}\n"
                         "{\"task\":1,\"status\":\"failed\",\"attempts\":2,\"exit_code\":3,"
                         "\"output\":\"x '\\\"q\\\"'\\n\",\"errors\":[\"attempt 1: exit status 3\","
                         "\"attempt 2: exit status 3\"]}\n"
                         "{\"task\":2,\"status\":\"ok\",\"attempts\":1,\"exit_code\":0,\"output\":\"x c\\n\",\"errors\":[]}\n");
}
END_TEST

START_TEST(test_function_job) {
        static const char elf[] = "\x7f" "ELF\x02\x01\x01\0fake shared object";
        static const char inputs[] = "one\n\xff\xfe\n\0nul\n";
        _cleanup_free_ char *spec = NULL;

        ck_assert_int_ge(asprintf(&spec, "%s:task_main", write_tmp("lib.so", elf, sizeof(elf) - 1)), 0);

        /* first by its hash, which this driver does not know: then the
         * object itself */
        ck_assert_int_eq(submit("--function", spec, "--count", "3", "--arg", "payload", NULL), SPARKCTL_EXIT_OK);
        ck_assert_int_eq(driver.unknown_hashes, 1);
        ck_assert_int_eq(SUBMITTED->kind, SPARK__TASK_KIND__TASK_FUNCTION);
        ck_assert_str_eq(SUBMITTED->symbol, "task_main");
        ck_assert_uint_eq(SUBMITTED->library.len, sizeof(elf) - 1);
        ck_assert_mem_eq(SUBMITTED->library.data, elf, sizeof(elf) - 1);
        ck_assert_uint_eq(SUBMITTED->n_inputs, 0);
        ck_assert_int_eq(SUBMITTED->count, 3);
        ck_assert_uint_eq(SUBMITTED->arg.len, 7);
        ck_assert_str_eq(out, "payload\npayload\npayload\n");

        /* lines are bytes: no quoting, NUL and non-UTF-8 kept */
        ck_assert_int_eq(submit("--function", spec, "--inputs", write_tmp("inputs", inputs, sizeof(inputs) - 1), NULL),
                         SPARKCTL_EXIT_OK);
        ck_assert_uint_eq(SUBMITTED->n_inputs, 3);
        ck_assert_int_eq(SUBMITTED->count, 0);
        /* the driver holds the object now: its hash is enough */
        ck_assert_int_eq(driver.unknown_hashes, 1);
        ck_assert_uint_eq(SUBMITTED->library.len, 0);
        {
                char hash[SHA256_HEX_SIZE];

                ck_assert_str_eq(SUBMITTED->library_hash, sha256_hex(elf, sizeof(elf) - 1, hash));
        }
        ck_input(0, "one");
        ck_input(1, "\xff\xfe");
        ck_assert_uint_eq(SUBMITTED->inputs[2].len, 4);
        ck_assert_mem_eq(SUBMITTED->inputs[2].data, "\0nul", 4);
        ck_assert_uint_eq(out_size, sizeof(inputs) - 1);
        ck_assert_mem_eq(out, inputs, out_size);
}
END_TEST

START_TEST(test_local_errors) {
        _cleanup_free_ char *spec = NULL;

        ck_assert_int_ge(asprintf(&spec, "%s:f", write_tmp("lib.so", "#!/bin/sh\n", 10)), 0);
        ck_assert_int_eq(submit("--function", spec, "--count", "1", NULL), SPARKCTL_EXIT_USAGE);
        ck_assert_int_eq(submit("--command", "x", "--inputs", "/nonexistent/file", NULL), SPARKCTL_EXIT_USAGE);
        /* a NUL cannot go into a command line */
        ck_assert_int_eq(submit("--command", "x {}", "--inputs", write_tmp("inputs", "a\0b\n", 4), NULL),
                         SPARKCTL_EXIT_USAGE);
        /* nothing to run: nothing is sent */
        ck_assert_int_eq(submit("--command", "x", "--inputs", write_tmp("inputs", "", 0), NULL), SPARKCTL_EXIT_OK);
        ck_assert_uint_eq(out_size, 0);
        ck_assert_ptr_null(driver.submitted);
}
END_TEST

START_TEST(test_job_failed) {
        driver.fail_job = true;
        driver.fail_after = 2;
        ck_assert_int_eq(submit("--command", "t{#}", "--count", "5", NULL), SPARKCTL_EXIT_FAILED);
        /* what the driver had is written, the job's reason goes to stderr */
        ck_assert_str_eq(out, "t0\nt1\n");
}
END_TEST

START_TEST(test_duplicates_skipped) {
        driver.resend_previous = true;
        driver.reveal_per_fetch = 1;
        ck_assert_int_eq(submit("--command", "t{#}", "--count", "4", NULL), SPARKCTL_EXIT_OK);
        ck_assert_str_eq(out, "t0\nt1\nt2\nt3\n");
}
END_TEST

START_TEST(test_interrupt_cancels) {
        driver.never_finish = true;
        driver.interrupt_after = 3;
        ck_assert_int_eq(submit("--command", "sleep 100", "--count", "2", NULL), SPARKCTL_EXIT_FAILED);
        ck_assert_int_eq(driver.cancels, 1);
        ck_assert_int_eq(driver.state, SPARK__JOB_STATE__JOB_CANCELLED);
}
END_TEST

START_TEST(test_closed_output_cancels) {
        Daemon d = { .kind = DAEMON_DRIVER, .url = driver.url };
        int fds[2];
        FILE *f;

        driver.reveal_per_fetch = 1;
        ck_assert_int_eq(pipe(fds), 0);
        close(fds[0]);
        f = fdopen(fds[1], "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(submit_to(&d, f, "--command", "t{#}", "--count", "50", NULL), SPARKCTL_EXIT_FAILED);
        fclose(f);
        ck_assert_int_eq(driver.cancels, 1);
}
END_TEST

START_TEST(test_driver_errors) {
        Daemon nowhere = { .kind = DAEMON_DRIVER, .url = "ipc:///nonexistent/driver.sock" };

        ck_assert_int_eq(submit_to(&nowhere, stdout, "--command", "x", "--count", "1", NULL),
                         SPARKCTL_EXIT_UNREACHABLE);

        driver.refuse_submit = true;
        ck_assert_int_eq(submit("--command", "x", "--count", "1", NULL), SPARKCTL_EXIT_FAILED);
}
END_TEST

START_TEST(test_split_lines) {
        _cleanup_free_ ProtobufCBinaryData *lines = NULL;
        char data[] = "a\n\nbc";
        size_t n;

        ck_assert_int_eq(split_lines(data, 5, &lines, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(lines[0].len, 1);
        ck_assert_uint_eq(lines[1].len, 0);
        ck_assert_uint_eq(lines[2].len, 2);
        ck_assert_mem_eq(lines[2].data, "bc", 2);
        free(lines);
        lines = NULL;
        ck_assert_int_eq(split_lines(data, 0, &lines, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(lines);
        lines = NULL;
        ck_assert_int_eq(split_lines(data, 2, &lines, &n), 0); /* "a\n" */
        ck_assert_uint_eq(n, 1);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_command_inputs,
                test_command_count,
                test_json_and_failure,
                test_function_job,
                test_local_errors,
                test_job_failed,
                test_duplicates_skipped,
                test_interrupt_cancels,
                test_closed_output_cancels,
                test_driver_errors,
                test_split_lines,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 30 };

        return check_run_tests("sparkctl-submit", &options, tests);
}
