/* hostile-client: sends one request of any shape to a daemon's request
 * endpoint and prints what came back, for black-box tests of bad input
 * (tests/integration/test-hostile-input.sh).
 *
 *   hostile-client [OPTIONS] URL send BODY [FIELD=VALUE]...
 *       an envelope with body BODY ("register_worker", "poll", ...) whose
 *       fields are set by name through the schema's descriptors:
 *         cores=-1  name=a\ b  kind=TASK_COMMAND  reregister=true
 *         executor_env.0.key=LD_PRELOAD   repeated messages: FIELD.N.SUB
 *         inputs.1=hello  preferred_hosts.0=h   repeated scalars: FIELD.N
 *       a value is taken as it is (newlines and all); "@FILE" reads bytes
 *       fields from FILE
 *   hostile-client [OPTIONS] URL raw HEX        these bytes
 *   hostile-client [OPTIONS] URL garbage N      N pseudo-random bytes
 *   hostile-client [OPTIONS] URL unknown-body   a version-1 envelope whose
 *                                               body is an unknown field
 *   Several requests separated by "+" go one after the other on one
 *   connection (an executor registers, then polls), one line each.
 *
 * OPTIONS
 *   --timeout MS   wait this long for the answer (default 3000)
 *   --version N    the envelope's protocol version (default 1)
 *   --truncate N   send only the first N bytes (N < 0: all but the last -N)
 *   --pad N        append an unknown field of N bytes (a message too big)
 *   --print-size   also print the request's size on stderr
 *   --tls-ca FILE  for a tls+tcp:// URL: verify the server with this CA,
 *                  and present no certificate (what an executor holds)
 *
 * Prints one line and exits with:
 *   0  "error CODE MESSAGE"      the daemon answered with an Error
 *   1  "reply BODY [k=v ...]"    it answered with something else
 *   3  "noreply WHY"             no answer (connection refused or dropped,
 *                                timeout) or one that does not decode
 *   2  usage */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "codec.h"
#include "fileio.h"
#include "macro.h"
#include "nng-util.h"
#include "tls.h"

static int usage(void) {
        fprintf(stderr,
                "usage: hostile-client [--timeout MS] [--version N] [--truncate N] [--pad N] [--tls-ca FILE] URL\n"
                "           send BODY [FIELD=VALUE]... | raw HEX | garbage N | unknown-body\n");
        return 2;
}

static void die_oom(void) {
        fprintf(stderr, "hostile-client: out of memory\n");
        exit(4);
}

static void *xcalloc(size_t n, size_t size) {
        void *p = calloc(n ? n : 1, size ? size : 1);
        if (!p)
                die_oom();
        return p;
}

/* --------------------------------------------------------- reflection */

static size_t element_size(ProtobufCType t) {
        switch (t) {
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
        case PROTOBUF_C_TYPE_DOUBLE:
                return 8;
        case PROTOBUF_C_TYPE_BOOL:
                return sizeof(protobuf_c_boolean);
        case PROTOBUF_C_TYPE_STRING:
        case PROTOBUF_C_TYPE_MESSAGE:
                return sizeof(void *);
        case PROTOBUF_C_TYPE_BYTES:
                return sizeof(ProtobufCBinaryData);
        default:
                return 4;
        }
}

static ProtobufCMessage *message_new(const ProtobufCMessageDescriptor *d) {
        ProtobufCMessage *m = xcalloc(1, d->sizeof_message);
        d->message_init(m);
        return m;
}

static bool parse_int(const char *s, long long lo, long long hi, long long *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 0);
        if (!*s || *end || errno != 0 || v < lo || v > hi)
                return false;
        *ret = v;
        return true;
}

static bool read_file(const char *path, ProtobufCBinaryData *ret) {
        char *data;
        size_t len;

        if (read_full_file(path, 0, 0, &data, &len) < 0)
                return false;
        ret->data = (uint8_t *) data;
        ret->len = len;
        return true;
}

/* Stores value as one element of field f at p. */
static bool value_set(const ProtobufCFieldDescriptor *f, void *p, const char *value) {
        long long v;

        switch (f->type) {
        case PROTOBUF_C_TYPE_INT32:
        case PROTOBUF_C_TYPE_SINT32:
        case PROTOBUF_C_TYPE_SFIXED32:
                if (!parse_int(value, INT32_MIN, INT32_MAX, &v))
                        return false;
                *(int32_t *) p = (int32_t) v;
                return true;
        case PROTOBUF_C_TYPE_UINT32:
        case PROTOBUF_C_TYPE_FIXED32:
                if (!parse_int(value, 0, UINT32_MAX, &v))
                        return false;
                *(uint32_t *) p = (uint32_t) v;
                return true;
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
                if (!parse_int(value, LLONG_MIN, LLONG_MAX, &v))
                        return false;
                *(int64_t *) p = (int64_t) v;
                return true;
        case PROTOBUF_C_TYPE_BOOL:
                *(protobuf_c_boolean *) p = streq(value, "true") || streq(value, "1");
                return true;
        case PROTOBUF_C_TYPE_ENUM: {
                const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, value);
                if (ev)
                        v = ev->value;
                else if (!parse_int(value, INT32_MIN, INT32_MAX, &v))
                        return false;
                *(int *) p = (int) v;
                return true;
        }
        case PROTOBUF_C_TYPE_STRING:
                if (*(char **) p != protobuf_c_empty_string)
                        free(*(char **) p);
                *(char **) p = strdup(value);
                if (!*(char **) p)
                        die_oom();
                return true;
        case PROTOBUF_C_TYPE_BYTES: {
                ProtobufCBinaryData *b = p;
                free(b->data);
                if (value[0] == '@')
                        return read_file(value + 1, b);
                b->len = strlen(value);
                b->data = (uint8_t *) strdup(value);
                if (!b->data)
                        die_oom();
                return true;
        }
        default:
                return false;
        }
}

/* Sets "a.b.N.c" = value in m; repeated fields grow to hold index N. */
static bool field_set(ProtobufCMessage *m, char *path, const char *value) {
        char *dot = strchr(path, '.'), *rest = NULL;
        const ProtobufCFieldDescriptor *f;
        uint8_t *base = (uint8_t *) m;
        void *slot;

        if (dot) {
                *dot = 0;
                rest = dot + 1;
        }
        f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor, path);
        if (!f) {
                fprintf(stderr, "hostile-client: %s has no field %s\n", m->descriptor->name, path);
                return false;
        }

        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                size_t *n = (size_t *) (base + f->quantifier_offset);
                void **arr = (void **) (base + f->offset);
                size_t es = element_size(f->type);
                long long idx;
                char *sub;

                if (!rest) {
                        fprintf(stderr, "hostile-client: %s is repeated: say %s.N\n", path, path);
                        return false;
                }
                sub = strchr(rest, '.');
                if (sub)
                        *sub++ = 0;
                if (!parse_int(rest, 0, 1000000, &idx))
                        return false;
                if ((size_t) idx >= *n) {
                        uint8_t *t = realloc(*arr, ((size_t) idx + 1) * es);
                        if (!t)
                                die_oom();
                        memset(t + *n * es, 0, ((size_t) idx + 1 - *n) * es);
                        if (f->type == PROTOBUF_C_TYPE_MESSAGE)
                                for (size_t i = *n; i <= (size_t) idx; i++)
                                        ((void **) t)[i] = message_new(f->descriptor);
                        if (f->type == PROTOBUF_C_TYPE_STRING)
                                for (size_t i = *n; i <= (size_t) idx; i++)
                                        if (!(((char **) t)[i] = strdup("")))
                                                die_oom();
                        *arr = t;
                        *n = (size_t) idx + 1;
                }
                slot = (uint8_t *) *arr + (size_t) idx * es;
                rest = sub;
        } else
                slot = base + f->offset;

        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                ProtobufCMessage **sm = slot;
                if (!rest) {
                        fprintf(stderr, "hostile-client: %s is a message: say %s.FIELD\n", path, path);
                        return false;
                }
                if (!*sm)
                        *sm = message_new(f->descriptor);
                return field_set(*sm, rest, value);
        }
        if (rest) {
                fprintf(stderr, "hostile-client: %s is not a message\n", path);
                return false;
        }
        if (!value_set(f, slot, value)) {
                fprintf(stderr, "hostile-client: bad value for %s: \"%s\"\n", path, value);
                return false;
        }
        return true;
}

static Envelope *envelope_build(const char *body, char **fields, int n_fields) {
        const ProtobufCFieldDescriptor *f =
                protobuf_c_message_descriptor_get_field_by_name(&spark__envelope__descriptor, body);
        Envelope *env;

        if (!f || !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
                fprintf(stderr, "hostile-client: no body type %s\n", body);
                return NULL;
        }
        env = xcalloc(1, sizeof(*env));
        spark__envelope__init(env);
        env->version = SPARK_PROTOCOL_VERSION;
        *(uint32_t *) ((uint8_t *) env + f->quantifier_offset) = f->id;
        *(ProtobufCMessage **) ((uint8_t *) env + f->offset) = message_new(f->descriptor);

        for (int i = 0; i < n_fields; i++) {
                char *eq = strchr(fields[i], '='), *path;
                bool ok;

                if (!eq) {
                        fprintf(stderr, "hostile-client: not FIELD=VALUE: %s\n", fields[i]);
                        envelope_free(env);
                        return NULL;
                }
                path = strndup(fields[i], (size_t) (eq - fields[i]));
                if (!path)
                        die_oom();
                ok = field_set(*(ProtobufCMessage **) ((uint8_t *) env + f->offset), path, eq + 1);
                free(path);
                if (!ok) {
                        envelope_free(env);
                        return NULL;
                }
        }
        return env;
}

/* ---------------------------------------------------------------- wire */

static uint8_t *append_varint(uint8_t *p, uint64_t v) {
        do {
                *p++ = (uint8_t) ((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
                v >>= 7;
        } while (v);
        return p;
}

/* The header of an unknown length-delimited field (number 1000) of n
 * bytes; the n bytes themselves are written straight into the message. */
static void append_padding_header(uint8_t **buf, size_t *len, size_t n) {
        uint8_t *t = realloc(*buf, *len + 16), *p;

        if (!t)
                die_oom();
        p = append_varint(t + *len, (1000u << 3) | 2u);
        p = append_varint(p, n);
        *len = (size_t) (p - t);
        *buf = t;
}

static void print_reply(const Envelope *env) {
        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_ERROR: {
                char *msg = env->error->message ? env->error->message : (char *) "";
                for (char *c = msg; *c; c++)
                        if (*c == '\n')
                                *c = ' ';
                printf("error %d %s\n", env->error->code, msg);
                return;
        }
        case SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY:
                printf("reply %s app_id=%s\n", envelope_body_name(env), env->register_application_reply->app_id);
                return;
        case SPARK__ENVELOPE__BODY_HEARTBEAT_REPLY:
                printf("reply %s reregister=%d\n", envelope_body_name(env), env->heartbeat_reply->reregister);
                return;
        case SPARK__ENVELOPE__BODY_POLL_REPLY:
                printf("reply %s shutdown=%d tasks=%zu reason=%s\n", envelope_body_name(env), env->poll_reply->shutdown,
                       env->poll_reply->n_tasks, env->poll_reply->reason ? env->poll_reply->reason : "");
                return;
        case SPARK__ENVELOPE__BODY_SUBMIT_JOB_REPLY:
                printf("reply %s job_id=%s tasks=%d\n", envelope_body_name(env), env->submit_job_reply->job_id,
                       env->submit_job_reply->tasks);
                return;
        case SPARK__ENVELOPE__BODY_CLUSTER_STATE:
                printf("reply %s workers=%zu apps=%zu executors=%zu\n", envelope_body_name(env),
                       env->cluster_state->n_workers, env->cluster_state->n_apps, env->cluster_state->n_executors);
                return;
        case SPARK__ENVELOPE__BODY_FETCH_RESULTS_REPLY:
                printf("reply %s outcomes=%zu\n", envelope_body_name(env), env->fetch_results_reply->n_outcomes);
                return;
        default:
                printf("reply %s\n", envelope_body_name(env));
                return;
        }
}

/* One request on the open socket: len bytes of buf, then tail bytes of
 * padding; prints the answer's line. */
static int exchange(nng_socket sock, const void *buf, size_t len, size_t tail) {
        nng_msg *m = NULL;
        Envelope *env = NULL;
        int rv, r;

        rv = nng_msg_alloc(&m, len + tail);
        if (rv == 0) {
                if (len > 0)
                        memcpy(nng_msg_body(m), buf, len);
                memset((uint8_t *) nng_msg_body(m) + len, 'x', tail);
                rv = nng_sendmsg(sock, m, 0);
                if (rv != 0)
                        nng_msg_free(m);
        }
        if (rv == 0)
                rv = nng_recvmsg(sock, &m, 0);
        if (rv != 0) {
                printf("noreply %s\n", nng_strerror(rv));
                return 3;
        }
        r = envelope_decode(nng_msg_body(m), nng_msg_len(m), SIZE_MAX, &env);
        nng_msg_free(m);
        if (r < 0) {
                printf("noreply the answer does not decode: %s\n", strerror(-r));
                return 3;
        }
        print_reply(env);
        r = env->body_case == SPARK__ENVELOPE__BODY_ERROR ? 0 : 1;
        envelope_free(env);
        return r;
}

typedef struct Options {
        long long version, truncate_to, pad;
        bool truncate_set, print_size;
} Options;

/* Builds the bytes of one request from args[0..n) (MODE ARGS...). */
static int build_request(const Options *o, char **args, int n, uint8_t **ret, size_t *ret_len, size_t *ret_tail) {
        const char *mode = args[0];
        uint8_t *buf = NULL;
        size_t len = 0, tail = 0;
        long long v;

        if (streq(mode, "send")) {
                Envelope *env;
                if (n < 2)
                        return usage();
                env = envelope_build(args[1], args + 2, n - 2);
                if (!env)
                        return 2;
                env->version = (uint32_t) o->version;
                len = spark__envelope__get_packed_size(env);
                buf = xcalloc(1, len);
                spark__envelope__pack(env, buf);
                envelope_free(env);
        } else if (streq(mode, "raw")) {
                const char *hex = n >= 2 ? args[1] : "";
                len = strlen(hex) / 2;
                buf = xcalloc(1, len);
                for (size_t k = 0; k < len; k++) {
                        unsigned byte;
                        if (sscanf(hex + 2 * k, "%2x", &byte) != 1)
                                return usage();
                        buf[k] = (uint8_t) byte;
                }
        } else if (streq(mode, "garbage")) {
                uint32_t x = 2463534242u;
                if (n < 2 || !parse_int(args[1], 0, 1 << 30, &v))
                        return usage();
                len = (size_t) v;
                buf = xcalloc(1, len);
                for (size_t k = 0; k < len; k++) {
                        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                        buf[k] = (uint8_t) x;
                }
        } else if (streq(mode, "unknown-body")) {
                /* version 1, then field 99 (length-delimited, empty) */
                static const uint8_t unknown[] = { 0x08, 0x01, 0x9a, 0x06, 0x00 };
                len = sizeof(unknown);
                buf = xcalloc(1, len);
                memcpy(buf, unknown, len);
        } else
                return usage();

        if (o->pad > 0) {
                append_padding_header(&buf, &len, (size_t) o->pad);
                tail = (size_t) o->pad;
        }
        if (o->truncate_set) {
                size_t total = len + tail;
                if (o->truncate_to < 0)
                        total = (size_t) -o->truncate_to >= total ? 0 : total - (size_t) -o->truncate_to;
                else if ((size_t) o->truncate_to < total)
                        total = (size_t) o->truncate_to;
                tail = total > len ? total - len : 0;
                len = MIN(len, total);
        }
        if (o->print_size)
                fprintf(stderr, "hostile-client: sending %zu bytes\n", len + tail);
        *ret = buf;
        *ret_len = len;
        *ret_tail = tail;
        return 0;
}

int main(int argc, char **argv) {
        Options o = { .version = SPARK_PROTOCOL_VERSION };
        TlsSettings tls = {};
        int timeout_ms = 3000, i = 1, r = 2, rv;
        const char *url;
        nng_socket sock;
        long long v;

        for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
                const char *opt = argv[i];
                if (streq(opt, "--print-size")) {
                        o.print_size = true;
                        continue;
                }
                if (streq(opt, "--tls-ca") && i + 1 < argc) {
                        tls.ca_file = argv[++i];
                        continue;
                }
                if (i + 1 >= argc || !parse_int(argv[i + 1], LLONG_MIN, LLONG_MAX, &v))
                        return usage();
                i++;
                if (streq(opt, "--timeout") && v > 0 && v < INT_MAX)
                        timeout_ms = (int) v;
                else if (streq(opt, "--version") && v >= 0 && v <= UINT32_MAX)
                        o.version = v;
                else if (streq(opt, "--truncate"))
                        o.truncate_to = v, o.truncate_set = true;
                else if (streq(opt, "--pad") && v >= 0 && v < (1LL << 31))
                        o.pad = v;
                else
                        return usage();
        }
        if (argc - i < 2)
                return usage();
        url = argv[i++];

        rv = nng_req0_open(&sock);
        if (rv == 0) {
                (void) nng_socket_set_size(sock, NNG_OPT_RECVMAXSZ, 0);
                (void) nng_socket_set_ms(sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
                (void) nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, timeout_ms);
                (void) nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, timeout_ms);
                if (tls_url(url)) {
                        /* blocking: a refused handshake is the answer */
                        int k = nng_util_dial(sock, url, &tls, 0, NULL);
                        if (k < 0) {
                                printf("noreply %s\n", strerror(-k));
                                return 3;
                        }
                } else
                        rv = nng_dial(sock, url, NULL, 0);
        }
        if (rv != 0) {
                printf("noreply %s\n", nng_strerror(rv));
                return 3;
        }

        /* requests separated by "+", all on this one connection */
        while (i < argc) {
                int j = i;
                uint8_t *buf = NULL;
                size_t len = 0, tail = 0;

                while (j < argc && !streq(argv[j], "+"))
                        j++;
                r = build_request(&o, argv + i, j - i, &buf, &len, &tail);
                if (r != 0)
                        break;
                fflush(stdout);
                r = exchange(sock, buf, len, tail);
                free(buf);
                fflush(stdout);
                i = j + 1;
        }
        /* No nng_close(): with a large send cut off by the server (a
         * message beyond its limit) nng 1.5.2 can hang in it, and the
         * answer is printed already.  The process's end closes the socket. */
        fflush(stdout);
        _exit(r);
}
