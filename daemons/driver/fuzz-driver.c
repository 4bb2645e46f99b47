/* libFuzzer target: the driver's request dispatch (driver-requests.c and
 * what it calls: executors, polls, jobs, results) behind the real
 * RpcServer, with the input's bytes sent as raw requests (fuzz-rpc.h).  An
 * input is a conversation of up to 16 requests separated by FUZZ_SEPARATOR,
 * played against a fresh driver (driver_new() from a generated config) that
 * is registered as application FUZZ_APP_ID; its master is an inproc URL
 * nobody listens on.  A parked poll is made to answer by firing its timer.
 *
 * The driver's executor key is the seeds' (fuzz-messages.h), and the seeds'
 * registrations and polls carry their executors' secrets, so that the
 * fuzzer starts past the secret check and learns what a wrong one does.
 *
 * Oracles: every request gets an answer that decodes; one that does not
 * decode gets the decoder's Error; a request answered with an Error leaves
 * the jobs and executors exactly as they were; a registration or poll that
 * is not refused carried the secret of the executor it names. */
#include <inttypes.h>

#include "driver-executors.h"
#include "fuzz-messages.h"
#include "fuzz-rpc.h"
#include "fuzz-util.h"
#include "log.h"
#include "sha256.h"

static sd_event *event;
static FuzzRpc *rpc;
static char config_path[4096];

/* ------------------------------------------------------------- oracles */

static char *state_digest(void *userdata) {
        Driver *d = userdata;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        FUZZ_ASSERT(f);
        fprintf(f, "jobs %zu next %u libraries %zu submissions %zu live %zu\n", d->n_jobs, d->next_job_number,
                hashmap_size(d->libraries), hashmap_size(d->submissions), d->n_live_executors);
        for (Job *job = scheduler_first_job(d->scheduler); job; job = scheduler_next_job(job)) {
                JobCounts c;
                scheduler_job_counts(job, &c);
                fprintf(f, "J %s %d %u: %u ok %u failed %u killed %u running %s\n", scheduler_job_id(job),
                        scheduler_job_state(job), c.tasks, c.succeeded, c.failed, c.killed, c.running,
                        strempty(scheduler_job_reason(job)));
        }
        for (size_t i = 0; i < d->n_executors_allocated; i++) {
                DriverExecutor *ex = d->executors[i];
                if (ex)
                        fprintf(f, "E %d %s %s %d %d %s free %d kills %zu\n", ex->id, ex->host, ex->worker_id,
                                ex->cores, ex->lost, ex->lost_reason,
                                ex->lost ? -1 : scheduler_executor_free_cores(d->scheduler, ex->id), ex->n_kills);
        }
        FUZZ_ASSERT(fclose(f) == 0);
        return text;
}

/* A registration or poll the driver took must have carried its secret. */
static void check_secret(void *userdata, const Envelope *req, const Envelope *reply) {
        const ProtobufCBinaryData *given;
        uint8_t expected[EXECUTOR_SECRET_SIZE];
        Driver *d = userdata;
        int id;

        if (!req || !(reply->body_case == SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR_REPLY ||
                      (reply->body_case == SPARK__ENVELOPE__BODY_POLL_REPLY && !reply->poll_reply->shutdown)))
                return;
        if (req->body_case == SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR) {
                given = &req->register_executor->secret;
                id = req->register_executor->executor_id;
        } else if (req->body_case == SPARK__ENVELOPE__BODY_POLL) {
                given = &req->poll->secret;
                id = req->poll->executor_id;
        } else
                return;
        FUZZ_ASSERT(executor_secret_compute(d->executor_key, d->app_id, id, expected) == 0);
        if (executor_secret_check(expected, given->data, given->len) < 0)
                fuzz_fail("%s as executor %d was taken with a wrong secret (%zu bytes)", envelope_body_name(req), id,
                          given->len);
}

/* ------------------------------------------------------------- seeds */

static const FuzzIds ids = FUZZ_SEED_IDS("tcp://127.0.0.1:7079");

static Envelope *msg(int body) {
        return fuzz_seed_message(body, &ids);
}

static Envelope *submit_function_job(int count) {
        Envelope *env = msg(SPARK__ENVELOPE__BODY_SUBMIT_JOB);
        Spark__SubmitJob *sj = env->submit_job;

        sj->kind = SPARK__TASK_KIND__TASK_FUNCTION;
        sj->count = count;
        fuzz_repeated_clear(&sj->base, "inputs");
        return env;
}

static Envelope *poll_with_results(int executor_id, const char *job_id, int n, Spark__TaskStatus status) {
        Envelope *env = msg(SPARK__ENVELOPE__BODY_POLL);
        Spark__Poll *p = env->poll;

        p->executor_id = executor_id;
        if (n == 0) {
                fuzz_repeated_clear(&p->base, "results");
                return env;
        }
        p->results = realloc(p->results, (size_t) n * sizeof(*p->results));
        FUZZ_ASSERT(p->results);
        for (int i = 1; i < n; i++) {
                Envelope *other = msg(SPARK__ENVELOPE__BODY_POLL);
                p->results[i] = other->poll->results[0];
                other->poll->n_results = 0;
                envelope_free(other);
        }
        p->n_results = (size_t) n;
        for (int i = 0; i < n; i++) {
                free(p->results[i]->job_id);
                p->results[i]->job_id = strdup(job_id);
                p->results[i]->index = i;
                p->results[i]->status = status;
        }
        return env;
}

static void write_seeds(const char *dir) {
        static const int bodies[] = {
                SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR, SPARK__ENVELOPE__BODY_POLL,
                SPARK__ENVELOPE__BODY_FETCH_LIBRARY,     SPARK__ENVELOPE__BODY_SUBMIT_JOB,
                SPARK__ENVELOPE__BODY_JOB_STATUS,        SPARK__ENVELOPE__BODY_LIST_JOBS,
                SPARK__ENVELOPE__BODY_FETCH_RESULTS,     SPARK__ENVELOPE__BODY_CANCEL_JOB,
                SPARK__ENVELOPE__BODY_REGISTER_WORKER,
        };
        char hash[SHA256_HEX_SIZE];
        Envelope *m[FUZZ_RPC_MAX_REQUESTS];

        fuzz_seed_each_body(dir, bodies, ELEMENTSOF(bodies), &ids);

        /* an executor, a function job of 3 tasks run to the end, its results */
        m[0] = msg(SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR);
        m[1] = submit_function_job(3);
        m[2] = poll_with_results(1, "job-0001", 0, 0);
        m[3] = poll_with_results(1, "job-0001", 2, SPARK__TASK_STATUS__TASK_OK);
        m[4] = msg(SPARK__ENVELOPE__BODY_JOB_STATUS);
        m[5] = msg(SPARK__ENVELOPE__BODY_FETCH_LIBRARY);
        free(m[5]->fetch_library->hash);
        m[5]->fetch_library->hash = strdup(sha256_hex("4", 1, hash));
        m[6] = poll_with_results(1, "job-0001", 3, SPARK__TASK_STATUS__TASK_OK);
        m[7] = msg(SPARK__ENVELOPE__BODY_FETCH_RESULTS);
        m[8] = msg(SPARK__ENVELOPE__BODY_LIST_JOBS);
        fuzz_seed_conversation(dir, "conversation-function-job", m, 9);

        /* a command job whose tasks fail and are retried, then cancelled */
        m[0] = msg(SPARK__ENVELOPE__BODY_SUBMIT_JOB);
        m[0]->submit_job->count = 0;
        m[0]->submit_job->kind = SPARK__TASK_KIND__TASK_COMMAND;
        m[1] = msg(SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR);
        m[2] = poll_with_results(1, "job-0001", 0, 0);
        m[3] = poll_with_results(1, "job-0001", 1, SPARK__TASK_STATUS__TASK_FAILED);
        m[4] = poll_with_results(1, "job-0001", 0, 0);
        m[5] = msg(SPARK__ENVELOPE__BODY_CANCEL_JOB);
        m[6] = poll_with_results(1, "job-0001", 1, SPARK__TASK_STATUS__TASK_OK);
        m[7] = msg(SPARK__ENVELOPE__BODY_FETCH_RESULTS);
        fuzz_seed_conversation(dir, "conversation-command-job", m, 8);

        /* two executors, preferred hosts, one executor registers twice */
        m[0] = msg(SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR);
        m[1] = msg(SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR);
        m[1]->register_executor->executor_id = 2;
        free(m[1]->register_executor->host);
        m[1]->register_executor->host = strdup("host-2");
        m[2] = submit_function_job(5);
        m[3] = poll_with_results(2, "job-0001", 0, 0);
        m[4] = poll_with_results(1, "job-0001", 0, 0);
        m[5] = msg(SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR);
        m[5]->register_executor->pid = 7;
        m[6] = poll_with_results(1, "job-0001", 2, SPARK__TASK_STATUS__TASK_OK);
        m[7] = msg(SPARK__ENVELOPE__BODY_FETCH_RESULTS);
        fuzz_seed_conversation(dir, "conversation-two-executors", m, 8);
}

/* ------------------------------------------------------------- target */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        char text[2048];
        (void) argc, (void) argv;

        fuzz_write_seeds_if_asked(write_seeds);
        fuzz_quiet_logs();
        snprintf(text, sizeof(text),
                 "cluster: { master = \"ipc://%1$s/master.sock\"; master_events = \"ipc://%1$s/master-events.sock\"; };\n"
                 "driver: { app_name = \"fuzz\"; listen = \"ipc://%1$s/driver.sock\";\n"
                 "          events_listen = \"ipc://%1$s/driver-events.sock\"; cores_per_executor = 2;\n"
                 "          task_max_failures = 2; locality_wait_ms = 100; max_result_mb = 4; };\n",
                 fuzz_tmpdir());
        snprintf(config_path, sizeof(config_path), "%s", fuzz_tmp_path("driver.conf"));
        FUZZ_ASSERT(fuzz_write_file(config_path, text, strlen(text)) == 0);

        /* driver_new() takes the thread's default loop: the same one */
        FUZZ_ASSERT(sd_event_default(&event) >= 0);
        FUZZ_ASSERT(fuzz_rpc_new(event, "inproc://spark-fuzz-driver", DRIVER_MAX_REQUEST_BYTES, &rpc) >= 0);
        return 0;
}

/* A parked poll: fire its timer now, as the poll interval would. */
static void kick(void *userdata) {
        Driver *d = userdata;

        for (size_t i = 0; i < d->n_executors_allocated; i++) {
                DriverExecutor *ex = d->executors[i];
                if (ex && ex->parked)
                        (void) sd_event_source_set_time(ex->park_timer, 1);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Driver *d = NULL;
        FuzzRpcTarget target = {
                .handler = driver_handle_request,
                .max_request_bytes = DRIVER_MAX_REQUEST_BYTES,
                .digest = state_digest,
                .kick = kick,
                .check = check_secret,
        };

        FUZZ_ASSERT(driver_new(config_path, &d) >= 0);
        FUZZ_ASSERT(rpc_client_new(d->event, "inproc://spark-fuzz-no-master", NULL, &d->master) >= 0);
        FUZZ_ASSERT(driver_start_heartbeat_checks(d) >= 0);
        snprintf(d->app_id, sizeof(d->app_id), "%s", FUZZ_APP_ID);
        fuzz_executor_key(d->executor_key);
        d->registered = true;
        /* as the master's events would: executors 1-4 started on the seeds'
         * worker, so that registrations reach the paths past the check */
        for (int id = 1; id <= 4; id++)
                FUZZ_ASSERT(driver_announce_executor(d, id, ids.worker_id) == 0);

        rpc_server_set_pipe_handler(fuzz_rpc_server(rpc), driver_on_pipe, d);
        target.userdata = d;
        fuzz_rpc_play(rpc, data, size, &target);
        rpc_server_set_pipe_handler(fuzz_rpc_server(rpc), NULL, NULL);
        driver_free(d);
        return 0;
}
