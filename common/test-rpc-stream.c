/* The task channel of rpc-server over real loopback TCP: requests framed
 * on a plain socket reach the same handler, are answered in any order with
 * their tags, and each connection is a pipe that comes and goes; hostile
 * peers (garbage, a frame over the limit, too many requests unanswered, a
 * job's task asking what needs a role) get an error or lose their
 * connection, and nothing else changes.  A session of calls moves there
 * once an answer over nng names the port, and back to nng when it is gone.  Beside a tls+tcp:// endpoint the channel is TLS
 * (the test certificates of tests/data/tls; runs from the source root):
 * a client that verifies the server gets its answers, and one that speaks
 * plain frames is closed without ever being a pipe. */
#include <check.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/fsuid.h>

#include "check-run.h"
#include "codec.h"
#include "local-peer.h"
#include "macro.h"
#include "nng-util.h"
#include "rpc-client.h"
#include "rpc-server.h"
#include "stream-frame.h"
#include "tls-session.h"
#include "test-fixtures.h"

#define SEC USEC_PER_SEC
#define MAX_PARKED 32

typedef struct Served {
        RpcRequest *parked[MAX_PARKED];
        unsigned n_parked, n_handled, n_abandoned, n_refused;
        uint32_t pipes_added, pipes_removed; /* the last of each */
        unsigned n_added, n_removed;
        uint32_t request_pipe;
        char peer[128];     /* the last request's, as the audit trail names it */
        char refusal[600];  /* the last refusal's reason */
} Served;

static int handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Spark__RegisterApplicationReply rr = SPARK__REGISTER_APPLICATION_REPLY__INIT;
        Served *v = userdata;
        Envelope reply = ENVELOPE_INIT;
        (void) s;

        v->n_handled++;
        v->request_pipe = rpc_request_pipe_id(req);
        rpc_request_peer_describe(req, v->peer, sizeof(v->peer));
        if (env->body_case != SPARK__ENVELOPE__BODY_REGISTER_APPLICATION)
                return -EOPNOTSUPP;
        if (strncmp(env->register_application->name, "park", 4) == 0) {
                ck_assert_uint_lt(v->n_parked, MAX_PARKED);
                v->parked[v->n_parked++] = req;
                return 0;
        }
        rr.app_id = env->register_application->name;
        ENVELOPE_SET(&reply, REGISTER_APPLICATION_REPLY, register_application_reply, &rr);
        return rpc_request_reply_envelope(req, &reply);
}

static void on_pipe(RpcServer *s, uint32_t pipe_id, bool added, void *userdata) {
        Served *v = userdata;
        (void) s;

        if (added) {
                v->pipes_added = pipe_id;
                v->n_added++;
        } else {
                v->pipes_removed = pipe_id;
                v->n_removed++;
        }
}

static void on_abandon(RpcRequest *req, void *userdata) {
        (void) req;
        ((Served *) userdata)->n_abandoned++;
}

/* A server on a loopback port of its own, with its task channel. */
static RpcServer *serve(sd_event *e, Served *v, uint16_t *port) {
        char url[64];
        RpcServer *s = NULL;

        snprintf(url, sizeof(url), "tcp://127.0.0.1:%u", test_free_port());
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, handler, v, &s), 0);
        rpc_server_set_pipe_handler(s, on_pipe, v);
        ck_assert_int_eq(rpc_server_listen_stream(s, NULL, port, NULL), 0);
        ck_assert_uint_gt(*port, 0);
        ck_assert_int_eq(rpc_server_listen_stream(s, NULL, port, NULL), -EBUSY);
        return s;
}

static int dial(uint16_t port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

        ck_assert_int_ge(fd, 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
        return fd;
}

static void send_frame(int fd, uint32_t tag, const void *body, size_t len) {
        StreamWriter w = {};

        ck_assert_int_eq(stream_writer_append(&w, tag, body, len), 0);
        ck_assert_int_eq(stream_writer_flush(&w, fd), 1);
        stream_writer_done(&w);
}

static void send_register_app(int fd, uint32_t tag, const char *name) {
        Spark__RegisterApplication ra = SPARK__REGISTER_APPLICATION__INIT;
        Envelope env = ENVELOPE_INIT;
        void *buf;
        size_t len;

        ra.name = (char *) name;
        ENVELOPE_SET(&env, REGISTER_APPLICATION, register_application, &ra);
        ck_assert_int_eq(envelope_encode(&env, &buf, &len), 0);
        send_frame(fd, tag, buf, len);
        free(buf);
}

/* Runs the loop until an answer comes on fd; returns its envelope. */
static Envelope *recv_answer(sd_event *e, int fd, StreamReader *r, uint32_t *tag) {
        usec_t deadline = now_mono_usec() + 5 * SEC;

        for (;;) {
                const uint8_t *body;
                Envelope *env = NULL;
                size_t len;
                int k = stream_reader_next(r, tag, &body, &len);

                ck_assert_int_ge(k, 0);
                if (k > 0) {
                        ck_assert_int_eq(envelope_decode(body, len, SPARK_MAX_MESSAGE_BYTES, &env), 0);
                        return env;
                }
                k = stream_reader_fill(r, fd);
                ck_assert_msg(k != 0, "the server closed the connection");
                if (k == -EAGAIN) {
                        ck_assert_msg(now_mono_usec() < deadline, "no answer");
                        ck_assert_int_ge(sd_event_run(e, TEST_LOOP_SLICE_USEC), 0);
                }
        }
}

static const char *answer_app_id(const Envelope *env) {
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY);
        return env->register_application_reply->app_id;
}

/* Runs the loop until the server has closed fd (reads return 0). */
static bool closed_by_server(sd_event *e, int fd) {
        usec_t deadline = now_mono_usec() + 5 * SEC;
        char buf[4096];

        while (now_mono_usec() < deadline) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n == 0 || (n < 0 && errno == ECONNRESET))
                        return true;
                ck_assert_int_ge(sd_event_run(e, TEST_LOOP_SLICE_USEC), 0);
        }
        return false;
}

START_TEST(test_requests_and_parked_answers) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        StreamReader r;
        Served v = {};
        RpcServer *s;
        RpcServerStats st;
        Envelope *env;
        uint16_t port;
        uint32_t tag;
        int fd;

        ck_assert_int_eq(sd_event_new(&e), 0);
        s = serve(e, &v, &port);
        stream_reader_init(&r, SPARK_MAX_MESSAGE_BYTES);
        fd = dial(port);

        /* two parked, then one answered at once: it overtakes them */
        send_register_app(fd, 11, "park-a");
        send_register_app(fd, 12, "park-b");
        send_register_app(fd, 13, "now");
        env = recv_answer(e, fd, &r, &tag);
        ck_assert_uint_eq(tag, 13);
        ck_assert_str_eq(answer_app_id(env), "now");
        envelope_free(env);
        ck_assert_uint_eq(v.n_parked, 2);
        ck_assert_uint_eq(v.n_added, 1);
        ck_assert_uint_eq(v.request_pipe, v.pipes_added);
        ck_assert_uint_ge(v.request_pipe, 0x80000000u); /* above nng's pipe ids */

        /* answered in the other order, each with its tag */
        ck_assert_int_eq(rpc_request_reply_ack(v.parked[1]), 0);
        env = recv_answer(e, fd, &r, &tag);
        ck_assert_uint_eq(tag, 12);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ACK);
        envelope_free(env);
        ck_assert_int_eq(rpc_request_reply_error(v.parked[0], -EAGAIN, "later"), 0);
        env = recv_answer(e, fd, &r, &tag);
        ck_assert_uint_eq(tag, 11);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ERROR);
        ck_assert_int_eq(env->error->code, -EAGAIN);
        envelope_free(env);

        /* a request the handler fails is answered with its error */
        send_frame(fd, 14, "", 0);
        env = recv_answer(e, fd, &r, &tag);
        ck_assert_uint_eq(tag, 14);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ERROR);
        envelope_free(env);

        rpc_server_get_stats(s, &st);
        ck_assert_uint_eq(st.requests, 4);
        ck_assert_uint_eq(st.decode_errors, 1); /* the empty frame */
        ck_assert_uint_eq(st.replies, 4);
        ck_assert_uint_eq(st.waiting, 0);

        /* the peer goes with a request parked: the pipe is removed, and
         * the late answer is dropped without harm */
        v.n_parked = 0;
        send_register_app(fd, 15, "park-c");
        test_run_for(e, 50 * USEC_PER_MSEC);
        ck_assert_uint_eq(v.n_parked, 1);
        close(fd);
        test_run_for(e, 100 * USEC_PER_MSEC);
        ck_assert_uint_eq(v.n_removed, 1);
        ck_assert_uint_eq(v.pipes_removed, v.pipes_added);
        ck_assert_int_eq(rpc_request_reply_ack(v.parked[0]), 0);

        stream_reader_done(&r);
        rpc_server_free(s);
}
END_TEST

START_TEST(test_hostile_peers) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        const uint8_t too_long[] = { 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1 };
        StreamReader r;
        Served v = {};
        RpcServer *s;
        Envelope *env;
        uint16_t port;
        uint32_t tag;
        int fd, fd2;

        ck_assert_int_eq(sd_event_new(&e), 0);
        s = serve(e, &v, &port);
        stream_reader_init(&r, SPARK_MAX_MESSAGE_BYTES);

        /* garbage in a frame: an Error answer, and the connection stays */
        fd = dial(port);
        send_frame(fd, 1, "\xff\xff\xff garbage", 11);
        env = recv_answer(e, fd, &r, &tag);
        ck_assert_uint_eq(tag, 1);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ERROR);
        ck_assert_int_eq(env->error->code, -EBADMSG);
        envelope_free(env);
        send_register_app(fd, 2, "still here");
        env = recv_answer(e, fd, &r, &tag);
        ck_assert_str_eq(answer_app_id(env), "still here");
        envelope_free(env);

        /* a frame over the limit: the connection is closed, unread */
        ck_assert_int_eq(write(fd, too_long, sizeof(too_long)), (ssize_t) sizeof(too_long));
        ck_assert(closed_by_server(e, fd));
        ck_assert_uint_eq(v.n_removed, 1);
        close(fd);

        /* more requests unanswered than an executor ever has */
        fd = dial(port);
        for (uint32_t i = 0; i < 17; i++)
                send_register_app(fd, i, "park");
        ck_assert(closed_by_server(e, fd));
        ck_assert_uint_eq(v.n_parked, 16);
        ck_assert_uint_eq(v.n_removed, 2);
        close(fd);
        for (unsigned i = 0; i < v.n_parked; i++) /* dropped: the peer is gone */
                ck_assert_int_eq(rpc_request_reply_ack(v.parked[i]), 0);

        /* the others were not disturbed */
        fd2 = dial(port);
        stream_reader_done(&r);
        stream_reader_init(&r, SPARK_MAX_MESSAGE_BYTES);
        send_register_app(fd2, 3, "fine");
        env = recv_answer(e, fd2, &r, &tag);
        ck_assert_str_eq(answer_app_id(env), "fine");
        envelope_free(env);
        close(fd2);

        stream_reader_done(&r);
        rpc_server_free(s);
}
END_TEST

/* An application named "admin…" needs the admin role. */
static uint32_t admin_names_need_admin(const Envelope *env, void *userdata) {
        (void) userdata;
        return env->body_case == SPARK__ENVELOPE__BODY_REGISTER_APPLICATION &&
                               strncmp(env->register_application->name, "admin", 5) == 0
                       ? PEER_ROLE_BIT(PEER_ROLE_ADMIN)
                       : PEER_ROLES_NONE;
}

static void on_refused(RpcServer *s, RpcRequest *req, const char *reason, void *userdata) {
        Served *v = userdata;
        (void) s, (void) req;
        snprintf(v->refusal, sizeof(v->refusal), "%s", reason);
        v->n_refused++;
}

/* Beside tcp:// a request that needs a role is taken on the channel from
 * whom the kernel's socket table says the connection comes, as on nng:
 * this process's user, named in the audit trail's peer; a job's task (a
 * socket made by a dynamic uid) is refused in the same words as on nng. */
START_TEST(test_request_that_needs_a_role_plain) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        const uid_t task_uid = LOCAL_PEER_DYNAMIC_UID_MIN + 9;
        char error[128], want[64];
        StreamReader r;
        Served v = {};
        RpcServer *s;
        Envelope *env;
        uint16_t port;
        uint32_t tag;
        int fd;

        ck_assert_int_eq(sd_event_new(&e), 0);
        s = serve(e, &v, &port);
        ck_assert_int_eq(rpc_server_set_roles(s, admin_names_need_admin, on_refused, &v, error, sizeof(error)), 0);
        stream_reader_init(&r, SPARK_MAX_MESSAGE_BYTES);
        fd = dial(port);
        send_register_app(fd, 5, "admin please");
        env = recv_answer(e, fd, &r, &tag);
        ck_assert_uint_eq(tag, 5);
        ck_assert_str_eq(answer_app_id(env), "admin please");
        envelope_free(env);
        ck_assert_uint_eq(v.n_refused, 0);
        ck_assert_uint_eq(v.n_handled, 1);
        snprintf(want, sizeof(want), "(task channel) uid=%u", (unsigned) geteuid());
        ck_assert_msg(strstr(v.peer, want), "peer \"%s\" lacks \"%s\"", v.peer, want);
        close(fd);

        if (geteuid() == 0) {
                /* a socket is its maker's: made with the task's fsuid */
                (void) setfsuid(task_uid);
                fd = dial(port);
                (void) setfsuid(0);
                send_register_app(fd, 6, "admin from a task");
                env = recv_answer(e, fd, &r, &tag);
                ck_assert_uint_eq(tag, 6);
                ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ERROR);
                ck_assert_int_eq(env->error->code, -EPERM);
                ck_assert_ptr_nonnull(strstr(env->error->message, "is not for a job's tasks"));
                envelope_free(env);
                ck_assert_uint_eq(v.n_refused, 1);
                ck_assert_ptr_nonnull(strstr(v.refusal, "is not for a job's tasks"));
                ck_assert_uint_eq(v.n_handled, 1);
                /* what needs no role still goes through, as a poll does */
                send_register_app(fd, 7, "plain");
                env = recv_answer(e, fd, &r, &tag);
                ck_assert_str_eq(answer_app_id(env), "plain");
                envelope_free(env);
                close(fd);
        }
        stream_reader_done(&r);
        rpc_server_free(s);
}
END_TEST

typedef struct SessionJob {
        RpcSyncSession *session;
        const char *name;
        int result;
        char app_id[64];
        uint32_t channel_port;
} SessionJob;

static void session_job_call(void *arg) {
        Spark__RegisterApplication ra = SPARK__REGISTER_APPLICATION__INIT;
        Envelope req = ENVELOPE_INIT, *reply = NULL;
        SessionJob *j = arg;

        ra.name = (char *) j->name;
        ENVELOPE_SET(&req, REGISTER_APPLICATION, register_application, &ra);
        j->result = rpc_sync_session_call(j->session, &req, 3000, 0, &reply);
        if (j->result == 0 && reply->body_case == SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY)
                snprintf(j->app_id, sizeof(j->app_id), "%s", reply->register_application_reply->app_id);
        j->channel_port = reply ? reply->channel_port : 0;
        envelope_free(reply);
}

/* One call of the session while the loop serves; returns what answered. */
static SessionJob session_call(sd_event *e, RpcSyncSession *session, const char *name) {
        SessionJob j = { .session = session, .name = name };

        test_call_beside_loop(e, session_job_call, &j, 10 * SEC);
        ck_assert_int_eq(j.result, 0);
        ck_assert_str_eq(j.app_id, name);
        return j;
}

/* A session of calls (rpc-client.h) learns of the channel from an answer
 * over nng and makes its next calls there; when the channel is gone (a
 * driver restarted without one), its call goes over nng again. */
START_TEST(test_session_moves_to_the_channel) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(rpc_sync_session_freep) RpcSyncSession *session = NULL;
        Served v = {};
        RpcServer *s;
        SessionJob j;
        uint16_t port;
        char url[64];

        ck_assert_int_eq(sd_event_new(&e), 0);
        s = serve(e, &v, &port);
        snprintf(url, sizeof(url), "%s", rpc_server_url(s));
        ck_assert_int_eq(rpc_sync_session_new(url, NULL, &session), 0);

        j = session_call(e, session, "first");
        ck_assert_uint_eq(j.channel_port, port); /* named over nng */
        ck_assert_uint_lt(v.request_pipe, 0x80000000u);
        ck_assert(!rpc_sync_session_on_channel(session));

        for (unsigned i = 0; i < 3; i++) {
                j = session_call(e, session, "next");
                ck_assert_uint_eq(j.channel_port, 0); /* not over the channel */
                ck_assert_uint_ge(v.request_pipe, 0x80000000u);
                ck_assert(rpc_sync_session_on_channel(session));
        }
        ck_assert_uint_eq(v.n_handled, 4);
        ck_assert_uint_eq(v.n_added, 2); /* one connection of each kind */

        /* the server goes and comes back without a channel: the session's
         * channel is closed, its call goes over nng */
        rpc_server_free(s);
        s = NULL;
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, handler, &v, &s), 0);
        j = session_call(e, session, "after a restart");
        ck_assert_uint_eq(j.channel_port, 0);
        ck_assert_uint_lt(v.request_pipe, 0x80000000u);
        ck_assert(!rpc_sync_session_on_channel(session));
        rpc_server_free(s);
}
END_TEST

START_TEST(test_free_with_requests_parked) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        Served v = {};
        RpcServer *s;
        uint16_t port;
        int fd;

        ck_assert_int_eq(sd_event_new(&e), 0);
        s = serve(e, &v, &port);
        fd = dial(port);
        send_register_app(fd, 1, "park-1");
        send_register_app(fd, 2, "park-2");
        test_run_for(e, 50 * USEC_PER_MSEC);
        ck_assert_uint_eq(v.n_parked, 2);
        rpc_request_set_abandon_handler(v.parked[0], on_abandon, &v);
        rpc_request_set_abandon_handler(v.parked[1], on_abandon, &v);
        rpc_server_free(s);
        ck_assert_uint_eq(v.n_abandoned, 2);
        ck_assert(closed_by_server(e, fd));
        close(fd);
}
END_TEST

#define DATA "tests/data/tls/"

/* The handshake of a TLS client on fd, the server's loop running. */
static void tls_handshake(sd_event *e, TlsSession *t) {
        usec_t deadline = now_mono_usec() + 5 * SEC;
        int k;

        while ((k = tls_session_handshake(t)) == -EAGAIN) {
                ck_assert_msg(now_mono_usec() < deadline, "no handshake");
                ck_assert_int_ge(sd_event_run(e, TEST_LOOP_SLICE_USEC), 0);
        }
        ck_assert_int_eq(k, 0);
}

START_TEST(test_tls_channel) {
        const TlsSettings tls = { DATA "ca.pem", DATA "host.pem", DATA "host.key" };
        const RpcServerConfig cfg = { .tls = &tls, .tls_no_client_cert = true };
        const TlsSettings bad_key = { DATA "ca.pem", DATA "host.pem", DATA "other.key" };
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        char error[128];
        TlsContext *client_ctx = NULL;
        TlsSession *t = NULL;
        StreamWriter w = {};
        StreamReader r;
        const uint8_t *body;
        const char *failed = NULL;
        Served v = {};
        RpcServer *s = NULL;
        Envelope *env;
        uint16_t port;
        uint32_t tag;
        size_t len;
        char url[64];
        int fd, k;

        ck_assert_int_eq(sd_event_new(&e), 0);
        snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%u", test_free_port());
        ck_assert_int_eq(rpc_server_new_envelope(e, url, &cfg, handler, &v, &s), 0);
        rpc_server_set_pipe_handler(s, on_pipe, &v);
        /* a key that is not the certificate's is named, and nothing listens */
        ck_assert_int_eq(rpc_server_listen_stream(s, &bad_key, &port, &failed), -EKEYREJECTED);
        ck_assert_str_eq(failed, "private key");
        ck_assert_int_eq(rpc_server_listen_stream(s, NULL, &port, NULL), -ENOKEY);
        ck_assert_int_eq(rpc_server_listen_stream(s, &tls, &port, NULL), 0);
        ck_assert_int_eq(rpc_server_set_roles(s, admin_names_need_admin, on_refused, &v, error, sizeof(error)), 0);

        /* plain frames: the handshake fails, the connection is closed, and
         * it never was a pipe nor brought a request */
        fd = dial(port);
        send_register_app(fd, 1, "plain");
        ck_assert(closed_by_server(e, fd));
        close(fd);
        ck_assert_uint_eq(v.n_added, 0);
        ck_assert_uint_eq(v.n_handled, 0);

        /* a TLS client that verifies the server: a pipe once the
         * handshake is done, and its requests answered with their tags;
         * what needs a role is refused (a proof of role is made on nng) */
        ck_assert_int_eq(tls_context_new_client(DATA "ca.pem", &client_ctx), 0);
        fd = dial(port);
        ck_assert_int_eq(tls_session_new(client_ctx, fd, "127.0.0.1", &t), 0);
        tls_handshake(e, t);
        stream_reader_init(&r, SPARK_MAX_MESSAGE_BYTES);
        for (uint32_t i = 0; i < 4; i++) {
                Spark__RegisterApplication ra = SPARK__REGISTER_APPLICATION__INIT;
                Envelope req = ENVELOPE_INIT;
                void *buf;

                ra.name = (char *) (i == 0 ? "park-tls" : i == 3 ? "admin-tls" : "tls");
                ENVELOPE_SET(&req, REGISTER_APPLICATION, register_application, &ra);
                ck_assert_int_eq(envelope_encode(&req, &buf, &len), 0);
                ck_assert_int_eq(stream_writer_append(&w, 10 + i, buf, len), 0);
                free(buf);
        }
        ck_assert_int_eq(stream_writer_flush_tls(&w, t), 1);
        for (unsigned got = 0; got < 3;) {
                usec_t deadline = now_mono_usec() + 5 * SEC;

                k = stream_reader_fill_tls(&r, t);
                ck_assert_msg(k != 0, "the server closed the connection");
                while ((k = stream_reader_next(&r, &tag, &body, &len)) > 0) {
                        ck_assert_int_eq(envelope_decode(body, len, SPARK_MAX_MESSAGE_BYTES, &env), 0);
                        ck_assert_uint_eq(tag, 11 + got);
                        if (tag == 13) {
                                ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ERROR);
                                ck_assert_int_eq(env->error->code, -EPERM);
                                ck_assert_ptr_nonnull(strstr(env->error->message, "not taken on the task channel"));
                        } else
                                ck_assert_str_eq(answer_app_id(env), "tls");
                        envelope_free(env);
                        got++;
                }
                ck_assert_msg(now_mono_usec() < deadline, "no answer");
                ck_assert_int_ge(sd_event_run(e, TEST_LOOP_SLICE_USEC), 0);
        }
        ck_assert_uint_eq(v.n_added, 1);
        ck_assert_uint_eq(v.request_pipe, v.pipes_added);
        ck_assert_uint_eq(v.n_parked, 1);
        ck_assert_uint_eq(v.n_refused, 1);
        ck_assert_ptr_nonnull(strstr(v.refusal, "not taken on the task channel"));
        ck_assert_uint_eq(v.n_handled, 3);

        /* the client goes: the pipe with it, the parked request answered
         * into the void */
        t = tls_session_free(t);
        close(fd);
        test_run_for(e, 100 * USEC_PER_MSEC);
        ck_assert_uint_eq(v.n_removed, 1);
        ck_assert_int_eq(rpc_request_reply_ack(v.parked[0]), 0);

        stream_reader_done(&r);
        stream_writer_done(&w);
        tls_context_free(client_ctx);
        rpc_server_free(s);
}
END_TEST

START_TEST(test_not_for_ipc) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        char tmpdir[64], url[128];
        Served v = {};
        RpcServer *s = NULL;
        uint16_t port;

        ck_assert_int_eq(sd_event_new(&e), 0);
        test_tmpdir_new(tmpdir, sizeof(tmpdir), "test-rpc-stream");
        snprintf(url, sizeof(url), "ipc://%s/rpc.sock", tmpdir);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, handler, &v, &s), 0);
        ck_assert_int_eq(rpc_server_listen_stream(s, NULL, &port, NULL), -EOPNOTSUPP);
        rpc_server_free(s);
        test_tmpdir_remove(tmpdir);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_requests_and_parked_answers,
                test_hostile_peers,
                test_request_that_needs_a_role_plain,
                test_session_moves_to_the_channel,
                test_free_with_requests_parked,
                test_tls_channel,
                test_not_for_ipc,
                NULL,
        };
        const CheckOptions options = { .timeout = 30 };

        signal(SIGPIPE, SIG_IGN);
        return check_run_tests("rpc-stream", &options, tests);
}
