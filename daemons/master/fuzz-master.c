/* libFuzzer target: the master's request dispatch (master-requests.c)
 * behind the real RpcServer, with the input's bytes sent as raw requests
 * (fuzz-rpc.h).  An input is a conversation of up to 16 requests separated
 * by FUZZ_SEPARATOR, played against a fresh master state: the Cluster and
 * its effects, with the event publisher of master-workers.c on inproc://;
 * only the calls to workers (launch, kill) are counted instead of dialled.
 *
 * Oracles: every request gets an answer that decodes; one that does not
 * decode gets the decoder's Error; a request answered with an Error leaves
 * the cluster's state exactly as it was; after every request the
 * bookkeeping adds up (each worker's cores and memory in use are the sum of
 * its executors', each app's granted cores the sum of its live executors'). */
#include <inttypes.h>

#include "fuzz-messages.h"
#include "fuzz-rpc.h"
#include "fuzz-util.h"
#include "log.h"
#include "master.h"

#define FUZZ_START_TIME ((time_t) 1795972953) /* 2026-11-29 17:22:33 UTC */

static sd_event *event;
static FuzzRpc *rpc;
static EventPub *events;
static ClusterEffects fuzz_effects;
static unsigned n_launches, n_kills;

static void fx_launch(Cluster *c, Worker *w, ClusterExecutor *e, void *userdata) {
        (void) c, (void) w, (void) e, (void) userdata;
        n_launches++;
}

static void fx_kill(Cluster *c, Worker *w, ClusterExecutor *e, const char *reason, void *userdata) {
        (void) c, (void) w, (void) e, (void) reason, (void) userdata;
        n_kills++;
}

/* ------------------------------------------------------------- oracles */

/* Everything of the state a request may change (not the clocks). */
static char *state_digest(void *userdata) {
        Cluster *c = ((Master *) userdata)->cluster;
        char *text = NULL;
        size_t len = 0, i = 0;
        FILE *f = open_memstream(&text, &len);
        void *v;

        FUZZ_ASSERT(f);
        while (hashmap_iterate(cluster_workers(c), &i, &v, NULL)) {
                Worker *w = v;
                fprintf(f, "W %s %s %s %s %d/%d %" PRIi64 "/%" PRIi64 " %d %zu\n", w->id, w->host, w->endpoint,
                        strempty(w->events_endpoint), w->cores_used, w->cores, w->memory_used_mb, w->memory_mb,
                        w->state, w->n_executors);
        }
        for (App *a = cluster_apps(c); a; a = a->next) {
                fprintf(f, "A %s %s %s %s %d %d/%d %d %" PRIi64 " %zu %d %s %d %d %zu\n", a->id, strempty(a->name),
                        strempty(a->driver_url), strempty(a->driver_events), a->state, a->cores_granted, a->max_cores,
                        a->cores_per_executor, a->executor_memory_mb, a->n_env, a->executor_limit,
                        strempty(a->reason), a->retry_count, a->next_executor_id, a->n_live_executors);
                for (size_t k = 0; k < a->n_executors_allocated; k++) {
                        ClusterExecutor *e = a->executors[k];
                        if (e)
                                fprintf(f, "  E %d %s %d %" PRIi64 " %d %s %d\n", e->id,
                                        e->worker ? e->worker->id : "-", e->cores, e->memory_mb, e->state,
                                        strempty(e->reason), e->exit_code);
                }
        }
        fprintf(f, "N %zu\n", cluster_n_executors(c));
        FUZZ_ASSERT(fclose(f) == 0);
        return text;
}

static void check_bookkeeping(Cluster *c) {
        size_t i = 0;
        void *v;

        while (hashmap_iterate(cluster_workers(c), &i, &v, NULL)) {
                Worker *w = v;
                int64_t cores = 0, memory = 0;
                size_t n = 0;

                for (ClusterExecutor *e = w->executors; e; e = e->worker_next) {
                        FUZZ_ASSERT(e->worker == w);
                        FUZZ_ASSERT(!executor_state_is_terminal(e->state));
                        cores += e->cores;
                        memory += e->memory_mb;
                        n++;
                }
                if (cores != w->cores_used || memory != w->memory_used_mb || n != w->n_executors)
                        fuzz_fail("worker %s: %d cores, %" PRIi64 " MiB, %zu executors in use, but its executors "
                                  "add up to %" PRIi64 ", %" PRIi64 ", %zu",
                                  w->id, w->cores_used, w->memory_used_mb, w->n_executors, cores, memory, n);
                FUZZ_ASSERT(w->cores_used >= 0 && w->memory_used_mb >= 0);
        }
        for (App *a = cluster_apps(c); a; a = a->next) {
                int64_t cores = 0;
                size_t live = 0;

                for (size_t k = 0; k < a->n_executors_allocated; k++) {
                        ClusterExecutor *e = a->executors[k];
                        if (!e || executor_state_is_terminal(e->state))
                                continue;
                        FUZZ_ASSERT(e->app == a && e->id == (int) k);
                        cores += e->cores;
                        live++;
                }
                if (cores != a->cores_granted || live != a->n_live_executors)
                        fuzz_fail("app %s: %d cores granted to %zu live executors, but they add up to %" PRIi64
                                  " cores, %zu executors",
                                  a->id, a->cores_granted, a->n_live_executors, cores, live);
        }
}

/* -------------------------------------------------------------- seeds */

static const FuzzIds ids = FUZZ_SEED_IDS("tcp://127.0.0.1:7079");

static Envelope *msg(int body) {
        return fuzz_seed_message(body, &ids);
}

/* A worker that registers holding no executor. */
static Envelope *worker_without_executors(void) {
        Envelope *env = msg(SPARK__ENVELOPE__BODY_REGISTER_WORKER);

        fuzz_repeated_clear(&env->register_worker->base, "executors");
        return env;
}

/* An application that registers for the first time: the master names it. */
static Envelope *new_app(void) {
        Envelope *env = msg(SPARK__ENVELOPE__BODY_REGISTER_APPLICATION);

        env->register_application->app_id[0] = 0;
        return env;
}

static void write_seeds(const char *dir) {
        static const int bodies[] = {
                SPARK__ENVELOPE__BODY_REGISTER_WORKER,        SPARK__ENVELOPE__BODY_HEARTBEAT,
                SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED, SPARK__ENVELOPE__BODY_REGISTER_APPLICATION,
                SPARK__ENVELOPE__BODY_UNREGISTER_APPLICATION, SPARK__ENVELOPE__BODY_KILL_APPLICATION,
                SPARK__ENVELOPE__BODY_KILL_EXECUTOR,          SPARK__ENVELOPE__BODY_REQUEST_EXECUTORS,
                SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST,  SPARK__ENVELOPE__BODY_SUBMIT_JOB,
        };
        Envelope *m[FUZZ_RPC_MAX_REQUESTS];

        fuzz_seed_each_body(dir, bodies, ELEMENTSOF(bodies), &ids);

        /* a worker, an app: executors placed, running, killed, replaced, app gone */
        m[0] = worker_without_executors();
        m[1] = new_app();
        m[2] = msg(SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED);
        m[3] = msg(SPARK__ENVELOPE__BODY_HEARTBEAT);
        m[4] = msg(SPARK__ENVELOPE__BODY_KILL_EXECUTOR);
        m[5] = msg(SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED);
        m[5]->executor_state_changed->state = SPARK__EXECUTOR_STATE__EXECUTOR_KILLED;
        m[6] = msg(SPARK__ENVELOPE__BODY_REQUEST_EXECUTORS);
        m[7] = msg(SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST);
        m[8] = msg(SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED);
        m[8]->executor_state_changed->executor_id = 2;
        m[8]->executor_state_changed->state = SPARK__EXECUTOR_STATE__EXECUTOR_FAILED;
        m[9] = msg(SPARK__ENVELOPE__BODY_UNREGISTER_APPLICATION);
        m[10] = msg(SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST);
        fuzz_seed_conversation(dir, "conversation-app-lifecycle", m, 11);

        /* a worker restarts holding an executor the master knows, then is killed off */
        m[0] = worker_without_executors();
        m[1] = new_app();
        m[2] = msg(SPARK__ENVELOPE__BODY_REGISTER_WORKER);
        m[3] = msg(SPARK__ENVELOPE__BODY_KILL_APPLICATION);
        m[4] = msg(SPARK__ENVELOPE__BODY_REGISTER_WORKER);
        m[5] = msg(SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST);
        fuzz_seed_conversation(dir, "conversation-worker-restart", m, 6);

        /* two workers, an app with a core cap, executors failing in a row */
        m[0] = worker_without_executors();
        m[1] = worker_without_executors();
        free(m[1]->register_worker->worker_id);
        m[1]->register_worker->worker_id = strdup("worker-20261129172233-host-2-7078");
        free(m[1]->register_worker->endpoint);
        m[1]->register_worker->endpoint = strdup("ipc:///tmp/worker-2.sock");
        m[2] = new_app();
        m[2]->register_application->max_cores = 3;
        for (int i = 0; i < 6; i++) {
                m[3 + i] = msg(SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED);
                m[3 + i]->executor_state_changed->executor_id = i + 1;
                m[3 + i]->executor_state_changed->state = SPARK__EXECUTOR_STATE__EXECUTOR_FAILED;
                m[3 + i]->executor_state_changed->exit_code = 1;
        }
        m[9] = msg(SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST);
        fuzz_seed_conversation(dir, "conversation-crash-loop", m, 10);

        fuzz_write_seed_raw(dir, "garbage", "\x08\x01\x52\x05\xff\xff\xff\xff\x0f", 9);
}

/* ------------------------------------------------------------- target */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc, (void) argv;
        fuzz_write_seeds_if_asked(write_seeds);
        fuzz_quiet_logs();
        FUZZ_ASSERT(sd_event_new(&event) >= 0);
        FUZZ_ASSERT(fuzz_rpc_new(event, "inproc://spark-fuzz-master", 0, &rpc) >= 0);
        FUZZ_ASSERT(event_pub_new("inproc://spark-fuzz-master-events", 0, NULL, &events) >= 0);
        fuzz_effects = master_effects;
        fuzz_effects.launch_executor = fx_launch;
        fuzz_effects.kill_executor = fx_kill;
        fuzz_effects.schedule_needed = NULL; /* placed within each request, checked after it */
        return 0;
}

static Master *master_new_for_fuzzing(void) {
        Master *m = calloc(1, sizeof(*m));
        ClusterConfig cc;

        FUZZ_ASSERT(m);
        m->journal_fd = -1;
        m->event = sd_event_ref(event);
        FUZZ_ASSERT(config_defaults(&m->config) >= 0);
        cc = (ClusterConfig) {
                .worker_timeout = (usec_t) m->config.master.worker_timeout_ms * USEC_PER_MSEC,
                .spread_out = m->config.master.spread_out,
                .default_cores = (int) m->config.master.default_cores,
                .max_executor_retries = (int) m->config.master.max_executor_retries,
        };
        FUZZ_ASSERT(cluster_new(&cc, &fuzz_effects, m, FUZZ_START_TIME, &m->cluster) >= 0);
        m->events = events;
        return m;
}

static void master_check(void *userdata, const Envelope *req, const Envelope *reply) {
        Master *m = userdata;
        (void) req, (void) reply;
        check_bookkeeping(m->cluster);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Master *m = master_new_for_fuzzing();
        const FuzzRpcTarget target = {
                .handler = master_handle_request,
                .userdata = m,
                .max_request_bytes = SPARK_MAX_MESSAGE_BYTES,
                .digest = state_digest,
                .check = master_check,
        };

        fuzz_rpc_play(rpc, data, size, &target);
        m->events = NULL; /* the target's */
        master_free(m);
        return 0;
}
