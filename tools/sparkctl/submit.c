/* See submit.h. */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "job-request.h"
#include "wire-names.h"
#include "output.h"
#include "sparkctl.h"
#include "submit.h"
#include "task-output.h"

/* Each poll is a new connection (rpc_call_sync): pace them so that a long
 * job does not pile up sockets in TIME_WAIT. */
#define POLL_MIN_MS 10
#define FETCH_WAIT_MS 1000
#define FETCH_MAX_OUTCOMES 1000
#define FETCH_TIMEOUT_MS 10000
#define FETCH_MAX_REPLY ((size_t) 1088 << 20) /* past the driver's default max_result_mb */
#define UNREACHABLE_GIVE_UP_MS 15000
#define SUBMIT_ATTEMPTS 2

/* A signal arrived: cancel the job. */
#define SUBMIT_INTERRUPTED (-EINTR)

typedef struct Submission {
        const Daemon *driver;
        FILE *out;
        bool json;
        Progress progress;
        sigset_t signals;
        char *job_id;
        int32_t tasks;
        int32_t next;   /* the first task whose outcome is not written yet */
        int32_t failed; /* outcomes written that failed or were lost */
        int32_t killed; /* outcomes written of tasks killed (cancelled, or their job failed) */
        int signal;     /* the one that interrupted us */
        bool watch_only; /* results: a signal stops us, not the job */
} Submission;

static void submission_done(Submission *s) {
        free(s->job_id);
}

/* The signal that arrived within timeout_ms, or 0. */
static int wait_signal(const sigset_t *set, int timeout_ms) {
        struct timespec ts = { .tv_sec = timeout_ms / 1000, .tv_nsec = (long) (timeout_ms % 1000) * 1000000L };
        int sig;

        do
                sig = sigtimedwait(set, NULL, &ts);
        while (sig < 0 && errno == EINTR);
        return sig > 0 ? sig : 0;
}

static int submit_timeout_ms(size_t packed) {
        /* time to move a large shared object or many inputs: a second per MiB */
        return (int) MIN((size_t) SPARKCTL_TIMEOUT_MS + (packed >> 20) * 1000, (size_t) 120000);
}

static int submission_send(Submission *s, JobRequest *j) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Envelope env = ENVELOPE_INIT;
        size_t packed;
        int r = 0;

        /* A shared object goes by its hash first: a driver that has it from
         * an earlier job takes that (a second of upload per MiB saved); one
         * that has not answers ENOENT, and one from before hashes were
         * taken EINVAL (it ignores the field): both get the object. */
        if (j->msg.library.len > 0) {
                j->msg.library = (ProtobufCBinaryData) {};
                j->msg.library_hash = j->library_hash;
        }
        ENVELOPE_SET(&env, SUBMIT_JOB, submit_job, &j->msg);
        packed = spark__submit_job__get_packed_size(&j->msg);
        /* a resend carries the same request_id: the driver makes one job of
         * both.  The reply is small, but allowed what the fetches' replies
         * are: a connection's limit is set when it opens, and the fetches
         * go over the one this call opens. */
        for (int attempt = 0; attempt < SUBMIT_ATTEMPTS; attempt++) {
                envelope_free(TAKE_PTR(reply));
                r = call_daemon_quiet(s->driver, &env, SPARK__ENVELOPE__BODY_SUBMIT_JOB_REPLY,
                                      submit_timeout_ms(packed), FETCH_MAX_REPLY, &reply);
                if ((r == -ENOENT || r == -EINVAL) && reply && j->msg.library_hash) {
                        /* the driver does not hold it: send it */
                        j->msg.library_hash = NULL;
                        j->msg.library = (ProtobufCBinaryData) { .len = j->library_size, .data = j->library };
                        packed = spark__submit_job__get_packed_size(&j->msg);
                        attempt--;
                        continue;
                }
                if (r != -ETIMEDOUT)
                        break;
        }
        if (r < 0) {
                r = call_report_error(s->driver, r, reply);
                if (r == SPARKCTL_EXIT_UNREACHABLE && packed > SPARK_MAX_MESSAGE_BYTES)
                        fprintf(stderr, "sparkctl: the job is %zu MiB; the driver may refuse messages that "
                                "large (driver.max_result_mb)\n", packed >> 20);
                return r;
        }
        if (!wire_name_is_valid(reply->submit_job_reply->job_id, false)) {
                fprintf(stderr, "sparkctl: the driver at %s answered with an invalid job id\n", s->driver->url);
                return SPARKCTL_EXIT_FAILED;
        }
        s->job_id = strdup(reply->submit_job_reply->job_id);
        if (!s->job_id)
                return SPARKCTL_EXIT_FAILED;
        if (reply->submit_job_reply->tasks > 0)
                s->tasks = reply->submit_job_reply->tasks;
        return 0;
}

/* why: shown before cancelling; NULL: say nothing (the reader went away). */
static int submission_cancel(Submission *s, const char *why) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__CancelJob req = SPARK__CANCEL_JOB__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        progress_clear(&s->progress);
        if (why)
                fprintf(stderr, "sparkctl: %s, cancelling %s\n", why, s->job_id);
        req.job_id = s->job_id;
        ENVELOPE_SET(&env, CANCEL_JOB, cancel_job, &req);
        r = call_daemon_quiet(s->driver, &env, SPARK__ENVELOPE__BODY__NOT_SET, SPARKCTL_TIMEOUT_MS, 0, &reply);
        if (r < 0)
                (void) call_report_error(s->driver, r, reply);
        return SPARKCTL_EXIT_FAILED;
}

static int submission_interrupted(Submission *s, int sig) {
        if (s->watch_only) {
                progress_clear(&s->progress);
                if (sig != SIGPIPE)
                        fprintf(stderr, "sparkctl: stopped waiting; %s goes on (sparkctl cancel %s ends it)\n",
                                s->job_id, s->job_id);
                return SPARKCTL_EXIT_FAILED;
        }
        switch (sig) {
        case SIGPIPE:
                return submission_cancel(s, NULL);
        case SIGTERM:
                return submission_cancel(s, "terminated");
        case SIGHUP:
                return submission_cancel(s, "hangup");
        default:
                return submission_cancel(s, "interrupted");
        }
}

/* One FetchResults from the first task not written yet; retried for a while
 * when the driver cannot be reached.  Returns 0 with the reply, an exit
 * status (> 0, said why), or SUBMIT_INTERRUPTED. */
static int submission_fetch(Submission *s, Envelope **ret) {
        Spark__FetchResults req = SPARK__FETCH_RESULTS__INIT;
        Envelope env = ENVELOPE_INIT;
        usec_t first_failure = 0;
        int r;

        req.job_id = s->job_id;
        req.from_index = s->next;
        req.max = FETCH_MAX_OUTCOMES;
        /* the driver holds the request until the next result is ready */
        req.wait_ms = FETCH_WAIT_MS;
        ENVELOPE_SET(&env, FETCH_RESULTS, fetch_results, &req);
        for (;;) {
                _cleanup_envelope_ Envelope *reply = NULL;
                usec_t now;

                r = call_daemon_quiet(s->driver, &env, SPARK__ENVELOPE__BODY_FETCH_RESULTS_REPLY, FETCH_TIMEOUT_MS,
                                      FETCH_MAX_REPLY, &reply);
                if (r >= 0) {
                        *ret = TAKE_PTR(reply);
                        return 0;
                }
                now = now_mono_usec();
                if (first_failure == 0)
                        first_failure = now;
                if (reply || !call_error_is_unreachable(r) ||
                    now - first_failure > UNREACHABLE_GIVE_UP_MS * USEC_PER_MSEC) {
                        progress_clear(&s->progress);
                        return call_report_error(s->driver, r, reply);
                }
                s->signal = wait_signal(&s->signals, 500);
                if (s->signal)
                        return SUBMIT_INTERRUPTED;
        }
}

/* Writes the outcomes that continue the ones written so far; *ret_n: how many. */
static int submission_write(Submission *s, const Spark__FetchResultsReply *fr, size_t *ret_n) {
        size_t n = 0;

        for (size_t i = 0; i < fr->n_outcomes; i++) {
                const Spark__TaskOutcome *o = fr->outcomes[i];

                if (o->index < s->next)
                        continue; /* written already */
                if (o->index != s->next || o->index >= s->tasks)
                        break; /* not the next one: keep task order, ask again */
                if (n == 0)
                        progress_clear(&s->progress);
                task_outcome_write(o, s->json, s->out);
                if (o->status == SPARK__TASK_STATUS__TASK_KILLED)
                        s->killed++; /* counted at the end: a failed job may kill thousands */
                else if (!task_outcome_ok(o)) {
                        s->failed++;
                        if (!s->json) {
                                fflush(s->out);
                                task_outcome_report_failure(o, stderr);
                        }
                }
                s->next++;
                n++;
        }
        *ret_n = n;
        if (n > 0 && fflush(s->out) != 0)
                return negative_errno();
        return ferror(s->out) ? -EIO : 0;
}

static int submission_write_failed(Submission *s, int error) {
        if (error != -EPIPE)
                fprintf(stderr, "sparkctl: cannot write the output: %s\n", strerror(-error));
        /* take the SIGPIPE that came with EPIPE, if any */
        (void) wait_signal(&s->signals, 0);
        return submission_cancel(s, NULL);
}

/* The job's state: from the FetchResults reply, else asked for. */
static int submission_job_info(Submission *s, const Spark__FetchResultsReply *fr, Envelope **holder,
                               const Spark__JobInfo **ret) {
        Spark__JobStatusRequest req = SPARK__JOB_STATUS_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        if (fr->job) {
                *ret = fr->job;
                return 0;
        }
        req.job_id = s->job_id;
        ENVELOPE_SET(&env, JOB_STATUS, job_status, &req);
        r = call_daemon_quiet(s->driver, &env, SPARK__ENVELOPE__BODY_JOB_INFO, SPARKCTL_TIMEOUT_MS, 0, holder);
        if (r < 0) {
                progress_clear(&s->progress);
                return call_report_error(s->driver, r, *holder);
        }
        *ret = (*holder)->job_info;
        return 0;
}

static int submission_finish(Submission *s, const Spark__JobInfo *info) {
        char reason[512], killed[64] = "";
        const char *sep;

        progress_clear(&s->progress);
        if (info->state == SPARK__JOB_STATE__JOB_SUCCEEDED && s->next >= s->tasks && s->failed + s->killed == 0)
                return SPARKCTL_EXIT_OK;

        string_sanitize(info->reason, reason, sizeof(reason));
        sep = reason[0] ? ": " : "";
        if (s->killed > 0)
                snprintf(killed, sizeof(killed), " (%d %s killed)", s->killed, s->killed == 1 ? "task" : "tasks");
        if (info->state == SPARK__JOB_STATE__JOB_CANCELLED)
                fprintf(stderr, "sparkctl: %s was cancelled%s%s%s\n", s->job_id, sep, reason, killed);
        else if (info->state == SPARK__JOB_STATE__JOB_FAILED)
                fprintf(stderr, "sparkctl: %s failed%s%s%s\n", s->job_id, sep, reason, killed);
        else if (s->next < s->tasks)
                fprintf(stderr, "sparkctl: %s ended with the results of %d of its %d tasks\n", s->job_id, s->next,
                        s->tasks);
        else
                fprintf(stderr, "sparkctl: %s: %d of %d tasks did not succeed\n", s->job_id, s->failed + s->killed,
                        s->tasks);
        return SPARKCTL_EXIT_FAILED;
}

static int submission_wait(Submission *s) {
        int delay = POLL_MIN_MS, r, sig;

        for (;;) {
                _cleanup_envelope_ Envelope *reply = NULL, *status = NULL;
                const Spark__JobInfo *info = NULL;
                bool final;
                size_t n;

                sig = wait_signal(&s->signals, 0);
                if (sig)
                        return submission_interrupted(s, sig);
                r = submission_fetch(s, &reply);
                if (r == SUBMIT_INTERRUPTED)
                        return submission_interrupted(s, s->signal);
                if (r > 0)
                        return r;
                r = submission_write(s, reply->fetch_results_reply, &n);
                if (r < 0)
                        return submission_write_failed(s, r);
                r = submission_job_info(s, reply->fetch_results_reply, &status, &info);
                if (r != 0 || !info)
                        return r ?: SPARKCTL_EXIT_FAILED;
                progress_show(&s->progress, info, n > 0);

                final = wire_job_state_is_final(info->state);
                if (final && (s->next >= s->tasks || n == 0))
                        return submission_finish(s, info);
                if (n > 0 && (final || n >= FETCH_MAX_OUTCOMES))
                        continue; /* more are waiting */
                /* With nothing new the driver has waited FETCH_WAIT_MS already;
                 * with results flowing, pace the connections a little. */
                delay = n > 0 ? POLL_MIN_MS : 0;
                sig = wait_signal(&s->signals, delay);
                if (sig)
                        return submission_interrupted(s, sig);
        }
}

static void block_signals(Submission *s, sigset_t *old) {
        sigemptyset(&s->signals);
        sigaddset(&s->signals, SIGINT);
        sigaddset(&s->signals, SIGTERM);
        sigaddset(&s->signals, SIGHUP);
        sigaddset(&s->signals, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &s->signals, old);
}

static void unblock_signals(Submission *s, const sigset_t *old) {
        while (wait_signal(&s->signals, 0) > 0)
                ; /* taken care of: they must not kill us once unblocked */
        pthread_sigmask(SIG_SETMASK, old, NULL);
}

int run_submit(const Daemon *driver, const Args *a, bool progress, FILE *out) {
        _cleanup_(job_request_done) JobRequest j = {};
        _cleanup_(submission_done) Submission s = {
                .driver = driver, .out = out, .json = a->json,
                .progress = { .f = stderr, .enabled = progress },
        };
        char err[512];
        sigset_t old;
        int r;

        /* reading --inputs - from a terminal: Ctrl-C must still just end us */
        r = job_request_build(a, &j, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "sparkctl: %s\n", err);
                return r == -ENOMEM ? SPARKCTL_EXIT_FAILED : SPARKCTL_EXIT_USAGE;
        }
        s.tasks = (int32_t) job_request_tasks(&j);
        if (s.tasks == 0)
                return SPARKCTL_EXIT_OK; /* an empty input: nothing to run, as with parallel */

        /* before the first nng call: nng's threads inherit the mask, so these
         * signals wait for sigtimedwait() on this thread */
        block_signals(&s, &old);
        r = submission_send(&s, &j);
        job_request_done(&j); /* the inputs and the library may be large */
        if (r == 0 && a->detach) {
                fprintf(out, "%s\n", s.job_id);
                unblock_signals(&s, &old);
                return SPARKCTL_EXIT_OK;
        }
        if (r == 0) {
                int sig = wait_signal(&s.signals, 0);
                r = sig ? submission_interrupted(&s, sig) : submission_wait(&s);
        }
        unblock_signals(&s, &old);
        return r;
}

int run_results(const Daemon *driver, const char *job_id, bool json, bool progress, FILE *out) {
        _cleanup_(submission_done) Submission s = {
                .driver = driver, .out = out, .json = json, .watch_only = true,
                .progress = { .f = stderr, .enabled = progress },
        };
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__JobStatusRequest req = SPARK__JOB_STATUS_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        sigset_t old;
        int r, sig;

        s.job_id = strdup(job_id);
        if (!s.job_id)
                return SPARKCTL_EXIT_FAILED;
        block_signals(&s, &old);
        /* how many tasks: the outcomes are written until the last one */
        req.job_id = s.job_id;
        ENVELOPE_SET(&env, JOB_STATUS, job_status, &req);
        r = call_daemon(driver, &env, SPARK__ENVELOPE__BODY_JOB_INFO, &reply);
        if (r == 0) {
                s.tasks = reply->job_info->tasks;
                if (s.tasks < 0)
                        r = SPARKCTL_EXIT_FAILED;
                else if (s.tasks == 0)
                        r = SPARKCTL_EXIT_OK;
                else {
                        sig = wait_signal(&s.signals, 0);
                        r = sig ? submission_interrupted(&s, sig) : submission_wait(&s);
                }
        }
        unblock_signals(&s, &old);
        return r;
}
