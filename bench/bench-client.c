/* bench-client: a driver's client for the throughput and latency rows,
 * making its calls one after another on one session (rpc-client.h's
 * RpcSyncSession, as sparkctl's are): over nng until an answer names the
 * driver's task channel, there from then on over tcp://.  sparkctl paces
 * its polls, which is right for a person and wrong for a measurement.
 *
 *   bench-client throughput URL LIB.so SYMBOL ARG COUNT
 *       One job of COUNT tasks (input ARG each).  Timed from SubmitJob to
 *       the last result fetched; job status is polled every 1 ms.  Prints
 *       tasks_per_s, elapsed_ms, driver_elapsed_ms (the job's own clock),
 *       ok (tasks that succeeded).
 *   bench-client latency URL LIB.so SYMBOL ARG COUNT
 *       COUNT sequential one-task jobs: SubmitJob with wait_ms (the driver
 *       answers with the result), FetchResults only if it did not; in a
 *       loop without sleeping until the outcome is there.  Prints
 *       latency_us_p50, latency_us_p99, latency_us_mean.
 *
 * As sparkctl does, a submission names the shared object by its sha256
 * once the driver has it, and sends the object itself when the driver
 * answers that it does not (ENOENT).
 *
 * Over tls+tcp:// the CA, certificate and key come from $SPARK_TLS_CA_FILE,
 * $SPARK_TLS_CERT_FILE and $SPARK_TLS_KEY_FILE (as for sparkctl): the
 * session presents the certificate in the handshake and answers the
 * driver's challenge for its role (docs/security.md) once per connection.
 * The proof is not in the figures' way: it is made during the warm-up.
 *
 * Exits 1 when a call fails or a task does not succeed. */
#include <inttypes.h>
#include <time.h>

#include "bench-util.h"
#include "codec.h"
#include "fileio.h"
#include "macro.h"
#include "rpc-client.h"
#include "sha256.h"
#include "tls.h"

#define CALL_TIMEOUT_MS 60000
/* a throughput job's fetch of 100,000 outcomes is a few MiB */
#define MAX_REPLY_BYTES (256u * 1024u * 1024u)

typedef struct Client {
        RpcSyncSession *session;
        ProtobufCBinaryData library;
        char library_hash[SHA256_HEX_SIZE];
        bool driver_has_library; /* a submission with the object went through */
        const char *symbol;
        ProtobufCBinaryData arg;
        unsigned long job_counter;
} Client;

/* One call on the session; *ret gets the reply (an Error reply is a
 * failure: its code, or -EBADMSG for an unexpected body). */
static int call(Client *c, Envelope *req, Spark__Envelope__BodyCase expect, Envelope **ret) {
        Envelope *reply = NULL;
        int r;

        r = rpc_sync_session_call(c->session, req, CALL_TIMEOUT_MS, MAX_REPLY_BYTES, &reply);
        if (!reply) {
                fprintf(stderr, "bench-client: %s: %s\n", envelope_body_name(req), strerror(-r));
                return r;
        }
        if ((r == -ENOENT || r == -EINVAL) && req->body_case == SPARK__ENVELOPE__BODY_SUBMIT_JOB &&
            req->submit_job->library_hash) {
                envelope_free(reply);
                return -ENOENT; /* the driver wants the object itself */
        }
        if (reply->body_case != expect) {
                fprintf(stderr, "bench-client: %s answered with %s%s%s\n", envelope_body_name(req),
                        envelope_body_name(reply), reply->body_case == SPARK__ENVELOPE__BODY_ERROR ? ": " : "",
                        reply->body_case == SPARK__ENVELOPE__BODY_ERROR ? reply->error->message : "");
                envelope_free(reply);
                return -EBADMSG;
        }
        *ret = reply;
        return 0;
}

/* wait_ms > 0: the driver answers when the job has ended, with its
 * results; *ret_ok then counts the successful ones. */
static int submit(Client *c, int count, int wait_ms, char job_id[static 64], int *ret_ok) {
        Spark__SubmitJob sj = SPARK__SUBMIT_JOB__INIT;
        Envelope env = ENVELOPE_INIT, *reply = NULL;
        char request_id[64];
        int r;

        snprintf(request_id, sizeof(request_id), "bench-%d-%lu", (int) getpid(), c->job_counter++);
        sj.name = (char *) "bench";
        sj.kind = SPARK__TASK_KIND__TASK_FUNCTION;
        if (c->driver_has_library)
                sj.library_hash = c->library_hash;
        else
                sj.library = c->library;
        sj.symbol = (char *) c->symbol;
        sj.count = count;
        sj.arg = c->arg;
        sj.request_id = request_id;
        sj.wait_ms = wait_ms;
        ENVELOPE_SET(&env, SUBMIT_JOB, submit_job, &sj);
        r = call(c, &env, SPARK__ENVELOPE__BODY_SUBMIT_JOB_REPLY, &reply);
        if (r == -ENOENT) {
                /* it does not hold the object (any more): send it */
                sj.library_hash = NULL;
                sj.library = c->library;
                r = call(c, &env, SPARK__ENVELOPE__BODY_SUBMIT_JOB_REPLY, &reply);
        }
        if (r < 0)
                return r;
        c->driver_has_library = true;
        snprintf(job_id, 64, "%s", reply->submit_job_reply->job_id);
        if (ret_ok) {
                *ret_ok = 0;
                for (size_t i = 0; i < reply->submit_job_reply->n_outcomes; i++)
                        *ret_ok += reply->submit_job_reply->outcomes[i]->status == SPARK__TASK_STATUS__TASK_OK;
        }
        envelope_free(reply);
        return 0;
}

static int job_status(Client *c, const char *job_id, Spark__JobState *ret_state, int64_t *ret_elapsed_ms) {
        Spark__JobStatusRequest js = SPARK__JOB_STATUS_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT, *reply = NULL;
        int r;

        js.job_id = (char *) job_id;
        ENVELOPE_SET(&env, JOB_STATUS, job_status, &js);
        r = call(c, &env, SPARK__ENVELOPE__BODY_JOB_INFO, &reply);
        if (r < 0)
                return r;
        *ret_state = reply->job_info->state;
        *ret_elapsed_ms = reply->job_info->elapsed_ms;
        envelope_free(reply);
        return 0;
}

/* Fetches outcomes from *next on; advances *next, counts successes. */
static int fetch(Client *c, const char *job_id, int *next, int max, int *ok) {
        Spark__FetchResults fr = SPARK__FETCH_RESULTS__INIT;
        Envelope env = ENVELOPE_INIT, *reply = NULL;
        int r;

        fr.job_id = (char *) job_id;
        fr.from_index = *next;
        fr.max = max;
        ENVELOPE_SET(&env, FETCH_RESULTS, fetch_results, &fr);
        r = call(c, &env, SPARK__ENVELOPE__BODY_FETCH_RESULTS_REPLY, &reply);
        if (r < 0)
                return r;
        for (size_t i = 0; i < reply->fetch_results_reply->n_outcomes; i++) {
                const Spark__TaskOutcome *o = reply->fetch_results_reply->outcomes[i];
                if (o->index != *next)
                        break;
                *ok += o->status == SPARK__TASK_STATUS__TASK_OK;
                (*next)++;
        }
        envelope_free(reply);
        return 0;
}

static bool job_state_final(Spark__JobState s) {
        return s == SPARK__JOB_STATE__JOB_SUCCEEDED || s == SPARK__JOB_STATE__JOB_FAILED ||
               s == SPARK__JOB_STATE__JOB_CANCELLED;
}

static int run_throughput(Client *c, int count) {
        Spark__JobState state = SPARK__JOB_STATE__JOB_RUNNING;
        int64_t elapsed_ms = 0;
        char job_id[64];
        int next = 0, ok = 0, r;
        uint64_t t0, t1;

        t0 = bench_now_usec();
        r = submit(c, count, 0, job_id, NULL);
        if (r < 0)
                return 1;
        while (!job_state_final(state)) {
                struct timespec ts = { 0, 1000000 };

                nanosleep(&ts, NULL);
                r = job_status(c, job_id, &state, &elapsed_ms);
                if (r < 0)
                        return 1;
        }
        while (next < count) {
                int before = next;

                r = fetch(c, job_id, &next, 100000, &ok);
                if (r < 0)
                        return 1;
                if (next == before)
                        break;
        }
        t1 = bench_now_usec();
        printf("tasks_per_s %.0f\n", (double) count * 1e6 / (double) (t1 - t0));
        printf("elapsed_ms %.1f\n", (double) (t1 - t0) / 1000.0);
        printf("driver_elapsed_ms %" PRIi64 "\n", elapsed_ms);
        printf("ok %d\n", ok);
        if (ok != count)
                fprintf(stderr, "bench-client: %s: %d of %d tasks succeeded\n", job_id, ok, count);
        return ok == count ? 0 : 1;
}

static int run_latency(Client *c, int count) {
        _cleanup_free_ uint64_t *samples = calloc((size_t) count, sizeof(uint64_t));
        int warmup = MAX(count / 20, 5);

        if (!samples)
                return 1;
        for (int i = -warmup; i < count; i++) {
                char job_id[64];
                int next = 0, ok = 0;
                uint64_t t0 = bench_now_usec();

                /* one round trip: the driver answers when the task is done */
                if (submit(c, 1, 10000, job_id, &ok) < 0)
                        return 1;
                next = ok;
                while (next < 1)
                        if (fetch(c, job_id, &next, 1, &ok) < 0)
                                return 1;
                if (ok != 1) {
                        fprintf(stderr, "bench-client: %s: the task failed\n", job_id);
                        return 1;
                }
                if (i >= 0)
                        samples[i] = bench_now_usec() - t0;
        }
        bench_sort_u64(samples, (size_t) count);
        printf("latency_us_p50 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 50));
        printf("latency_us_p99 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 99));
        printf("latency_us_mean %.0f\n", bench_mean_u64(samples, (size_t) count));
        return 0;
}

static int read_file(const char *path, ProtobufCBinaryData *ret) {
        char *data;
        size_t len;
        int r;

        r = read_full_file(path, 0, 0, &data, &len);
        if (r < 0)
                return r;
        if (len == 0) {
                free(data);
                return -ENODATA;
        }
        ret->data = (uint8_t *) data;
        ret->len = len;
        return 0;
}

int main(int argc, char **argv) {
        TlsSettings tls = tls_settings_from_env();
        Client c = {};
        int count, r;

        if (argc != 7 || (!streq(argv[1], "throughput") && !streq(argv[1], "latency")) ||
            (count = atoi(argv[6])) < 1) {
                fprintf(stderr, "usage: bench-client throughput|latency URL LIB.so SYMBOL ARG COUNT\n");
                return 2;
        }
        r = read_file(argv[3], &c.library);
        if (r < 0) {
                fprintf(stderr, "bench-client: cannot read %s: %s\n", argv[3], strerror(-r));
                return 1;
        }
        sha256_hex(c.library.data, c.library.len, c.library_hash);
        c.symbol = argv[4];
        c.arg = (ProtobufCBinaryData) { .len = strlen(argv[5]), .data = (uint8_t *) argv[5] };
        r = rpc_sync_session_new(argv[2], &tls, &c.session);
        if (r < 0) {
                fprintf(stderr, "bench-client: %s: %s\n", argv[2], strerror(-r));
                return 1;
        }
        r = streq(argv[1], "throughput") ? run_throughput(&c, count) : run_latency(&c, count);
        if (r == 0)
                fprintf(stderr, "bench-client: the calls went over %s\n",
                        rpc_sync_session_on_channel(c.session) ? "the driver's task channel" : "nng");
        fflush(stdout);
        free(c.library.data);
        _exit(r); /* no nng_close(): see common/rpc-server.h on nng 1.5.2 */
}
