/* libFuzzer target: the worker's request dispatch (worker-requests.c) with
 * the real UnitManager (executor-unit.c, unit-properties.c) behind the real
 * RpcServer, the input's bytes sent as raw requests (fuzz-rpc.h).  An input
 * is a conversation of up to 16 requests separated by FUZZ_SEPARATOR,
 * played against a fresh worker (worker_new() from a generated config, id
 * FUZZ_WORKER_ID) whose "user bus" is a fake systemd in this process: a
 * D-Bus peer on a socket named by $DBUS_SESSION_BUS_ADDRESS that answers
 * Hello, AddMatch, Subscribe, StartTransientUnit and StopUnit, and records
 * the units it was asked to start.
 *
 * Oracles: every request gets an answer that decodes; one that does not
 * decode gets the decoder's Error; a request answered with an Error leaves
 * the worker's executors as they were and starts no unit; every unit
 * systemd is asked to start has a well-formed spark-executor-*.service name
 * and runs the configured executor binary. */
#include <dirent.h>
#include <inttypes.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <systemd/sd-bus.h>

#include "executor-unit-internal.h"
#include "fuzz-messages.h"
#include "fuzz-rpc.h"
#include "fuzz-util.h"
#include "log.h"
#include "worker.h"

#define FUZZ_EXECUTOR_BINARY "/usr/lib/spark/spark-executor"

static sd_event *event;
static FuzzRpc *rpc;
static EventPub *events;
static char config_path[4096], work_dir[4096];
static int listen_fd = -1;

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);
static sd_event_source *accept_source;
static sd_bus *peer;             /* the fake systemd's end of the current connection */
static unsigned units_started;   /* StartTransientUnit calls */
static uint64_t next_job;

/* --------------------------------------------------------- fake systemd */

static void check_start(sd_bus_message *m) {
        const char *name, *mode;
        int r;

        r = sd_bus_message_read(m, "ss", &name, &mode);
        if (r < 0)
                fuzz_fail("StartTransientUnit without a name: %s", strerror(-r));
        if (strncmp(name, "spark-executor-", 15) != 0 || strlen(name) < 24 ||
            strcmp(name + strlen(name) - 8, ".service") != 0 || strchr(name, '/') ||
            strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\") != strlen(name))
                fuzz_fail("StartTransientUnit of a unit named \"%s\"", name);

        /* the properties: ExecStart must run the configured binary */
        r = sd_bus_message_enter_container(m, 'a', "(sv)");
        FUZZ_ASSERT(r >= 0);
        while ((r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                const char *prop;
                FUZZ_ASSERT(sd_bus_message_read(m, "s", &prop) >= 0);
                if (streq(prop, "ExecStart")) {
                        const char *path;
                        FUZZ_ASSERT(sd_bus_message_enter_container(m, 'v', "a(sasb)") > 0);
                        FUZZ_ASSERT(sd_bus_message_enter_container(m, 'a', "(sasb)") > 0);
                        FUZZ_ASSERT(sd_bus_message_enter_container(m, 'r', "sasb") > 0);
                        FUZZ_ASSERT(sd_bus_message_read(m, "s", &path) > 0);
                        if (!streq(path, FUZZ_EXECUTOR_BINARY))
                                fuzz_fail("unit %s runs %s", name, path);
                        FUZZ_ASSERT(sd_bus_message_skip(m, "asb") >= 0);
                        FUZZ_ASSERT(sd_bus_message_exit_container(m) >= 0);
                        FUZZ_ASSERT(sd_bus_message_exit_container(m) >= 0);
                        FUZZ_ASSERT(sd_bus_message_exit_container(m) >= 0);
                } else
                        FUZZ_ASSERT(sd_bus_message_skip(m, "v") >= 0);
                FUZZ_ASSERT(sd_bus_message_exit_container(m) >= 0);
        }
        FUZZ_ASSERT(r >= 0);
        units_started++;
}

static int on_peer_message(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *member = sd_bus_message_get_member(m);
        uint8_t type = 0;
        char job[64];
        (void) userdata, (void) error;

        if (sd_bus_message_get_type(m, &type) < 0 || type != SD_BUS_MESSAGE_METHOD_CALL || !member)
                return 0;
        if (streq(member, "Hello"))
                return sd_bus_reply_method_return(m, "s", ":1.42");
        if (streq(member, "AddMatch") || streq(member, "RemoveMatch") || streq(member, "Subscribe"))
                return sd_bus_reply_method_return(m, NULL);
        snprintf(job, sizeof(job), "/org/freedesktop/systemd1/job/%" PRIu64, ++next_job);
        if (streq(member, "StartTransientUnit")) {
                check_start(m);
                return sd_bus_reply_method_return(m, "o", job);
        }
        if (streq(member, "StopUnit"))
                return sd_bus_reply_method_return(m, "o", job);
        return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_METHOD, "fake systemd: no %s", member);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        sd_id128_t id = SD_ID128_MAKE(73, 70, 61, 72, 6b, 2d, 66, 75, 7a, 7a, 2d, 62, 75, 73, 00, 01);
        int cfd;
        (void) s, (void) revents, (void) userdata;

        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (cfd < 0)
                return 0;
        peer = sd_bus_flush_close_unref(peer);
        FUZZ_ASSERT(sd_bus_new(&peer) >= 0);
        FUZZ_ASSERT(sd_bus_set_fd(peer, cfd, cfd) >= 0);
        FUZZ_ASSERT(sd_bus_set_server(peer, true, id) >= 0);
        FUZZ_ASSERT(sd_bus_add_filter(peer, NULL, on_peer_message, NULL) >= 0);
        FUZZ_ASSERT(sd_bus_attach_event(peer, event, SD_EVENT_PRIORITY_NORMAL) >= 0);
        FUZZ_ASSERT(sd_bus_start(peer) >= 0);
        return 0;
}

static void fake_systemd_start(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char address[sizeof(sa.sun_path) + 16];

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fuzz_tmp_path("bus"));
        listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        FUZZ_ASSERT(listen_fd >= 0);
        FUZZ_ASSERT(bind(listen_fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        FUZZ_ASSERT(listen(listen_fd, 16) == 0);
        FUZZ_ASSERT(sd_event_add_io(event, &accept_source, listen_fd, EPOLLIN, on_accept, NULL) >= 0);
        snprintf(address, sizeof(address), "unix:path=%s", sa.sun_path);
        setenv("DBUS_SESSION_BUS_ADDRESS", address, 1);
}

/* ------------------------------------------------------------- oracles */

static char *state_digest(void *userdata) {
        WorkerManager *w = userdata;
        char *text = NULL;
        size_t len = 0, i = 0;
        FILE *f = open_memstream(&text, &len);
        void *v;

        FUZZ_ASSERT(f);
        fprintf(f, "units %zu started %u\n", unit_manager_watched(w->units), units_started);
        while (hashmap_iterate(w->executors, &i, &v, NULL)) {
                LocalExecutor *e = v;
                fprintf(f, "E %s %d %d %" PRIi64 " %d %s\n", e->key, e->state, e->cores, e->memory_mb, e->exit_code,
                        e->reason);
        }
        FUZZ_ASSERT(fclose(f) == 0);
        return text;
}

/* ------------------------------------------------------------- seeds */

static const FuzzIds ids = FUZZ_SEED_IDS("tcp://127.0.0.1:7091");

static Envelope *msg(int body) {
        return fuzz_seed_message(body, &ids);
}

static void write_seeds(const char *dir) {
        static const int bodies[] = {
                SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR,
                SPARK__ENVELOPE__BODY_KILL_EXECUTOR,
                SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST,
                SPARK__ENVELOPE__BODY_HEARTBEAT,
        };
        Envelope *m[FUZZ_RPC_MAX_REQUESTS];

        fuzz_seed_each_body(dir, bodies, ELEMENTSOF(bodies), &ids);

        /* launch two, a resent launch, kill one, kill one never launched, snapshot */
        m[0] = msg(SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR);
        m[1] = msg(SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR);
        m[1]->launch_executor->executor_id = 2;
        m[2] = msg(SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR);
        m[3] = msg(SPARK__ENVELOPE__BODY_KILL_EXECUTOR);
        m[4] = msg(SPARK__ENVELOPE__BODY_KILL_EXECUTOR);
        m[4]->kill_executor->executor_id = 9;
        m[5] = msg(SPARK__ENVELOPE__BODY_CLUSTER_STATE_REQUEST);
        m[5]->cluster_state_request->app_id[0] = 0;
        m[6] = msg(SPARK__ENVELOPE__BODY_LAUNCH_EXECUTOR);
        m[6]->launch_executor->executor_id = 3;
        free(m[6]->launch_executor->env[0]->key);
        m[6]->launch_executor->env[0]->key = strdup("SPARK_APP_ID");
        fuzz_seed_conversation(dir, "conversation-launch-kill", m, 7);
}

/* ------------------------------------------------------------- target */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        char text[2048], id_path[4096 + 32];
        (void) argc, (void) argv;

        fuzz_write_seeds_if_asked(write_seeds);
        fuzz_quiet_logs();
        snprintf(work_dir, sizeof(work_dir), "%s", fuzz_tmp_path("work"));
        FUZZ_ASSERT(mkdir(work_dir, 0755) == 0);
        /* the worker keeps its id in work_dir: make it known to the seeds */
        snprintf(id_path, sizeof(id_path), "%s/worker-7078.id", work_dir);
        FUZZ_ASSERT(fuzz_write_file(id_path, FUZZ_WORKER_ID "\n", strlen(FUZZ_WORKER_ID) + 1) == 0);

        snprintf(text, sizeof(text),
                 "cluster: { master = \"ipc://%1$s/master.sock\"; master_events = \"ipc://%1$s/master-events.sock\"; };\n"
                 "worker: { listen = \"tcp://127.0.0.1:7078\"; events_listen = \"tcp://127.0.0.1:7079\";\n"
                 "          advertise_host = \"host-1\"; cores = 4; memory_mb = 4096; systemd_bus = \"user\";\n"
                 "          work_dir = \"%2$s\"; executor_binary = \"" FUZZ_EXECUTOR_BINARY "\";\n"
                 "          executor_slice = \"spark-fuzz.slice\"; };\n",
                 fuzz_tmpdir(), work_dir);
        snprintf(config_path, sizeof(config_path), "%s", fuzz_tmp_path("worker.conf"));
        FUZZ_ASSERT(fuzz_write_file(config_path, text, strlen(text)) == 0);

        /* the executors' secrets go below it (worker-secrets.c) */
        FUZZ_ASSERT(setenv("RUNTIME_DIRECTORY", fuzz_tmp_path("run"), 1) == 0);

        /* worker_new() takes the thread's default loop: the same one */
        FUZZ_ASSERT(sd_event_default(&event) >= 0);
        fake_systemd_start();
        FUZZ_ASSERT(fuzz_rpc_new(event, "inproc://spark-fuzz-worker", 0, &rpc) >= 0);
        FUZZ_ASSERT(event_pub_new("inproc://spark-fuzz-worker-events", 0, NULL, &events) >= 0);
        return 0;
}

static WorkerManager *worker_new_for_fuzzing(void) {
        WorkerManager *w = NULL;
        usec_t deadline = now_mono_usec() + 5 * USEC_PER_SEC;

        FUZZ_ASSERT(worker_new(config_path, &w) >= 0);
        FUZZ_ASSERT(streq(w->id, FUZZ_WORKER_ID));
        FUZZ_ASSERT(worker_secrets_init(w) >= 0);
        FUZZ_ASSERT(unit_manager_new(w->event, true, worker_on_unit_state, w, &w->units) >= 0);
        FUZZ_ASSERT(rpc_client_new(w->event, "inproc://spark-fuzz-no-master", NULL, &w->master) >= 0);
        w->events = events;
        w->registered = true;
        w->adopted = true;
        /* connected and greeted, so that closing it never waits on its peer */
        while (sd_bus_is_ready(w->units->bus) <= 0) {
                if (now_mono_usec() > deadline)
                        fuzz_fail("the worker does not connect to the fake systemd");
                FUZZ_ASSERT(sd_event_run(event, 10 * USEC_PER_MSEC) >= 0);
        }
        fuzz_rpc_run_pending(rpc);
        return w;
}

static void worker_free_for_fuzzing(WorkerManager *w) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        fuzz_rpc_run_pending(rpc);
        w->events = NULL; /* the target's */
        worker_free(w);
        fuzz_rpc_run_pending(rpc);

        /* the executors' working directories, not the worker's id */
        d = opendir(work_dir);
        FUZZ_ASSERT(d);
        while ((de = readdir(d))) {
                char path[4096 + 256];
                if (de->d_name[0] == '.' || strstr(de->d_name, ".id"))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", work_dir, de->d_name);
                fuzz_rm_rf(path);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        WorkerManager *w = worker_new_for_fuzzing();
        const FuzzRpcTarget target = {
                .handler = worker_handle_request,
                .userdata = w,
                .max_request_bytes = SPARK_MAX_MESSAGE_BYTES,
                .digest = state_digest,
                .settle = true, /* the bus round trip of a start or stop */
        };

        fuzz_rpc_play(rpc, data, size, &target);
        worker_free_for_fuzzing(w);
        return 0;
}
