/* libFuzzer target: the task channel of rpc-server (rpc-server-stream.c,
 * stream-frame.h) on arbitrary bytes.  One real RpcServer on a loopback
 * port; each input is written as it is on a new connection, whose write
 * side is then shut, and the loop runs until the server has closed it.
 * The handler answers a RegisterApplication at once, or parks it when its
 * name starts with "park" (answered after the connection is gone: the
 * answer must be dropped without harm); anything else it fails.
 *
 * Oracles: no crash or leak; every answer read back is a whole frame whose
 * body decodes and whose tag is one that was sent; no more answers than
 * frames; the server closes each connection (at the end of the stream, or
 * at a frame it refuses) and holds nothing of it afterwards (no request
 * waiting); a fresh connection is then answered as usual. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz-util.h"
#include "rpc-server.h"
#include "stream-frame.h"
#include "time-util.h"

#define MAX_PARKED 64
#define MAX_FRAMES 4096

static sd_event *event;
static RpcServer *server;
static uint16_t port;
static RpcRequest *parked[MAX_PARKED];
static size_t n_parked;

static int handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Spark__RegisterApplicationReply rr = SPARK__REGISTER_APPLICATION_REPLY__INIT;
        Envelope reply = ENVELOPE_INIT;
        (void) s, (void) userdata;

        if (env->body_case != SPARK__ENVELOPE__BODY_REGISTER_APPLICATION)
                return -EOPNOTSUPP;
        if (env->register_application->name && strncmp(env->register_application->name, "park", 4) == 0 &&
            n_parked < MAX_PARKED) {
                parked[n_parked++] = req;
                return 0;
        }
        rr.app_id = (char *) "app";
        ENVELOPE_SET(&reply, REGISTER_APPLICATION_REPLY, register_application_reply, &rr);
        return rpc_request_reply_envelope(req, &reply);
}

/* Queues a RegisterApplication of this name as a frame. */
static void append_register_app(StreamWriter *w, uint32_t tag, const char *name) {
        Spark__RegisterApplication ra = SPARK__REGISTER_APPLICATION__INIT;
        Envelope env = ENVELOPE_INIT;
        void *buf;
        size_t len;

        ra.name = (char *) name;
        ENVELOPE_SET(&env, REGISTER_APPLICATION, register_application, &ra);
        FUZZ_ASSERT(envelope_encode(&env, &buf, &len) == 0);
        FUZZ_ASSERT(stream_writer_append(w, tag, buf, len) == 0);
        free(buf);
}

static void write_seeds(const char *dir) {
        StreamWriter w = {};

        append_register_app(&w, 1, "now");
        append_register_app(&w, 2, "park-me");
        FUZZ_ASSERT(stream_writer_append(&w, 3, "\x08\x01", 2) == 0); /* no body */
        fuzz_write_seed_raw(dir, "three-frames", w.buf + w.start, w.end - w.start);
        /* a length over the limit, then more */
        fuzz_write_seed_raw(dir, "too-long", "\x7f\xff\xff\xff\x00\x00\x00\x01xyz", 11);
        stream_writer_done(&w);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        char url[64];
        int r;
        (void) argc, (void) argv;

        fuzz_write_seeds_if_asked(write_seeds);
        fuzz_quiet_logs();
        signal(SIGPIPE, SIG_IGN);
        FUZZ_ASSERT(sd_event_new(&event) >= 0);
        /* a port of its own: the kernel picks one for a throwaway socket */
        for (int attempt = 0;; attempt++) {
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t len = sizeof(sa);
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

                FUZZ_ASSERT(fd >= 0);
                FUZZ_ASSERT(bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);
                FUZZ_ASSERT(getsockname(fd, (struct sockaddr *) &sa, &len) == 0);
                close(fd);
                snprintf(url, sizeof(url), "tcp://127.0.0.1:%u", ntohs(sa.sin_port));
                r = rpc_server_new_envelope(event, url, &(RpcServerConfig) { .max_request_bytes = 1 << 20 },
                                            handler, NULL, &server);
                if (r == 0 || attempt == 10)
                        break;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(rpc_server_listen_stream(server, NULL, &port, NULL) == 0);
        return 0;
}

static int dial(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        FUZZ_ASSERT(fd >= 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        FUZZ_ASSERT(connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0 || errno == EINPROGRESS);
        return fd;
}

/* The tags of the input's frames, as far as their lengths say. */
typedef struct Tags {
        uint32_t tag[MAX_FRAMES];
        size_t n;
} Tags;

static bool tag_sent(const Tags *t, uint32_t tag) {
        for (size_t i = 0; i < t->n; i++)
                if (t->tag[i] == tag)
                        return true;
        return false;
}

/* The whole answers the reader holds: each must decode, with a tag sent. */
static size_t take_answers(StreamReader *r, const Tags *tags) {
        const uint8_t *body;
        size_t len, n = 0;
        uint32_t tag;
        int k;

        while ((k = stream_reader_next(r, &tag, &body, &len)) > 0) {
                Envelope *env = NULL;

                FUZZ_ASSERT(tag_sent(tags, tag));
                FUZZ_ASSERT(envelope_decode(body, len, SPARK_MAX_MESSAGE_BYTES, &env) == 0);
                envelope_free(env);
                n++;
        }
        FUZZ_ASSERT(k == 0);
        return n;
}

/* Sends data on a new connection and reads the answers until the server
 * closes it; returns how many answers came.  (A frame cut short at the
 * close is no finding: the server may close a connection with an answer
 * half written, when a later frame is refused.) */
static size_t converse(const uint8_t *data, size_t size, const Tags *tags) {
        usec_t deadline = now_mono_usec() + 10 * USEC_PER_SEC;
        StreamReader r;
        size_t off = 0, answers = 0;
        bool shut = false;
        int fd = dial();

        stream_reader_init(&r, SPARK_MAX_MESSAGE_BYTES);
        for (;;) {
                int k;

                FUZZ_ASSERT(now_mono_usec() < deadline); /* the server neither answered nor closed */
                if (off < size) {
                        ssize_t n = send(fd, data + off, size - off, MSG_DONTWAIT | MSG_NOSIGNAL);

                        if (n > 0)
                                off += (size_t) n;
                        else if (n < 0 && errno != EAGAIN && errno != ENOTCONN)
                                off = size; /* closed by the server already */
                }
                if (off >= size && !shut) {
                        (void) shutdown(fd, SHUT_WR);
                        shut = true;
                }
                FUZZ_ASSERT(sd_event_run(event, 1000) >= 0);
                k = stream_reader_fill(&r, fd);
                answers += take_answers(&r, tags);
                if (k == 0 || (k < 0 && k != -EAGAIN))
                        break;
        }
        stream_reader_done(&r);
        close(fd);
        return answers;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static Tags tags;
        static const Tags good_tag = { .tag = { 7 }, .n = 1 };
        RpcServerStats before, after;
        size_t frames = 0, answers, off = 0;
        uint8_t good[64];

        /* the frames the input holds, as far as lengths say, and their tags
         * (a frame cut short may be answered too: its length may be over
         * the limit, which the server answers by closing, not with a tag) */
        tags.n = 0;
        while (size - off >= STREAM_FRAME_HEADER && tags.n < MAX_FRAMES) {
                uint32_t n = (uint32_t) data[off] << 24 | (uint32_t) data[off + 1] << 16 |
                             (uint32_t) data[off + 2] << 8 | data[off + 3];
                uint32_t tag = (uint32_t) data[off + 4] << 24 | (uint32_t) data[off + 5] << 16 |
                               (uint32_t) data[off + 6] << 8 | data[off + 7];

                tags.tag[tags.n++] = tag;
                if (n > size - off - STREAM_FRAME_HEADER)
                        break;
                frames++;
                off += STREAM_FRAME_HEADER + n;
        }

        rpc_server_get_stats(server, &before);
        answers = converse(data, size, &tags);
        FUZZ_ASSERT(answers <= frames || tags.n == MAX_FRAMES);
        /* the parked ones, answered after their connection went */
        for (size_t i = 0; i < n_parked; i++)
                FUZZ_ASSERT(rpc_request_reply_ack(parked[i]) == 0);
        n_parked = 0;
        rpc_server_get_stats(server, &after);
        FUZZ_ASSERT(after.waiting == 0);
        FUZZ_ASSERT(after.requests - before.requests <= frames);

        /* and the server still serves */
        {
                StreamWriter w = {};

                append_register_app(&w, 7, "after");
                FUZZ_ASSERT(w.end - w.start <= sizeof(good));
                memcpy(good, w.buf + w.start, w.end - w.start);
                FUZZ_ASSERT(converse(good, w.end - w.start, &good_tag) == 1);
                stream_writer_done(&w);
        }
        return 0;
}
