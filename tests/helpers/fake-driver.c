/* fake-driver: the driver's side of the master protocol, one request per
 * run, for black-box tests of the master and the workers without a real
 * driver (its executors are fake-executor units that never call back).
 *
 *   fake-driver --master URL register [--name N] [--driver-url URL]
 *               [--driver-events URL] [--max-cores N] [--cores-per-executor N]
 *               [--memory MB] [--app-id ID] [--env KEY=VALUE]... [--env-pair KEY VALUE]...
 *       prints the new app id
 *   Both register and launch take --key HEX, the application's executor key
 *   (default: 32 bytes of 0x5a; any length, to test that it is refused).
 *   fake-driver --master URL unregister APP [REASON]
 *   fake-driver --master URL request-executors APP TOTAL
 *   fake-driver --master WORKER-URL launch --app-id ID --worker-id ID [--executor-id N]
 *               [--cores N] [--memory MB] [--driver-url URL] [--env KEY=VALUE]...
 *       sends the master's LaunchExecutor to a worker (bad-input tests)
 *   fake-driver subscribe URL [--timeout SEC]
 *       prints "connected" once the publisher is reached, then one line per
 *       event, e.g.
 *         epoch=E seq=S executor_state_changed app=A exec=N worker=W state=failed exit_code=3 unit=U pid=P reason=exit-code 3
 *       and exits 0 after SEC seconds (default 120)
 *
 * Exit status: 0 done; 1 the daemon answered with an Error (its message on
 * stderr); 2 usage; 3 the daemon could not be reached. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>

#include "codec.h"
#include "nng-util.h"
#include "rpc-client.h"

#define CALL_TIMEOUT_MS 5000
#define MAX_ENV 512

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void out_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out_line(const char *fmt, ...) {
        va_list ap;

        pthread_mutex_lock(&out_lock);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
        pthread_mutex_unlock(&out_lock);
}

static int usage(void) {
        fprintf(stderr,
                "usage: fake-driver --master URL register [--name N] [--driver-url URL] [--driver-events URL]\n"
                "                   [--max-cores N] [--cores-per-executor N] [--memory MB] [--app-id ID]\n"
                "                   [--env KEY=VALUE]... [--env-pair KEY VALUE]... [--ui-url URL]\n"
                "       fake-driver --master URL unregister APP [REASON]\n"
                "       fake-driver --master URL request-executors APP TOTAL\n"
                "       fake-driver --master URL executor-load APP [ID=RUNNING_TASKS]...\n"
                "       fake-driver --master WORKER-URL launch --app-id ID --worker-id ID [--executor-id N]\n"
                "                   [--cores N] [--memory MB] [--driver-url URL] [--env KEY=VALUE]... [--epoch N]\n"
                "       register and launch: [--key HEX]\n"
                "       fake-driver subscribe URL [--timeout SEC]\n");
        return 2;
}

static bool parse_long(const char *s, long *ret) {
        char *end;

        errno = 0;
        *ret = strtol(s, &end, 10);
        return *s && !*end && errno == 0;
}

/* One request, one reply: 0 with the reply, or the exit status. */
static int call(const char *url, Envelope *req, int expected_body, Envelope **ret) {
        Envelope *reply = NULL;
        int r;

        r = rpc_call_sync(url, req, CALL_TIMEOUT_MS, 0, &reply);
        if (r < 0 && reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                fprintf(stderr, "fake-driver: error %d: %s\n", reply->error->code, reply->error->message);
                envelope_free(reply);
                return 1;
        }
        if (r < 0) {
                fprintf(stderr, "fake-driver: cannot reach %s: %s\n", url, strerror(-r));
                return 3;
        }
        if ((int) reply->body_case != expected_body) {
                fprintf(stderr, "fake-driver: unexpected reply %s\n", envelope_body_name(reply));
                envelope_free(reply);
                return 1;
        }
        *ret = reply;
        return 0;
}

/* A request answered with an Ack, and nothing more to read. */
static int call_ack(const char *url, Envelope *req) {
        Envelope *reply = NULL;
        int r;

        r = call(url, req, SPARK__ENVELOPE__BODY_ACK, &reply);
        envelope_free(reply);
        return r;
}

typedef struct Options {
        const char *name, *driver_url, *driver_events, *app_id, *worker_id, *ui_url;
        long max_cores, cores, memory_mb, executor_id, epoch;
        Spark__KeyValue *env[MAX_ENV];
        size_t n_env;
        uint8_t key[256];
        size_t key_len;
} Options;

static bool parse_hex(const char *s, uint8_t *buf, size_t size, size_t *ret_len) {
        size_t n = strlen(s);

        if (n % 2 != 0 || n / 2 > size)
                return false;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;
                if (!isxdigit((unsigned char) s[2 * i]) || !isxdigit((unsigned char) s[2 * i + 1]) ||
                    sscanf(s + 2 * i, "%2x", &v) != 1)
                        return false;
                buf[i] = (uint8_t) v;
        }
        *ret_len = n / 2;
        return true;
}

/* Parses the options of register and launch; 0 or the usage status. */
static int parse_options(int argc, char **argv, Options *o) {
        static Spark__KeyValue kv[MAX_ENV];

        for (int i = 0; i < argc; i++) {
                const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

                if (!val)
                        return usage();
                i++;
                if (strcmp(opt, "--name") == 0)
                        o->name = val;
                else if (strcmp(opt, "--driver-url") == 0)
                        o->driver_url = val;
                else if (strcmp(opt, "--driver-events") == 0)
                        o->driver_events = val;
                else if (strcmp(opt, "--app-id") == 0)
                        o->app_id = val;
                else if (strcmp(opt, "--ui-url") == 0)
                        o->ui_url = val;
                else if (strcmp(opt, "--worker-id") == 0)
                        o->worker_id = val;
                else if (strcmp(opt, "--key") == 0) {
                        if (!parse_hex(val, o->key, sizeof(o->key), &o->key_len))
                                return usage();
                }
                else if (strcmp(opt, "--max-cores") == 0 || strcmp(opt, "--cores-per-executor") == 0 ||
                         strcmp(opt, "--cores") == 0 || strcmp(opt, "--memory") == 0 ||
                         strcmp(opt, "--executor-id") == 0 || strcmp(opt, "--epoch") == 0) {
                        long *p = strcmp(opt, "--max-cores") == 0     ? &o->max_cores
                                  : strcmp(opt, "--epoch") == 0       ? &o->epoch
                                  : strcmp(opt, "--memory") == 0      ? &o->memory_mb
                                  : strcmp(opt, "--executor-id") == 0 ? &o->executor_id
                                                                      : &o->cores;
                        if (!parse_long(val, p))
                                return usage();
                } else if ((strcmp(opt, "--env") == 0 || strcmp(opt, "--env-pair") == 0) && o->n_env < MAX_ENV) {
                        Spark__KeyValue *e = &kv[o->n_env];

                        spark__key_value__init(e);
                        if (strcmp(opt, "--env") == 0) {
                                const char *eq = strchr(val, '=');
                                if (!eq)
                                        return usage();
                                e->key = strndup(val, (size_t) (eq - val));
                                e->value = (char *) eq + 1;
                        } else {
                                if (i + 1 >= argc)
                                        return usage();
                                e->key = (char *) val;
                                e->value = argv[++i];
                        }
                        o->env[o->n_env++] = e;
                } else
                        return usage();
        }
        return 0;
}

static int cmd_register(const char *master, int argc, char **argv) {
        Spark__RegisterApplication ra = SPARK__REGISTER_APPLICATION__INIT;
        Envelope env = ENVELOPE_INIT, *reply = NULL;
        Options o = {
                .name = "fake", .driver_url = "tcp://127.0.0.1:9", .driver_events = "", .app_id = "",
                .cores = 1, .memory_mb = 64, .key_len = 32,
        };
        int r;

        memset(o.key, 0x5a, o.key_len);

        r = parse_options(argc, argv, &o);
        if (r != 0)
                return r;
        ra.name = (char *) o.name;
        ra.driver_url = (char *) o.driver_url;
        ra.driver_events = (char *) o.driver_events;
        ra.app_id = (char *) o.app_id;
        ra.ui_url = (char *) (o.ui_url ? o.ui_url : "");
        ra.max_cores = (int32_t) o.max_cores;
        ra.cores_per_executor = (int32_t) o.cores;
        ra.executor_memory_mb = o.memory_mb;
        ra.executor_env = o.env;
        ra.n_executor_env = o.n_env;
        ra.executor_key = (ProtobufCBinaryData) { .len = o.key_len, .data = o.key };

        ENVELOPE_SET(&env, REGISTER_APPLICATION, register_application, &ra);
        r = call(master, &env, SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY, &reply);
        if (r != 0)
                return r;
        printf("%s\n", reply->register_application_reply->app_id);
        envelope_free(reply);
        return 0;
}

/* The master's LaunchExecutor, sent to a worker by hand. */
static int cmd_launch(const char *worker, int argc, char **argv) {
        Spark__LaunchExecutor le = SPARK__LAUNCH_EXECUTOR__INIT;
        Envelope env = ENVELOPE_INIT;
        Options o = {
                .driver_url = "tcp://127.0.0.1:9", .app_id = "", .worker_id = "", .cores = 1, .memory_mb = 64,
                .executor_id = 1, .key_len = 32,
        };
        int r;

        memset(o.key, 0x5a, o.key_len);

        r = parse_options(argc, argv, &o);
        if (r != 0)
                return r;
        le.app_id = (char *) o.app_id;
        le.executor_id = (int32_t) o.executor_id;
        le.worker_id = (char *) o.worker_id;
        le.cores = (int32_t) o.cores;
        le.memory_mb = o.memory_mb;
        le.driver_url = (char *) o.driver_url;
        le.env = o.env;
        le.n_env = o.n_env;
        le.executor_key = (ProtobufCBinaryData) { .len = o.key_len, .data = o.key };
        le.master_epoch = (uint64_t) o.epoch;  /* a leader's, to test fencing */

        ENVELOPE_SET(&env, LAUNCH_EXECUTOR, launch_executor, &le);
        return call_ack(worker, &env);
}

static int cmd_unregister(const char *master, int argc, char **argv) {
        Spark__UnregisterApplication ua = SPARK__UNREGISTER_APPLICATION__INIT;
        Envelope env = ENVELOPE_INIT;

        if (argc < 1 || argc > 2)
                return usage();
        ua.app_id = argv[0];
        ua.reason = argc > 1 ? argv[1] : (char *) "";
        ENVELOPE_SET(&env, UNREGISTER_APPLICATION, unregister_application, &ua);
        return call_ack(master, &env);
}

static int cmd_request_executors(const char *master, int argc, char **argv) {
        Spark__RequestExecutors re = SPARK__REQUEST_EXECUTORS__INIT;
        Envelope env = ENVELOPE_INIT;
        long n;

        if (argc != 2 || !parse_long(argv[1], &n))
                return usage();
        re.app_id = argv[0];
        re.total = (int32_t) n;
        ENVELOPE_SET(&env, REQUEST_EXECUTORS, request_executors, &re);
        return call_ack(master, &env);
}

#define LOAD_ENTRIES_MAX 64

/* An ExecutorLoad as a driver sends it, with whatever ids and counts it is
 * given (negative ones too: the master must refuse them). */
static int cmd_executor_load(const char *master, int argc, char **argv) {
        Spark__ExecutorLoad el = SPARK__EXECUTOR_LOAD__INIT;
        Spark__ExecutorTasks entries[LOAD_ENTRIES_MAX], *ptrs[LOAD_ENTRIES_MAX];
        Envelope env = ENVELOPE_INIT;

        if (argc < 1 || argc - 1 > LOAD_ENTRIES_MAX)
                return usage();
        el.app_id = argv[0];
        for (int i = 1; i < argc; i++) {
                char *eq = strchr(argv[i], '=');
                long id, n;

                if (!eq)
                        return usage();
                *eq = 0;
                if (!parse_long(argv[i], &id) || !parse_long(eq + 1, &n))
                        return usage();
                spark__executor_tasks__init(&entries[i - 1]);
                entries[i - 1].executor_id = (int32_t) id;
                entries[i - 1].running_tasks = (int32_t) n;
                ptrs[i - 1] = &entries[i - 1];
        }
        el.executors = ptrs;
        el.n_executors = (size_t) (argc - 1);
        ENVELOPE_SET(&env, EXECUTOR_LOAD, executor_load, &el);
        return call_ack(master, &env);
}

/* "running" for EXECUTOR_RUNNING, as sparkctl status --json says it */
static const char *state_name(const ProtobufCEnumDescriptor *d, int value, const char *prefix) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, value);
        static char buf[64];
        size_t n = strlen(prefix), i;
        const char *name;

        if (!v)
                return "invalid";
        name = strncmp(v->name, prefix, n) == 0 ? v->name + n : v->name;
        for (i = 0; name[i] && i < sizeof(buf) - 1; i++)
                buf[i] = (char) tolower((unsigned char) name[i]);
        buf[i] = 0;
        return buf;
}

static const char *s(const char *p) {
        return p && *p ? p : "-";
}

static void print_executor(const char *what, const Envelope *env, const Spark__ExecutorInfo *e) {
        out_line("epoch=%" PRIu64 " seq=%" PRIu64 " %s app=%s exec=%d worker=%s state=%s exit_code=%d unit=%s "
                 "reason=%s",
                 env->epoch, env->seq, what, s(e->app_id), e->executor_id, s(e->worker_id),
                 state_name(&spark__executor_state__descriptor, e->state, "EXECUTOR_"), e->exit_code, s(e->unit),
                 s(e->reason));
}

static void print_event(const Envelope *env) {
        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED: {
                const Spark__ExecutorStateChanged *c = env->executor_state_changed;
                out_line("epoch=%" PRIu64 " seq=%" PRIu64 " executor_state_changed app=%s exec=%d worker=%s "
                         "state=%s exit_code=%d unit=%s pid=%" PRIi64 " reason=%s",
                         env->epoch, env->seq, s(c->app_id), c->executor_id, s(c->worker_id),
                         state_name(&spark__executor_state__descriptor, c->state, "EXECUTOR_"), c->exit_code,
                         s(c->unit), c->pid, s(c->reason));
                break;
        }
        case SPARK__ENVELOPE__BODY_EXECUTOR_ADDED:
                if (env->executor_added->executor)
                        print_executor("executor_added", env, env->executor_added->executor);
                break;
        case SPARK__ENVELOPE__BODY_EXECUTOR_UPDATED:
                if (env->executor_updated->executor)
                        print_executor("executor_updated", env, env->executor_updated->executor);
                break;
        case SPARK__ENVELOPE__BODY_WORKER_LOST:
                out_line("epoch=%" PRIu64 " seq=%" PRIu64 " worker_lost worker=%s reason=%s", env->epoch, env->seq,
                         s(env->worker_lost->worker_id), s(env->worker_lost->reason));
                break;
        case SPARK__ENVELOPE__BODY_APPLICATION_REMOVED:
                out_line("epoch=%" PRIu64 " seq=%" PRIu64 " application_removed app=%s state=%s reason=%s",
                         env->epoch, env->seq, s(env->application_removed->app_id),
                         state_name(&spark__app_state__descriptor, env->application_removed->state, "APP_"),
                         s(env->application_removed->reason));
                break;
        default:
                out_line("epoch=%" PRIu64 " seq=%" PRIu64 " %s", env->epoch, env->seq, envelope_body_name(env));
        }
}

static void on_pipe(nng_pipe p, nng_pipe_ev ev, void *userdata) {
        (void) p, (void) userdata;
        out_line(ev == NNG_PIPE_EV_ADD_POST ? "connected" : "disconnected");
}

static int cmd_subscribe(int argc, char **argv) {
        const char *url;
        long timeout_s = 120;
        uint64_t deadline;
        nng_socket sock;
        int rv;

        if (argc < 1)
                return usage();
        url = argv[0];
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc && parse_long(argv[i + 1], &timeout_s))
                        i++;
                else
                        return usage();
        }
        deadline = nng_util_now_ms() + (uint64_t) timeout_s * 1000;

        if ((rv = nng_sub0_open(&sock)) != 0 || (rv = nng_socket_set(sock, NNG_OPT_SUB_SUBSCRIBE, "", 0)) != 0 ||
            (rv = nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, 200)) != 0 ||
            (rv = nng_socket_set_ms(sock, NNG_OPT_RECONNMINT, 50)) != 0 ||
            (rv = nng_socket_set_ms(sock, NNG_OPT_RECONNMAXT, 200)) != 0 ||
            (rv = nng_socket_set_int(sock, NNG_OPT_RECVBUF, 8192)) != 0 ||
            (rv = nng_pipe_notify(sock, NNG_PIPE_EV_ADD_POST, on_pipe, NULL)) != 0 ||
            (rv = nng_pipe_notify(sock, NNG_PIPE_EV_REM_POST, on_pipe, NULL)) != 0 ||
            (rv = nng_dial(sock, url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
                fprintf(stderr, "fake-driver: cannot subscribe to %s: %s\n", url, nng_strerror(rv));
                return 3;
        }

        while (nng_util_now_ms() < deadline) {
                nng_msg *msg = NULL;
                Envelope *env = NULL;
                int r;

                rv = nng_recvmsg(sock, &msg, 0);
                if (rv == NNG_ETIMEDOUT)
                        continue;
                if (rv != 0) {
                        fprintf(stderr, "fake-driver: receive failed: %s\n", nng_strerror(rv));
                        break;
                }
                r = envelope_decode(nng_msg_body(msg), nng_msg_len(msg), SPARK_MAX_MESSAGE_BYTES, &env);
                nng_msg_free(msg);
                if (r < 0) {
                        out_line("malformed %s", strerror(-r));
                        continue;
                }
                print_event(env);
                envelope_free(env);
        }
        nng_close(sock);
        return 0;
}

int main(int argc, char **argv) {
        const char *master = NULL;
        int i = 1;

        if (argc >= 3 && strcmp(argv[1], "--master") == 0) {
                master = argv[2];
                i = 3;
        }
        if (i >= argc)
                return usage();
        if (strcmp(argv[i], "subscribe") == 0)
                return cmd_subscribe(argc - i - 1, argv + i + 1);
        if (!master)
                return usage();
        if (strcmp(argv[i], "register") == 0)
                return cmd_register(master, argc - i - 1, argv + i + 1);
        if (strcmp(argv[i], "unregister") == 0)
                return cmd_unregister(master, argc - i - 1, argv + i + 1);
        if (strcmp(argv[i], "request-executors") == 0)
                return cmd_request_executors(master, argc - i - 1, argv + i + 1);
        if (strcmp(argv[i], "executor-load") == 0)
                return cmd_executor_load(master, argc - i - 1, argv + i + 1);
        if (strcmp(argv[i], "launch") == 0)
                return cmd_launch(master, argc - i - 1, argv + i + 1);
        return usage();
}
