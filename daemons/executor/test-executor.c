/* The real spark-executor binary against a fake driver written here on
 * rpc-server (nng rep0 on an sd-event loop, parked requests and all):
 * registration (and its refusal), function and command tasks handed out in
 * batches with every result checked to arrive exactly once, library
 * problems, kills of queued and running tasks, shutdown, SIGTERM, a driver
 * that goes silent (fate sharing), and the throughput of empty tasks. */
#include <check.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "alloc-util.h"
#include "check-run.h"
#include "codec.h"
#include "daemon.h"
#include "executor.h"
#include "fileio.h"
#include "rpc-server.h"
#include "sha256.h"
#include "test-fixtures.h"
#include "test-helpers.h"
#include "tls-resume.h"

#define APP "app-20261129172233-0001"
#define WORKER "worker-20261129172233-testhost-7081"
#define MAX_JOBS 16
#define SEC_US 1000000ULL

static uint64_t now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SEC_US + (uint64_t) ts.tv_nsec / 1000u;
}

/* ------------------------------------------------------- the fake driver */

typedef struct FakeTask {
        Spark__TaskLaunch launch;  /* strings owned by the job */
        unsigned results;          /* how many results came back */
        Spark__TaskStatus status;
        int exit_code;
        char *output;              /* NUL-terminated copy */
        size_t output_len;
        char *error;
} FakeTask;

typedef struct FakeJob {
        char id[32];
        size_t n;
        FakeTask *tasks;
} FakeJob;

typedef struct Library {
        char hash[SHA256_HEX_SIZE];
        void *data;   /* what FetchLibrary answers (maybe not matching the hash) */
        size_t len;
        unsigned fetches;
} Library;

typedef struct Driver {
        sd_event *event;
        RpcServer *server;
        char url[128];

        /* What we tell the executor. */
        int heartbeat_ms, prefetch, cores;
        int64_t max_result_bytes;
        bool refuse;          /* answer RegisterExecutor with an Error */
        bool refuse_on_channel; /* ... when it comes on the task channel */
        unsigned not_ready;   /* answer this many registrations with -EAGAIN */
        unsigned registrations;
        bool silent;          /* park polls forever */
        bool durable;         /* say it keeps a state_dir: the executor waits for it */
        unsigned swallow;     /* never answer this many requests, as if they were lost */
        unsigned polls_after_swallow;
        bool swallow_first_pipe;  /* never answer a request of the first connection seen */
        uint32_t swallowed_pipe;
        unsigned swallowed;

        Library libs[4];
        size_t n_libs;

        FakeJob jobs[MAX_JOBS];
        size_t n_jobs;
        FakeTask **queue;     /* to hand out, in order */
        size_t n_queue, queue_next, queue_cap;
        size_t outstanding;   /* handed out, no result yet */
        size_t batch_max;

        Spark__TaskKill kills[8];
        size_t n_kills;
        bool shutdown;

        RpcRequest *parked;
        sd_event_source *park_timer;

        /* The task channel (tcp:// only): its port, and the polls that came
         * on it (pipe ids above 2^31) and over nng.  With tls_ca, on
         * tls+tcp:// with the test certificates of tests/data/tls, the
         * executor given tls_ca as its CA credential. */
        bool task_channel;
        const char *tls_ca;
        const TlsSettings *channel_tls; /* the channel's own certificate, if not the endpoint's */
        uint16_t channel_port;
        unsigned polls_on_channel, polls_on_nng;
        /* Given to the executor as --driver-channel-port (0: none), as a
         * worker does with the port the driver told the master; and the
         * registrations that came on the channel. */
        uint16_t pass_channel_port;
        unsigned registrations_on_channel;

        bool registered;
        pid_t executor_pid;
        uint64_t last_seq;
        unsigned polls, polls_in_flight, max_polls_in_flight, double_parked, seq_regressions;
        size_t results_total;
        uint64_t first_launch_us, last_result_us, last_reply_us;
} Driver;

static char tmpdir[64], workdir[128], lib_path[PATH_MAX];
static Driver drv;

static FakeJob *driver_add_job(Driver *d, const char *id, size_t n) {
        FakeJob *j = &d->jobs[d->n_jobs++];

        ck_assert_uint_le(d->n_jobs, MAX_JOBS);
        snprintf(j->id, sizeof(j->id), "%s", id);
        j->n = n;
        j->tasks = calloc(n, sizeof(FakeTask));
        for (size_t i = 0; i < n; i++) {
                Spark__TaskLaunch *l = &j->tasks[i].launch;

                *l = (Spark__TaskLaunch) SPARK__TASK_LAUNCH__INIT;
                l->job_id = j->id;
                l->index = (int32_t) i;
                l->attempt = 1;
        }
        return j;
}

static void driver_queue_job(Driver *d, FakeJob *j) {
        ck_assert_int_eq(GREEDY_REALLOC(d->queue, d->queue_cap, d->n_queue + j->n), 0);
        for (size_t i = 0; i < j->n; i++)
                d->queue[d->n_queue++] = &j->tasks[i];
}

static void set_function(FakeTask *t, const char *hash, const char *symbol, const char *input) {
        t->launch.kind = SPARK__TASK_KIND__TASK_FUNCTION;
        t->launch.library_hash = strdup(hash);
        t->launch.symbol = strdup(symbol);
        t->launch.input.data = (uint8_t *) strdup(input);
        t->launch.input.len = strlen(input);
}

static void set_command(FakeTask *t, const char *command) {
        t->launch.kind = SPARK__TASK_KIND__TASK_COMMAND;
        t->launch.command = strdup(command);
}

static FakeTask *driver_find_task(Driver *d, const char *job, int32_t index) {
        for (size_t i = 0; i < d->n_jobs; i++)
                if (streq(d->jobs[i].id, job) && index >= 0 && (size_t) index < d->jobs[i].n)
                        return &d->jobs[i].tasks[index];
        return NULL;
}

static void driver_record_result(Driver *d, const Spark__TaskResult *r) {
        FakeTask *t = driver_find_task(d, r->job_id, r->index);

        ck_assert_msg(t, "result for unknown task %s/%d", r->job_id, r->index);
        ck_assert_int_eq(r->attempt, t->launch.attempt);
        t->results++;
        t->status = r->status;
        t->exit_code = r->exit_code;
        free(t->output);
        t->output = malloc(r->output.len + 1);
        if (r->output.len > 0)
                memcpy(t->output, r->output.data, r->output.len);
        t->output[r->output.len] = '\0';
        t->output_len = r->output.len;
        free(t->error);
        t->error = strdup(r->error ? r->error : "");
        d->results_total++;
        if (d->outstanding > 0)
                d->outstanding--;
        d->last_result_us = now_us();
}

static int reply_poll(Driver *d, RpcRequest *req, size_t give) {
        Spark__PollReply pr = SPARK__POLL_REPLY__INIT;
        Spark__TaskLaunch **tasks = NULL;
        Spark__TaskKill *kills[8];
        Envelope env = ENVELOPE_INIT;
        int r;

        if (d->shutdown) {
                pr.shutdown = true;
                pr.reason = (char *) "test over";
        } else if (give > 0) {
                tasks = calloc(give, sizeof(*tasks));
                for (size_t i = 0; i < give; i++)
                        tasks[i] = &d->queue[d->queue_next++]->launch;
                pr.tasks = tasks;
                pr.n_tasks = give;
                d->outstanding += give;
                if (d->first_launch_us == 0)
                        d->first_launch_us = now_us();
        }
        if (!d->shutdown && d->n_kills > 0) {
                for (size_t i = 0; i < d->n_kills; i++)
                        kills[i] = &d->kills[i];
                pr.kills = kills;
                pr.n_kills = d->n_kills;
                d->n_kills = 0;
        }
        ENVELOPE_SET(&env, POLL_REPLY, poll_reply, &pr);
        r = rpc_request_reply_envelope(req, &env);
        free(tasks);
        d->polls_in_flight--;
        d->last_reply_us = now_us();
        return r;
}

/* What a poll may get now: bounded by what it says is free, by our own
 * count of what it holds, and by the batch size. */
static size_t driver_can_give(Driver *d, int32_t free_slots) {
        size_t cap = (size_t) (d->cores + d->prefetch), give;

        if (d->outstanding >= cap || free_slots <= 0)
                return 0;
        give = MIN(cap - d->outstanding, (size_t) free_slots);
        give = MIN(give, d->n_queue - d->queue_next);
        return MIN(give, d->batch_max);
}

static int on_park_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Driver *d = userdata;

        (void) s;
        (void) usec;
        if (d->parked && !d->silent) {
                RpcRequest *req = TAKE_PTR(d->parked);

                ck_assert_int_eq(reply_poll(d, req, 0), 0);
        }
        return 0;
}

/* Something changed (tasks, kills, shutdown): answer a parked poll now. */
static void driver_kick(Driver *d) {
        RpcRequest *req;

        if (!d->parked || d->silent)
                return;
        req = TAKE_PTR(d->parked);
        ck_assert_int_eq(reply_poll(d, req, driver_can_give(d, INT32_MAX)), 0);
}

static void on_abandon(RpcRequest *req, void *userdata) {
        Driver *d = userdata;

        if (d->parked == req)
                d->parked = NULL;
}

static int handle_poll(Driver *d, RpcRequest *req, const Spark__Poll *p) {
        size_t give;

        if (!d->registered && d->durable) {
                /* restarted: it does not know the executor yet */
                Spark__PollReply pr = SPARK__POLL_REPLY__INIT;
                Envelope env = ENVELOPE_INIT;

                pr.reregister = true;
                ENVELOPE_SET(&env, POLL_REPLY, poll_reply, &pr);
                return rpc_request_reply_envelope(req, &env);
        }
        ck_assert(d->registered);
        ck_assert_str_eq(p->app_id, APP);
        ck_assert_int_eq(p->executor_id, 1);
        /* Two polls may be in flight, on two contexts: one may overtake the
         * other (or be resent after a slow answer), nothing older. */
        if (p->seq == 0 || p->seq + 1 < d->last_seq)
                d->seq_regressions++;
        d->last_seq = MAX(d->last_seq, p->seq);
        d->polls++;
        if (rpc_request_pipe_id(req) >= UINT32_C(0x80000000))
                d->polls_on_channel++;
        else
                d->polls_on_nng++;
        d->polls_in_flight++;
        d->max_polls_in_flight = MAX(d->max_polls_in_flight, d->polls_in_flight);
        ck_assert_int_ge(p->free_slots, 0);
        ck_assert_int_le(p->free_slots, d->cores + d->prefetch);

        for (size_t i = 0; i < p->n_results; i++)
                driver_record_result(d, p->results[i]);

        if (d->silent) {
                rpc_request_set_abandon_handler(req, on_abandon, d);
                return 0; /* never answered */
        }

        give = driver_can_give(d, p->free_slots);
        if (give > 0 || p->n_results > 0 || d->n_kills > 0 || d->shutdown)
                return reply_poll(d, req, give);

        /* Park it until there is work or heartbeat_ms passes.  The executor
         * keeps at most one poll without results out. */
        if (d->parked) {
                d->double_parked++;
                ck_assert_int_eq(reply_poll(d, TAKE_PTR(d->parked), 0), 0);
        }
        d->parked = req;
        rpc_request_set_abandon_handler(req, on_abandon, d);
        ck_assert_int_ge(sd_event_source_set_time_relative(d->park_timer, (uint64_t) d->heartbeat_ms * 1000), 0);
        ck_assert_int_ge(sd_event_source_set_enabled(d->park_timer, SD_EVENT_ONESHOT), 0);
        return 0;
}

static int handle_register(Driver *d, RpcRequest *req, const Spark__RegisterExecutor *re) {
        Spark__RegisterExecutorReply rr = SPARK__REGISTER_EXECUTOR_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;

        ck_assert_str_eq(re->app_id, APP);
        ck_assert_int_eq(re->executor_id, 1);
        ck_assert_int_eq(re->cores, d->cores);
        ck_assert_str_eq(re->unit, "spark-executor-" APP "-1.service");
        ck_assert_str_eq(re->worker_id, WORKER);
        ck_assert_int_eq(re->pid, d->executor_pid);
        ck_assert_str_ne(re->host, "");
        d->registrations++;
        if (rpc_request_pipe_id(req) >= UINT32_C(0x80000000)) {
                d->registrations_on_channel++;
                if (d->refuse_on_channel)
                        return rpc_request_reply_error(req, -EPERM, "executor 1 is not an executor of this driver");
        }
        if (d->not_ready > 0) {
                d->not_ready--;
                return rpc_request_reply_error(req, -EAGAIN, "application not registered with the master yet");
        }
        if (d->refuse)
                return rpc_request_reply_error(req, -EEXIST, "executor 1 of %s is already registered", APP);

        d->registered = true;
        rr.heartbeat_ms = d->heartbeat_ms;
        rr.prefetch = d->prefetch;
        rr.max_result_bytes = d->max_result_bytes;
        rr.durable_driver = d->durable;
        rr.task_channel_port = d->channel_port;
        ENVELOPE_SET(&env, REGISTER_EXECUTOR_REPLY, register_executor_reply, &rr);
        d->last_reply_us = now_us();
        return rpc_request_reply_envelope(req, &env);
}

static int handle_fetch(Driver *d, RpcRequest *req, const Spark__FetchLibrary *fl) {
        Spark__FetchLibraryReply fr = SPARK__FETCH_LIBRARY_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;

        for (size_t i = 0; i < d->n_libs; i++)
                if (streq(d->libs[i].hash, fl->hash)) {
                        d->libs[i].fetches++;
                        fr.data.data = d->libs[i].data;
                        fr.data.len = d->libs[i].len;
                        ENVELOPE_SET(&env, FETCH_LIBRARY_REPLY, fetch_library_reply, &fr);
                        return rpc_request_reply_envelope(req, &env);
                }
        return rpc_request_reply_error(req, -ENOENT, "no library %s here", fl->hash);
}

static int driver_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Driver *d = userdata;

        (void) s;
        if (d->swallow > 0) {
                d->swallow--;
                return 0; /* held until the server goes, never answered */
        }
        if (d->swallow_first_pipe) {
                if (d->swallowed_pipe == 0)
                        d->swallowed_pipe = rpc_request_pipe_id(req);
                if (rpc_request_pipe_id(req) == d->swallowed_pipe) {
                        d->swallowed++;
                        return 0;
                }
        }
        if (env->body_case == SPARK__ENVELOPE__BODY_POLL && d->durable)
                d->polls_after_swallow++;
        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR:
                return handle_register(d, req, env->register_executor);
        case SPARK__ENVELOPE__BODY_POLL:
                return handle_poll(d, req, env->poll);
        case SPARK__ENVELOPE__BODY_FETCH_LIBRARY:
                return handle_fetch(d, req, env->fetch_library);
        default:
                ck_abort_msg("unexpected %s", envelope_body_name(env));
                return -EBADMSG;
        }
}

/* The fake driver's server; with task_channel on tcp:// and its task
 * channel (a new port each time). */
static const TlsSettings driver_tls = { "tests/data/tls/ca.pem", "tests/data/tls/host.pem",
                                        "tests/data/tls/host.key" };

static void driver_listen(Driver *d) {
        RpcServerConfig cfg = { .n_contexts = 8,
                                .max_request_bytes = 64u * 1024u * 1024u,
                                .tls = &driver_tls,
                                .tls_no_client_cert = true };

        ck_assert_int_eq(rpc_server_new_envelope(d->event, d->url, &cfg, driver_handler, d, &d->server), 0);
        if (d->task_channel)
                ck_assert_int_eq(rpc_server_listen_stream(d->server, d->channel_tls ?: &driver_tls,
                                                          &d->channel_port, NULL),
                                 0);
}

static void driver_start(Driver *d, int cores, int heartbeat_ms, int prefetch) {
        d->cores = cores;
        d->heartbeat_ms = heartbeat_ms;
        d->prefetch = prefetch;
        d->max_result_bytes = 1024 * 1024;
        d->batch_max = SIZE_MAX;
        if (d->task_channel)
                snprintf(d->url, sizeof(d->url), "%s://127.0.0.1:%u", d->tls_ca ? "tls+tcp" : "tcp",
                         test_free_port());
        else
                snprintf(d->url, sizeof(d->url), "ipc://%s/driver.sock", tmpdir);
        ck_assert_int_ge(sd_event_new(&d->event), 0);
        driver_listen(d);
        ck_assert_int_ge(sd_event_add_time(d->event, &d->park_timer, CLOCK_MONOTONIC, UINT64_MAX, 0,
                                           on_park_timeout, d),
                         0);
}

static void driver_add_library(Driver *d, const char *hash, const void *data, size_t len) {
        Library *l = &d->libs[d->n_libs++];

        snprintf(l->hash, sizeof(l->hash), "%s", hash);
        l->data = malloc(len);
        memcpy(l->data, data, len);
        l->len = len;
}

static void driver_kill(Driver *d, const char *job, int32_t index) {
        Spark__TaskKill *k = &d->kills[d->n_kills++];

        *k = (Spark__TaskKill) SPARK__TASK_KILL__INIT;
        k->job_id = (char *) job;
        k->index = index;
        driver_kick(d);
}

static void free_string(char *s) {
        if (s != protobuf_c_empty_string)
                free(s);
}

static void driver_stop(Driver *d) {
        d->server = rpc_server_free(d->server);
        d->park_timer = sd_event_source_disable_unref(d->park_timer);
        d->event = sd_event_unref(d->event);
        for (size_t i = 0; i < d->n_jobs; i++) {
                for (size_t k = 0; k < d->jobs[i].n; k++) {
                        FakeTask *t = &d->jobs[i].tasks[k];

                        free_string(t->launch.library_hash);
                        free_string(t->launch.symbol);
                        free_string(t->launch.command);
                        free(t->launch.input.data);
                        free(t->output);
                        free(t->error);
                }
                free(d->jobs[i].tasks);
        }
        for (size_t i = 0; i < d->n_libs; i++)
                free(d->libs[i].data);
        free(d->queue);
}

/* ------------------------------------------------------- the executor */

static pid_t start_executor(Driver *d, int cores) {
        char build[PATH_MAX], binary[PATH_MAX + 32], cores_s[16], port_s[16];
        pid_t pid;

        ck_assert_int_eq(test_build_dir(build, sizeof(build)), 0);
        snprintf(binary, sizeof(binary), "%s/spark-executor", build);
        ck_assert_msg(access(binary, X_OK) == 0, "%s missing: build spark-executor first", binary);
        snprintf(cores_s, sizeof(cores_s), "%d", cores);
        snprintf(port_s, sizeof(port_s), "%u", (unsigned) d->pass_channel_port);
        {
                char *argv[] = { binary, (char *) "--driver", d->url, (char *) "--app-id", (char *) APP,
                                 (char *) "--executor-id", (char *) "1", (char *) "--cores", cores_s,
                                 (char *) "--worker-id", (char *) WORKER, (char *) "--work-dir", workdir,
                                 d->pass_channel_port > 0 ? (char *) "--driver-channel-port" : NULL, port_s, NULL };

                char creds[PATH_MAX], path[PATH_MAX + 32], *pem = NULL;
                size_t pem_size;
                int fd;

                /* over TLS the executor's credentials, as the worker gives
                 * them: a secret (the fake driver checks none) and the CA */
                if (d->tls_ca) {
                        snprintf(creds, sizeof(creds), "%s/credentials", tmpdir);
                        (void) mkdir(creds, 0700);
                        snprintf(path, sizeof(path), "%s/" EXECUTOR_SECRET_CREDENTIAL, creds);
                        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                        ck_assert_int_eq(write_full(fd, "0123456789abcdef0123456789abcdef", EXECUTOR_SECRET_SIZE), 0);
                        close(fd);
                        ck_assert_int_eq(read_full_file(d->tls_ca, 0, 1 << 20, &pem, &pem_size), 0);
                        snprintf(path, sizeof(path), "%s/" EXECUTOR_CA_CREDENTIAL, creds);
                        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                        ck_assert_int_eq(write_full(fd, pem, pem_size), 0);
                        close(fd);
                        free(pem);
                        ck_assert_int_eq(setenv("CREDENTIALS_DIRECTORY", creds, 1), 0);
                }
                ck_assert_int_eq(posix_spawn(&pid, binary, NULL, NULL, argv, environ), 0);
                (void) unsetenv("CREDENTIALS_DIRECTORY");
        }
        d->executor_pid = pid;
        return pid;
}

typedef bool (*Predicate)(Driver *d);

/* Runs the fake driver's loop until pred holds or timeout; never hangs. */
static bool run_until(Driver *d, Predicate pred, uint64_t timeout_us) {
        uint64_t deadline = now_us() + timeout_us;

        while (!pred(d)) {
                if (now_us() >= deadline)
                        return false;
                ck_assert_int_ge(sd_event_run(d->event, 20 * 1000), 0);
        }
        return true;
}

static int exit_status = -1;

static bool executor_exited(Driver *d) {
        int status;

        if (waitpid(d->executor_pid, &status, WNOHANG) != d->executor_pid)
                return false;
        exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return true;
}

static bool all_results_in(Driver *d) {
        return d->queue_next == d->n_queue && d->outstanding == 0 && !executor_exited(d);
}

static bool registered(Driver *d) {
        return d->registered;
}

static void setup(void) {
        char lib_dir[PATH_MAX];

        ck_assert_int_eq(test_mkdtemp(tmpdir, sizeof(tmpdir), "test-executor"), 0);
        snprintf(workdir, sizeof(workdir), "%s/work", tmpdir);
        ck_assert_int_eq(mkdir(workdir, 0700), 0);
        snprintf(lib_dir, sizeof(lib_dir), "%s", tmpdir);
        ck_assert_msg(test_task_library("spark-test-tasks", lib_dir, lib_path, sizeof(lib_path)) == 0,
                      "cannot build the test task library");
        memset(&drv, 0, sizeof(drv));
        exit_status = -1;
        /* Orphans (a killed executor's commands) come to us, so we can check
         * them. */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void teardown(void) {
        if (drv.executor_pid > 0 && exit_status < 0) {
                (void) kill(drv.executor_pid, SIGKILL);
                (void) waitpid(drv.executor_pid, NULL, 0);
        }
        driver_stop(&drv);
        test_rm_rf(tmpdir);
}

static void load_good_library(Driver *d, char hash[static SHA256_HEX_SIZE]) {
        void *data = NULL;
        size_t len = 0;

        ck_assert_int_eq(test_read_file(lib_path, &data, &len), 0);
        sha256_hex(data, len, hash);
        driver_add_library(d, hash, data, len);
        free(data);
}

/* --------------------------------------------------------------- tests */

static bool kill_results_in(Driver *d) {
        FakeJob *j = &d->jobs[d->n_jobs - 1];

        for (size_t i = 0; i < j->n; i++)
                if (j->tasks[i].results == 0)
                        return false;
        return true;
}

START_TEST(test_tasks_kills_and_shutdown) {
        char good[SHA256_HEX_SIZE], wrong[SHA256_HEX_SIZE], missing[SHA256_HEX_SIZE], expected[512];
        FakeJob *jf, *jc, *jx, *jk;
        uint64_t t0;

        driver_start(&drv, 2, 200, 8);
        load_good_library(&drv, good);
        /* A library whose bytes do not match the hash the driver gives. */
        sha256_hex("something else", 14, wrong);
        driver_add_library(&drv, wrong, drv.libs[0].data, drv.libs[0].len);
        sha256_hex("nobody has this", 15, missing);
        drv.batch_max = 5; /* many small batches */

        jf = driver_add_job(&drv, "job-fn", 1000);
        for (size_t i = 0; i < jf->n; i++) {
                char in[32];

                snprintf(in, sizeof(in), "n%zu", i);
                set_function(&jf->tasks[i], good, "describe", in);
        }
        jc = driver_add_job(&drv, "job-cmd", 20);
        for (size_t i = 0; i < jc->n; i++) {
                char cmd[128];

                snprintf(cmd, sizeof(cmd), "echo c%zu; echo e%zu >&2; exit %zu", i, i, i % 3);
                set_command(&jc->tasks[i], cmd);
        }
        jx = driver_add_job(&drv, "job-bad", 6);
        set_function(&jx->tasks[0], good, "fail", "why");
        set_function(&jx->tasks[1], good, "nope", "");
        set_function(&jx->tasks[2], wrong, "echo", "");
        set_function(&jx->tasks[3], wrong, "echo", "");
        set_function(&jx->tasks[4], missing, "echo", "");
        set_function(&jx->tasks[5], good, "big", "2000000"); /* > max_result_bytes */
        driver_queue_job(&drv, jf);
        driver_queue_job(&drv, jc);
        driver_queue_job(&drv, jx);

        start_executor(&drv, 2);
        ck_assert_msg(run_until(&drv, all_results_in, 60 * SEC_US), "results missing: %zu of %zu",
                      drv.results_total, drv.n_queue);

        for (size_t i = 0; i < jf->n; i++) {
                FakeTask *t = &jf->tasks[i];

                snprintf(expected, sizeof(expected), "index=%zu attempt=1 input=n%zu", i, i);
                ck_assert_uint_eq(t->results, 1);
                ck_assert_int_eq(t->status, SPARK__TASK_STATUS__TASK_OK);
                ck_assert_str_eq(t->output, expected);
        }
        for (size_t i = 0; i < jc->n; i++) {
                FakeTask *t = &jc->tasks[i];

                snprintf(expected, sizeof(expected), "c%zu\n", i);
                ck_assert_uint_eq(t->results, 1);
                ck_assert_str_eq(t->output, i % 3 == 0 ? expected : "");
                ck_assert_int_eq(t->exit_code, (int) (i % 3));
                ck_assert_int_eq(t->status, i % 3 == 0 ? SPARK__TASK_STATUS__TASK_OK : SPARK__TASK_STATUS__TASK_FAILED);
                snprintf(expected, sizeof(expected), "e%zu\n", i);
                ck_assert_str_eq(t->error, i % 3 == 0 ? "" : expected);
        }
        for (size_t i = 0; i < jx->n; i++) {
                ck_assert_uint_eq(jx->tasks[i].results, 1);
                ck_assert_int_eq(jx->tasks[i].status, SPARK__TASK_STATUS__TASK_FAILED);
        }
        ck_assert_str_eq(jx->tasks[0].error, "asked to fail: why");
        ck_assert_int_eq(jx->tasks[0].exit_code, 3);
        snprintf(expected, sizeof(expected), "symbol 'nope' not found in library %s", good);
        ck_assert_str_eq(jx->tasks[1].error, expected);
        ck_assert_ptr_nonnull(strstr(jx->tasks[2].error, "library hash mismatch"));
        ck_assert_ptr_nonnull(strstr(jx->tasks[3].error, "library hash mismatch"));
        snprintf(expected, sizeof(expected), "driver cannot send library %s: no library %s here", missing, missing);
        ck_assert_str_eq(jx->tasks[4].error, expected);
        ck_assert_str_eq(jx->tasks[5].error, "result of 2000000 bytes exceeds max_result_bytes (1048576)");
        /* Each library fetched once; the mismatch is remembered. */
        ck_assert_uint_eq(drv.libs[0].fetches, 1);
        ck_assert_uint_eq(drv.libs[1].fetches, 1);

        /* Kills: with 2 cores the function and the first command run, the
         * rest waits in the queue (prefetch). */
        jk = driver_add_job(&drv, "job-kill", 5);
        set_function(&jk->tasks[0], good, "sleep_ms", "700");
        for (size_t i = 1; i < jk->n; i++)
                set_command(&jk->tasks[i], "sleep 30");
        driver_queue_job(&drv, jk);
        drv.batch_max = SIZE_MAX;
        driver_kick(&drv);
        t0 = now_us();
        while (now_us() - t0 < 300 * 1000)
                ck_assert_int_ge(sd_event_run(drv.event, 20 * 1000), 0);
        ck_assert_uint_eq(drv.queue_next, drv.n_queue);
        driver_kill(&drv, "job-kill", -1);
        ck_assert(run_until(&drv, kill_results_in, 10 * SEC_US));
        for (size_t i = 0; i < jk->n; i++) {
                ck_assert_uint_eq(jk->tasks[i].results, 1);
                ck_assert_int_eq(jk->tasks[i].status, SPARK__TASK_STATUS__TASK_KILLED);
                ck_assert_uint_eq(jk->tasks[i].output_len, 0);
        }
        /* Nobody waited for "sleep 30"; the function ran to its end. */
        ck_assert_uint_lt(now_us() - t0, 5 * SEC_US);
        ck_assert_uint_ge(now_us() - t0, 600 * 1000);

        ck_assert_uint_le(drv.max_polls_in_flight, 2);
        ck_assert_uint_eq(drv.double_parked, 0);
        ck_assert_uint_eq(drv.seq_regressions, 0);

        /* Shutdown through the parked poll. */
        drv.shutdown = true;
        driver_kick(&drv);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
}
END_TEST

START_TEST(test_driver_goes_silent) {
        uint64_t silent_since, elapsed;

        driver_start(&drv, 1, 200, 0);
        start_executor(&drv, 1);
        ck_assert(run_until(&drv, registered, 10 * SEC_US));
        /* A few heartbeats, then nothing. */
        for (uint64_t t0 = now_us(); now_us() - t0 < 500 * 1000;)
                ck_assert_int_ge(sd_event_run(drv.event, 20 * 1000), 0);
        ck_assert_uint_ge(drv.polls, 2);
        drv.silent = true;
        silent_since = drv.last_reply_us;
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        elapsed = now_us() - silent_since;
        /* a status of its own: the master then checks on the driver */
        ck_assert_int_eq(exit_status, SPARK_EXIT_DRIVER_UNREACHABLE);
        /* 3 heartbeats of 200 ms, and some slack for a loaded machine. */
        ck_assert_uint_ge(elapsed, 550 * 1000);
        ck_assert_uint_lt(elapsed, 2 * SEC_US);
        fprintf(stderr, "executor exited %.0f ms after the driver's last reply (timeout 600 ms)\n",
                (double) elapsed / 1000.0);
}
END_TEST

static bool polled_after_swallow(Driver *d) {
        return d->swallow == 0 && d->polls_after_swallow > 0;
}

/* A fake driver with a state_dir and one registered executor; after a few
 * of its polls the driver "restarts" (its server goes and comes back), and
 * before it listens again answer_how() says how it will answer. */
/* Returns when the old server went away: where the executor's clocks for
 * its resends and its redial start. */
static uint64_t restart_durable_driver(void (*answer_how)(Driver *d)) {
        RpcServerConfig cfg = { .n_contexts = 8, .max_request_bytes = 64u * 1024u * 1024u };
        uint64_t dropped;

        driver_start(&drv, 1, 200, 0);
        drv.durable = true;
        start_executor(&drv, 1);
        ck_assert(run_until(&drv, registered, 10 * SEC_US));
        for (uint64_t t0 = now_us(); now_us() - t0 < 300 * 1000;)
                ck_assert_int_ge(sd_event_run(drv.event, 20 * 1000), 0);
        drv.parked = NULL;
        dropped = now_us();
        drv.server = rpc_server_free(drv.server);
        drv.polls_after_swallow = 0;
        answer_how(&drv);
        ck_assert_int_eq(rpc_server_new_envelope(drv.event, drv.url, &cfg, driver_handler, &drv, &drv.server), 0);
        return dropped;
}

static void swallow_one(Driver *d) {
        d->swallow = 1;
}

/* A driver with a state_dir restarts: the executor's connection drops, and
 * the first request it sends the new one is lost (never answered: nng 1.5
 * can lose a request sent just as its pipe closes).  The executor sends it
 * again after EXECUTOR_RESEND_AFTER_USEC and goes on, long before its 15 s
 * deadline for a durable driver would end it. */
START_TEST(test_lost_request_after_reconnect_sent_again) {
        uint64_t t0;

        t0 = restart_durable_driver(swallow_one);
        ck_assert_msg(run_until(&drv, polled_after_swallow, 8 * SEC_US), "no poll came after the lost one");
        ck_assert(!executor_exited(&drv));
        fprintf(stderr, "the lost request was sent again %.0f ms after the restart\n", (double) (now_us() - t0) / 1000.0);

        drv.shutdown = true;
        driver_kick(&drv);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
}
END_TEST

static bool polled_on_another_connection(Driver *d) {
        return d->swallowed > 0 && d->polls_after_swallow > 0;
}

static void swallow_first_connection(Driver *d) {
        d->swallow_first_pipe = true;
}

/* As above, but the new connection takes every request and answers none:
 * sending again on it does not help, so the executor closes it and dials
 * again, and is answered on the next connection before its deadline. */
START_TEST(test_silent_connection_after_reconnect_dialed_again) {
        uint64_t t0, took;

        t0 = restart_durable_driver(swallow_first_connection);
        ck_assert_msg(run_until(&drv, polled_on_another_connection, 12 * SEC_US),
                      "no poll came on another connection (%u swallowed)", drv.swallowed);
        took = now_us() - t0;
        ck_assert(!executor_exited(&drv));
        /* sent again on the silent connection first, then dialed anew */
        ck_assert_uint_ge(drv.swallowed, 2);
        ck_assert_uint_ge(took, EXECUTOR_RESEND_AFTER_USEC * EXECUTOR_REDIAL_EVERY_RESENDS);
        fprintf(stderr, "answered on a new connection %.0f ms after the restart (%u requests unanswered)\n",
                (double) took / 1000.0, drv.swallowed);

        drv.shutdown = true;
        driver_kick(&drv);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
}
END_TEST

static bool first_result_in(Driver *d) {
        return d->results_total > 0;
}

START_TEST(test_driver_comes_up_late) {
        char good[SHA256_HEX_SIZE];
        uint64_t t0;
        FakeJob *j;

        /* The executor starts first and keeps trying; the driver appears
         * after a while and is not ready at first (-EAGAIN). */
        snprintf(drv.url, sizeof(drv.url), "ipc://%s/driver.sock", tmpdir);
        drv.cores = 1;
        start_executor(&drv, 1);
        t0 = now_us();
        while (now_us() - t0 < 700 * 1000)
                usleep(10 * 1000);
        ck_assert_int_eq(waitpid(drv.executor_pid, NULL, WNOHANG), 0);

        driver_start(&drv, 1, 200, 0);
        drv.not_ready = 2;
        load_good_library(&drv, good);
        j = driver_add_job(&drv, "job-late", 1);
        set_function(&j->tasks[0], good, "echo", "late");
        driver_queue_job(&drv, j);
        ck_assert(run_until(&drv, first_result_in, 10 * SEC_US));
        ck_assert_uint_eq(drv.registrations, 3);
        ck_assert_str_eq(j->tasks[0].output, "late");

        drv.shutdown = true;
        driver_kick(&drv);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
}
END_TEST

static bool task_handed_out(Driver *d) {
        return d->queue_next == d->n_queue;
}

START_TEST(test_sigterm_does_not_wait_for_functions) {
        char good[SHA256_HEX_SIZE];
        uint64_t t0;
        FakeJob *j;

        driver_start(&drv, 1, 200, 0);
        load_good_library(&drv, good);
        j = driver_add_job(&drv, "job-slow", 1);
        set_function(&j->tasks[0], good, "sleep_ms", "20000");
        driver_queue_job(&drv, j);
        start_executor(&drv, 1);
        ck_assert(run_until(&drv, task_handed_out, 10 * SEC_US));
        for (t0 = now_us(); now_us() - t0 < 300 * 1000;)
                ck_assert_int_ge(sd_event_run(drv.event, 20 * 1000), 0);

        t0 = now_us();
        ck_assert_int_eq(kill(drv.executor_pid, SIGTERM), 0);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
        ck_assert_uint_lt(now_us() - t0, 2 * SEC_US);
        ck_assert_uint_eq(j->tasks[0].results, 0);
}
END_TEST

START_TEST(test_registration_refused) {
        driver_start(&drv, 1, 200, 0);
        drv.refuse = true;
        start_executor(&drv, 1);
        ck_assert(run_until(&drv, executor_exited, 10 * SEC_US));
        ck_assert_int_eq(exit_status, 1);
        ck_assert(!drv.registered);
}
END_TEST

static char pidfile[128];

static bool command_started(Driver *d) {
        (void) d;
        return access(pidfile, F_OK) == 0;
}

START_TEST(test_sigterm_kills_commands) {
        char cmd[512];
        FakeJob *j;
        uint64_t t0;
        pid_t sleeper;
        FILE *f;
        int status;

        driver_start(&drv, 1, 200, 0);
        snprintf(pidfile, sizeof(pidfile), "%s/sleeper.pid", tmpdir);
        snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > %s.tmp && mv %s.tmp %s; wait", pidfile, pidfile, pidfile);
        j = driver_add_job(&drv, "job-long", 1);
        set_command(&j->tasks[0], cmd);
        driver_queue_job(&drv, j);
        start_executor(&drv, 1);
        ck_assert(run_until(&drv, command_started, 10 * SEC_US));

        f = fopen(pidfile, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fscanf(f, "%d", &sleeper), 1);
        fclose(f);

        t0 = now_us();
        ck_assert_int_eq(kill(drv.executor_pid, SIGTERM), 0);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
        ck_assert_uint_lt(now_us() - t0, 2 * SEC_US);

        /* The command's whole process group is gone too (we are its
         * subreaper now, so we can reap it and see how it ended). */
        for (t0 = now_us(); now_us() - t0 < 5 * SEC_US;) {
                if (waitpid(sleeper, &status, WNOHANG) == sleeper)
                        break;
                usleep(10 * 1000);
        }
        ck_assert(WIFSIGNALED(status));
        ck_assert_int_eq(WTERMSIG(status), SIGKILL);
}
END_TEST

START_TEST(test_throughput_empty_tasks) {
        const char *env = getenv("SPARK_TEST_THROUGHPUT_TASKS"), *pf = getenv("SPARK_TEST_THROUGHPUT_PREFETCH");
        size_t n = env ? (size_t) atol(env) : 200000;
        int prefetch = pf ? atoi(pf) : 2048;
        char good[SHA256_HEX_SIZE];
        double secs;
        FakeJob *j;

        driver_start(&drv, 2, 1000, prefetch);
        load_good_library(&drv, good);
        j = driver_add_job(&drv, "job-empty", n);
        for (size_t i = 0; i < n; i++)
                set_function(&j->tasks[i], good, "empty", "");
        driver_queue_job(&drv, j);
        start_executor(&drv, 2);
        ck_assert(run_until(&drv, all_results_in, 120 * SEC_US));
        for (size_t i = 0; i < n; i++)
                ck_assert_uint_eq(j->tasks[i].results, 1);

        secs = (double) (drv.last_result_us - drv.first_launch_us) / 1e6;
        fprintf(stderr, "throughput: %zu empty function tasks in %.3f s = %.0f tasks/s (2 cores, prefetch %d, %u polls, "
                        "%.1f results per poll)\n",
                n, secs, (double) n / secs, prefetch, drv.polls, (double) n / drv.polls);
        ck_assert_uint_le(drv.max_polls_in_flight, 2);
        ck_assert_uint_eq(drv.double_parked, 0);

        drv.shutdown = true;
        driver_kick(&drv);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
}
END_TEST

/* The hold of a result (executor_result_hold_usec()): about one task's run
 * time, only while the queue keeps the cores busy for twice as long, never
 * for tasks too short to need it, and bounded. */
START_TEST(test_result_hold) {
        const usec_t ms = USEC_PER_MSEC;

        /* gzip-like tasks of 1.6 ms on one core, a few queued: 2 ms */
        ck_assert_uint_eq(executor_result_hold_usec(1600, 4, 1), 2000);
        /* ... but not with too little queued to keep the core busy */
        ck_assert_uint_eq(executor_result_hold_usec(1600, 2, 1), 0);
        ck_assert_uint_eq(executor_result_hold_usec(1600, 0, 1), 0);
        /* ... which counts every core */
        ck_assert_uint_eq(executor_result_hold_usec(1600, 4, 2), 0);
        ck_assert_uint_eq(executor_result_hold_usec(1600, 5, 2), 2000);
        /* tiny tasks: their results share polls already */
        ck_assert_uint_eq(executor_result_hold_usec(20, 100000, 1), 0);
        /* no run time known yet */
        ck_assert_uint_eq(executor_result_hold_usec(0, 100, 1), 0);
        /* long tasks: at most EXECUTOR_RESULT_HOLD_MAX_USEC */
        ck_assert_uint_eq(executor_result_hold_usec(60 * 1000 * ms, 10, 1), EXECUTOR_RESULT_HOLD_MAX_USEC);
        ck_assert_uint_eq(executor_result_hold_usec(10 * ms, 10, 4), EXECUTOR_RESULT_HOLD_MAX_USEC);
        ck_assert_uint_eq(executor_result_hold_usec(10 * ms, 10, 0), 0);
}
END_TEST

static bool registered_twice(Driver *d) {
        return d->registrations >= 2;
}

static bool polled_on_channel_again(Driver *d) {
        return d->registrations >= 2 && d->polls_on_channel > 0;
}

/* Polls on the task channel (docs/DESIGN.md §4): every result exactly
 * once, nearly every poll on the channel; then the driver restarts (a
 * durable one): the channel drops, the executor waits, registers again
 * over nng and polls on the new driver's channel. */
START_TEST(test_task_channel) {
        char good[SHA256_HEX_SIZE];
        FakeJob *jf, *jc;

        drv.task_channel = true;
        driver_start(&drv, 2, 200, 8);
        drv.durable = true;
        load_good_library(&drv, good);
        drv.batch_max = 7;
        jf = driver_add_job(&drv, "job-fn", 2000);
        for (size_t i = 0; i < jf->n; i++)
                set_function(&jf->tasks[i], good, "echo", "x");
        jc = driver_add_job(&drv, "job-cmd", 20);
        for (size_t i = 0; i < jc->n; i++)
                set_command(&jc->tasks[i], "echo c");
        driver_queue_job(&drv, jf);
        driver_queue_job(&drv, jc);

        start_executor(&drv, 2);
        ck_assert_msg(run_until(&drv, all_results_in, 60 * SEC_US), "results missing: %zu of %zu",
                      drv.results_total, drv.n_queue);
        for (size_t i = 0; i < jf->n; i++)
                ck_assert_uint_eq(jf->tasks[i].results, 1);
        for (size_t i = 0; i < jc->n; i++) {
                ck_assert_uint_eq(jc->tasks[i].results, 1);
                ck_assert_str_eq(jc->tasks[i].output, "c\n");
        }
        fprintf(stderr, "task channel: %u polls on it, %u over nng\n", drv.polls_on_channel, drv.polls_on_nng);
        ck_assert_uint_gt(drv.polls_on_channel, 10);
        /* over nng at most the polls sent while the channel connected */
        ck_assert_uint_le(drv.polls_on_nng, 2);
        ck_assert_uint_eq(drv.seq_regressions, 0);

        /* the driver restarts */
        drv.parked = NULL;
        drv.server = rpc_server_free(drv.server);
        drv.registered = false;
        drv.polls_on_channel = 0;
        driver_listen(&drv);
        ck_assert_msg(run_until(&drv, registered_twice, 10 * SEC_US), "the executor did not register again");
        ck_assert_msg(run_until(&drv, polled_on_channel_again, 5 * SEC_US), "no poll on the new task channel");
        ck_assert(!executor_exited(&drv));

        drv.shutdown = true;
        driver_kick(&drv);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
}
END_TEST

/* Beside a tls+tcp:// endpoint the channel is TLS: the executor verifies
 * the driver with its CA credential and polls there.  A channel whose
 * certificate does not verify (self-signed here, while the nng endpoint's
 * does) is never polled on: the executor polls over nng instead. */
static void run_tls_job(size_t n_tasks) {
        char good[SHA256_HEX_SIZE];
        FakeJob *jf;

        drv.task_channel = true;
        drv.tls_ca = "tests/data/tls/ca.pem";
        driver_start(&drv, 2, 200, 8);
        load_good_library(&drv, good);
        jf = driver_add_job(&drv, "job-fn", n_tasks);
        for (size_t i = 0; i < jf->n; i++)
                set_function(&jf->tasks[i], good, "echo", "x");
        driver_queue_job(&drv, jf);

        start_executor(&drv, 2);
        ck_assert_msg(run_until(&drv, all_results_in, 60 * SEC_US), "results missing: %zu of %zu",
                      drv.results_total, drv.n_queue);
        for (size_t i = 0; i < jf->n; i++)
                ck_assert_uint_eq(jf->tasks[i].results, 1);
        fprintf(stderr, "task channel over TLS: %u polls on it, %u over nng\n", drv.polls_on_channel,
                drv.polls_on_nng);
}

static void stop_executor(void) {
        drv.shutdown = true;
        driver_kick(&drv);
        ck_assert(run_until(&drv, executor_exited, 5 * SEC_US));
        ck_assert_int_eq(exit_status, 0);
}

START_TEST(test_task_channel_tls) {
        run_tls_job(500);
        /* the channel took up the session of the executor's nng
         * connection (tls-resume.h): no second full handshake */
        ck_assert_uint_ge(tls_resume_served(), 1);
        /* over nng only while the handshake was under way (a few ms) */
        ck_assert_uint_gt(drv.polls_on_channel, 10);
        ck_assert_uint_le(drv.polls_on_nng, 10);
        ck_assert_uint_gt(drv.polls_on_channel, 2 * drv.polls_on_nng);
        stop_executor();
}
END_TEST

START_TEST(test_task_channel_tls_unverified) {
        static const TlsSettings self_signed = { "tests/data/tls/ca.pem", "tests/data/tls/self.pem",
                                                 "tests/data/tls/self.key" };

        drv.channel_tls = &self_signed;
        run_tls_job(100);
        /* offered, but a server of another certificate cannot take it up */
        ck_assert_uint_eq(tls_resume_served(), 0);
        ck_assert_uint_eq(drv.polls_on_channel, 0);
        ck_assert_uint_gt(drv.polls_on_nng, 10);
        stop_executor();
}
END_TEST

/* The threads of the executor: nng alone starts 13. */
static unsigned executor_threads(Driver *d) {
        char path[64];
        unsigned n = 0;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) d->executor_pid);
        dir = opendir(path);
        ck_assert_ptr_nonnull(dir);
        for (struct dirent *de; (de = readdir(dir));)
                if (de->d_name[0] != '.')
                        n++;
        closedir(dir);
        return n;
}

static void queue_commands(Driver *d, const char *id, size_t n) {
        FakeJob *j = driver_add_job(d, id, n);

        for (size_t i = 0; i < j->n; i++)
                set_command(&j->tasks[i], "echo c");
        driver_queue_job(d, j);
}

static bool job_results_once(Driver *d, size_t job) {
        for (size_t i = 0; i < d->jobs[job].n; i++)
                if (d->jobs[job].tasks[i].results != 1)
                        return false;
        return true;
}

/* Launched with its driver's task channel (--driver-channel-port, as a
 * worker does), the executor registers and polls there and opens no nng
 * at all, until a task thread needs a library: then nng, just for that. */
static void run_registered_on_channel(void) {
        char good[SHA256_HEX_SIZE];
        FakeJob *jf;

        drv.task_channel = true;
        driver_start(&drv, 2, 200, 8);
        drv.pass_channel_port = drv.channel_port;
        queue_commands(&drv, "job-cmd", 50);

        start_executor(&drv, 2);
        ck_assert_msg(run_until(&drv, all_results_in, 30 * SEC_US), "results missing: %zu of %zu",
                      drv.results_total, drv.n_queue);
        ck_assert(job_results_once(&drv, 0));
        ck_assert_uint_eq(drv.registrations, 1);
        ck_assert_uint_eq(drv.registrations_on_channel, 1);
        ck_assert_uint_gt(drv.polls_on_channel, 0);
        ck_assert_uint_eq(drv.polls_on_nng, 0);
        /* main, 2 task threads, the loop's standby: no nng */
        ck_assert_uint_le(executor_threads(&drv), 6);

        load_good_library(&drv, good);
        jf = driver_add_job(&drv, "job-fn", 20);
        for (size_t i = 0; i < jf->n; i++)
                set_function(&jf->tasks[i], good, "echo", "x");
        driver_queue_job(&drv, jf);
        driver_kick(&drv);
        ck_assert_msg(run_until(&drv, all_results_in, 30 * SEC_US), "function results missing: %zu of %zu",
                      drv.results_total, drv.n_queue);
        ck_assert(job_results_once(&drv, 1));
        ck_assert_uint_eq(drv.libs[0].fetches, 1);
        /* the polls stayed on the channel */
        ck_assert_uint_eq(drv.polls_on_nng, 0);
        ck_assert_uint_gt(executor_threads(&drv), 6);
        stop_executor();
}

START_TEST(test_register_on_channel) {
        run_registered_on_channel();
}
END_TEST

START_TEST(test_register_on_channel_tls) {
        drv.tls_ca = "tests/data/tls/ca.pem";
        run_registered_on_channel();
}
END_TEST

/* A channel port that leads nowhere (nothing listens there), or to a
 * server that refuses the registration (a stale port, taken since by
 * another driver): the executor registers over nng and works as before. */
static void run_channel_fallback(void) {
        queue_commands(&drv, "job-cmd", 50);
        start_executor(&drv, 2);
        ck_assert_msg(run_until(&drv, all_results_in, 30 * SEC_US), "results missing: %zu of %zu",
                      drv.results_total, drv.n_queue);
        ck_assert(job_results_once(&drv, 0));
        ck_assert(drv.registered);
        stop_executor();
}

START_TEST(test_register_channel_unreachable) {
        drv.task_channel = true;
        driver_start(&drv, 2, 200, 8);
        drv.pass_channel_port = test_free_port();
        run_channel_fallback();
        ck_assert_uint_eq(drv.registrations, 1);
        ck_assert_uint_eq(drv.registrations_on_channel, 0);
}
END_TEST

/* A channel port where the TCP connection is made but TLS never answers
 * (a listener that accepts nothing): after a moment the registration goes
 * over nng. */
START_TEST(test_register_channel_silent) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        uint64_t t0;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &a, sizeof(a)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &a, &len), 0);
        drv.task_channel = true;
        drv.tls_ca = "tests/data/tls/ca.pem";
        driver_start(&drv, 2, 200, 8);
        drv.pass_channel_port = ntohs(a.sin_port);
        t0 = now_us();
        queue_commands(&drv, "job-cmd", 10);
        start_executor(&drv, 2);
        ck_assert(run_until(&drv, registered, 10 * SEC_US));
        fprintf(stderr, "registered over nng %.0f ms after the start\n", (now_us() - t0) / 1000.0);
        ck_assert_uint_lt(now_us() - t0, 5 * SEC_US);
        ck_assert_uint_eq(drv.registrations_on_channel, 0);
        ck_assert_msg(run_until(&drv, all_results_in, 30 * SEC_US), "results missing: %zu of %zu",
                      drv.results_total, drv.n_queue);
        stop_executor();
        close(fd);
}
END_TEST

START_TEST(test_register_channel_refused) {
        drv.task_channel = true;
        driver_start(&drv, 2, 200, 8);
        drv.pass_channel_port = drv.channel_port;
        drv.refuse_on_channel = true;
        run_channel_fallback();
        ck_assert_uint_eq(drv.registrations, 2);
        ck_assert_uint_eq(drv.registrations_on_channel, 1);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_tasks_kills_and_shutdown,
                test_driver_goes_silent,
                test_lost_request_after_reconnect_sent_again,
                test_silent_connection_after_reconnect_dialed_again,
                test_registration_refused,
                test_driver_comes_up_late,
                test_sigterm_does_not_wait_for_functions,
                test_sigterm_kills_commands,
                test_throughput_empty_tasks,
                test_result_hold,
                test_task_channel,
                test_task_channel_tls,
                test_task_channel_tls_unverified,
                test_register_on_channel,
                test_register_on_channel_tls,
                test_register_channel_unreachable,
                test_register_channel_refused,
                test_register_channel_silent,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 180 };

        return check_run_tests("executor", &options, tests);
}
