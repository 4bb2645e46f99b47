/* TLS sessions on non-blocking sockets (tls-session.h), both ends in this
 * thread over a socketpair, with the test certificates of tests/data/tls:
 * a client that trusts the CA reaches a server with a certificate for the
 * name it dialled, and frames (stream-frame.h) cross both ways, a large
 * one through full socket buffers too; a server from another CA or for
 * another name is refused with the reason; bad files are named; a peer
 * that speaks no TLS or goes away ends the session with an error, not a
 * hang; a later session resumes an earlier one only where it may.  Runs
 * from the source root. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check-run.h"
#include "macro.h"
#include "stream-frame.h"
#include "tls-session.h"

#define DATA "tests/data/tls/"

typedef struct Pair {
        int fd[2]; /* [0] the client's end, [1] the server's */
        TlsContext *client_ctx, *server_ctx;
        TlsSession *client, *server;
} Pair;

static void pair_open(Pair *p, const char *ca, const char *cert, const char *key, const char *name) {
        const char *failed = NULL;

        *p = (Pair) {};
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p->fd), 0);
        ck_assert_int_eq(tls_context_new_client(ca, &p->client_ctx), 0);
        ck_assert_int_eq(tls_context_new_server(cert, key, &p->server_ctx, &failed), 0);
        ck_assert_int_eq(tls_session_new(p->client_ctx, p->fd[0], name, &p->client), 0);
        ck_assert_int_eq(tls_session_new(p->server_ctx, p->fd[1], NULL, &p->server), 0);
}

static void pair_close(Pair *p) {
        tls_session_free(p->client);
        tls_session_free(p->server);
        tls_context_free(p->client_ctx);
        tls_context_free(p->server_ctx);
        if (p->fd[0] >= 0)
                close(p->fd[0]);
        if (p->fd[1] >= 0)
                close(p->fd[1]);
}

/* Steps both handshakes until each is done or one fails; returns the
 * client's result (the server's in *server_result). */
static int handshake(Pair *p, int *server_result) {
        int c = -EAGAIN, s = -EAGAIN;

        for (unsigned i = 0; i < 1000 && (c == -EAGAIN || s == -EAGAIN); i++) {
                if (c == -EAGAIN)
                        c = tls_session_handshake(p->client);
                if (s == -EAGAIN)
                        s = tls_session_handshake(p->server);
        }
        ck_assert_int_ne(c, -EAGAIN);
        if (server_result)
                *server_result = s;
        return c;
}

/* Moves w's frames to r through the sessions, stepping both; returns the
 * frames read. */
static unsigned pump(TlsSession *from, StreamWriter *w, TlsSession *to, StreamReader *r, unsigned want,
                     uint8_t *last_body, size_t *last_len) {
        unsigned got = 0;

        for (unsigned i = 0; i < 100000 && got < want; i++) {
                const uint8_t *body;
                uint32_t tag;
                size_t len;
                int k;

                ck_assert_int_ge(stream_writer_flush_tls(w, from), 0);
                k = stream_reader_fill_tls(r, to);
                ck_assert(k == 1 || k == -EAGAIN);
                while ((k = stream_reader_next(r, &tag, &body, &len)) > 0) {
                        ck_assert_uint_eq(tag, got);
                        if (last_body)
                                memcpy(last_body, body, len);
                        if (last_len)
                                *last_len = len;
                        got++;
                }
                ck_assert_int_eq(k, 0);
        }
        return got;
}

START_TEST(test_frames_both_ways) {
        StreamWriter w = {};
        StreamReader r;
        Pair p;
        int s;

        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "localhost");
        ck_assert_int_eq(handshake(&p, &s), 0);
        ck_assert_int_eq(s, 0);

        /* 500 small frames, client → server, read as they come */
        stream_reader_init(&r, 1 << 20);
        for (uint32_t i = 0; i < 500; i++)
                ck_assert_int_eq(stream_writer_append(&w, i, &i, sizeof(i)), 0);
        ck_assert_uint_eq(pump(p.client, &w, p.server, &r, 500, NULL, NULL), 500);
        ck_assert(!stream_writer_pending(&w));
        ck_assert(!tls_session_pending(p.server));
        stream_reader_done(&r);
        stream_writer_done(&w);

        /* server → client: nothing there yet, then one frame */
        stream_reader_init(&r, 1 << 20);
        ck_assert_int_eq(stream_reader_fill_tls(&r, p.client), -EAGAIN);
        ck_assert_int_eq(stream_writer_append(&w, 0, "answer", 6), 0);
        ck_assert_uint_eq(pump(p.server, &w, p.client, &r, 1, NULL, NULL), 1);
        stream_reader_done(&r);
        stream_writer_done(&w);
        pair_close(&p);
}
END_TEST

/* 3 MiB in one frame: many records, the socket full many times over, the
 * writer resuming the record it made. */
START_TEST(test_large_frame_through_full_sockets) {
        const size_t size = 3u << 20;
        _cleanup_free_ uint8_t *body = malloc(size), *got = malloc(size);
        StreamWriter w = {};
        StreamReader r;
        size_t len = 0;
        Pair p;

        ck_assert(body && got);
        for (size_t i = 0; i < size; i++)
                body[i] = (uint8_t) (i * 7 + (i >> 13));
        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "127.0.0.1");
        ck_assert_int_eq(handshake(&p, NULL), 0);
        stream_reader_init(&r, size);
        ck_assert_int_eq(stream_writer_append(&w, 0, body, size), 0);
        ck_assert_int_eq(stream_writer_flush_tls(&w, p.server), 0); /* the socket took part of it */
        ck_assert(tls_session_wants_write(p.server));
        ck_assert_uint_eq(pump(p.server, &w, p.client, &r, 1, got, &len), 1);
        ck_assert_uint_eq(len, size);
        ck_assert(memcmp(body, got, size) == 0);
        stream_reader_done(&r);
        stream_writer_done(&w);
        pair_close(&p);
}
END_TEST

START_TEST(test_server_not_trusted) {
        char why[256];
        Pair p;

        /* a CA that did not sign the server's certificate */
        pair_open(&p, DATA "other-ca.pem", DATA "host.pem", DATA "host.key", "localhost");
        ck_assert_int_eq(handshake(&p, NULL), -EKEYREJECTED);
        tls_session_strerror(p.client, why, sizeof(why));
        ck_assert_msg(strstr(why, "not correctly signed by the trusted CA"), "%s", why);
        pair_close(&p);

        /* the right CA, another name */
        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "driver.example.org");
        ck_assert_int_eq(handshake(&p, NULL), -EKEYREJECTED);
        tls_session_strerror(p.client, why, sizeof(why));
        ck_assert_msg(strstr(why, "Common Name (CN) does not match"), "%s", why);
        ck_assert_msg(!strchr(why, '\n'), "%s", why);
        pair_close(&p);

        /* self-signed */
        pair_open(&p, DATA "ca.pem", DATA "self.pem", DATA "self.key", "localhost");
        ck_assert_int_eq(handshake(&p, NULL), -EKEYREJECTED);
        pair_close(&p);
}
END_TEST

START_TEST(test_peer_without_tls_or_gone) {
        char junk[512];
        uint8_t buf[64];
        Pair p;
        int s;

        /* a server that speaks no TLS: the client's handshake fails */
        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "localhost");
        memset(junk, 'x', sizeof(junk));
        ck_assert_int_eq(write(p.fd[1], junk, sizeof(junk)), (ssize_t) sizeof(junk));
        ck_assert_int_eq(handshake(&p, NULL), -EPROTO);
        pair_close(&p);

        /* a client that hangs up during the handshake */
        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "localhost");
        ck_assert_int_eq(tls_session_handshake(p.server), -EAGAIN);
        close(p.fd[0]);
        p.fd[0] = -1;
        s = tls_session_handshake(p.server);
        ck_assert_msg(s == -ECONNRESET || s == -EPIPE, "%d", s);
        pair_close(&p);

        /* after the handshake, the peer's end of the stream reads as 0 */
        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "localhost");
        ck_assert_int_eq(handshake(&p, NULL), 0);
        ck_assert_int_eq(tls_session_read(p.server, buf, sizeof(buf)), -EAGAIN);
        p.client = tls_session_free(p.client); /* says close_notify */
        ck_assert_int_eq(tls_session_read(p.server, buf, sizeof(buf)), 0);
        pair_close(&p);
}
END_TEST

START_TEST(test_bad_files_named) {
        TlsContext *c = NULL;
        const char *failed = NULL;

        ck_assert_int_eq(tls_context_new_server("/nonexistent/host.pem", DATA "host.key", &c, &failed), -ENOENT);
        ck_assert_str_eq(failed, "certificate");
        ck_assert_int_eq(tls_context_new_server(DATA "host.key", DATA "host.key", &c, &failed), -EBADMSG);
        ck_assert_str_eq(failed, "certificate");
        ck_assert_int_eq(tls_context_new_server(DATA "host.pem", DATA "host.pem", &c, &failed), -EBADMSG);
        ck_assert_str_eq(failed, "private key");
        ck_assert_int_eq(tls_context_new_server(DATA "host.pem", DATA "other.key", &c, &failed), -EKEYREJECTED);
        ck_assert_str_eq(failed, "private key");
        ck_assert_int_eq(tls_context_new_server(DATA "host.pem", "", &c, &failed), -EINVAL);
        ck_assert_int_eq(tls_context_new_client("/dev/null", &c), -EBADMSG);
        ck_assert_int_eq(tls_context_new_client("/nonexistent/ca.pem", &c), -ENOENT);
        ck_assert_ptr_null(c);
        /* a client must name the server it expects */
        ck_assert_int_eq(tls_context_new_client(DATA "ca.pem", &c), 0);
        ck_assert_int_eq(tls_session_new(c, 0, NULL, &(TlsSession *) { NULL }), -EINVAL);
        tls_context_free(c);
}
END_TEST

/* A client's second session with a server of the same certificate
 * resumes its first (tls-resume.h), and carries frames; a server with
 * another certificate does not resume it: its handshake is full, and
 * fails to verify; a client for another name offers nothing. */
START_TEST(test_resumption) {
        StreamWriter w = {};
        StreamReader r;
        char why[256];
        Pair p;
        int s;

        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "localhost");
        ck_assert_int_eq(handshake(&p, &s), 0);
        ck_assert(!tls_session_resumed(p.client));
        pair_close(&p);

        /* new contexts and sockets: what is shared is the process's */
        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "localhost");
        ck_assert(!tls_session_resumed(p.client)); /* not before the handshake */
        ck_assert_int_eq(handshake(&p, &s), 0);
        ck_assert_int_eq(s, 0);
        ck_assert(tls_session_resumed(p.client));
        stream_reader_init(&r, 1 << 20);
        ck_assert_int_eq(stream_writer_append(&w, 0, "resumed", 7), 0);
        ck_assert_uint_eq(pump(p.client, &w, p.server, &r, 1, NULL, NULL), 1);
        stream_reader_done(&r);
        stream_writer_done(&w);
        pair_close(&p);

        /* the session is offered, but this server cannot take it up */
        pair_open(&p, DATA "ca.pem", DATA "self.pem", DATA "self.key", "localhost");
        ck_assert_int_eq(handshake(&p, NULL), -EKEYREJECTED);
        tls_session_strerror(p.client, why, sizeof(why));
        ck_assert_msg(strstr(why, "not correctly signed by the trusted CA"), "%s", why);
        pair_close(&p);

        /* another name: a full handshake, verified */
        pair_open(&p, DATA "ca.pem", DATA "host.pem", DATA "host.key", "127.0.0.1");
        ck_assert_int_eq(handshake(&p, NULL), 0);
        ck_assert(!tls_session_resumed(p.client));
        pair_close(&p);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_frames_both_ways,
                test_large_frame_through_full_sockets,
                test_server_not_trusted,
                test_peer_without_tls_or_gone,
                test_bad_files_named,
                test_resumption,
                NULL,
        };
        const CheckOptions options = { .timeout = 60 };

        signal(SIGPIPE, SIG_IGN);
        return check_run_tests("tls-session", &options, tests);
}
