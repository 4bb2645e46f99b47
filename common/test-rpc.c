/* rpc-server and rpc-client over ipc:// in a private directory: parked
 * requests answered out of order, failures that must be fast and clean
 * (nobody listening, oversized, garbage), a blocking session that keeps
 * its connection, resend after a server restart, a peer process killed
 * under the server's eyes, and a client that knows its connection is
 * gone. */
#include <check.h>
#include <signal.h>
#include <sys/wait.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "check-run.h"
#include "codec.h"
#include "macro.h"
#include "nng-util.h"
#include "rpc-client.h"
#include "rpc-server.h"
#include "test-fixtures.h"

#define N_PARKED 50
#define SEC USEC_PER_SEC

static char tmpdir[64];
static char url[128];

static void setup(void) {
        test_tmpdir_new(tmpdir, sizeof(tmpdir), "test-rpc");
        snprintf(url, sizeof(url), "ipc://%s/rpc.sock", tmpdir);
}

static void teardown(void) {
        test_tmpdir_remove(tmpdir);
}

static void make_register_app(Envelope *env, Spark__RegisterApplication *ra, const char *name) {
        *env = (Envelope) ENVELOPE_INIT;
        *ra = (Spark__RegisterApplication) SPARK__REGISTER_APPLICATION__INIT;
        ra->name = (char *) name;
        ENVELOPE_SET(env, REGISTER_APPLICATION, register_application, ra);
}

static int reply_app_id(RpcRequest *req, const char *app_id) {
        Spark__RegisterApplicationReply rr = SPARK__REGISTER_APPLICATION_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;

        rr.app_id = (char *) app_id;
        ENVELOPE_SET(&env, REGISTER_APPLICATION_REPLY, register_application_reply, &rr);
        return rpc_request_reply_envelope(req, &env);
}

/* ------------------------------------------------ many parked requests */

typedef struct Parked {
        sd_event *event;
        RpcServer *server;
        RpcRequest *requests[N_PARKED];
        unsigned n_parked, n_answered, n_replies, n_abandoned;
        char names[N_PARKED][16];
        bool ok[N_PARKED];
        bool all_parked, done;
} Parked;

static int answer_all_shuffled(sd_event_source *s, uint64_t usec, void *userdata) {
        Parked *p = userdata;
        unsigned order[N_PARKED], seed = 42;
        RpcServerStats st;

        (void) s;
        (void) usec;

        rpc_server_get_stats(p->server, &st);
        ck_assert_uint_eq(st.waiting, N_PARKED);

        for (unsigned i = 0; i < N_PARKED; i++)
                order[i] = i;
        for (unsigned i = N_PARKED - 1; i > 0; i--) {
                unsigned j = (unsigned) rand_r(&seed) % (i + 1), t = order[i];
                order[i] = order[j];
                order[j] = t;
        }
        for (unsigned i = 0; i < N_PARKED; i++) {
                RpcRequest *req = p->requests[order[i]];
                const Envelope *env = rpc_request_envelope(req);

                ck_assert_ptr_nonnull(env);
                ck_assert_int_eq(reply_app_id(req, env->register_application->name), 0);
                /* Answered: the handle is stale now (no new request can
                 * have reached this context yet, the loop is busy here). */
                ck_assert_int_eq(rpc_request_reply(req, "x", 1), -ESTALE);
                p->n_answered++;
        }
        return 0;
}

static int parking_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Parked *p = userdata;
        int idx;

        ck_assert_ptr_eq(s, p->server);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_REGISTER_APPLICATION);
        ck_assert_int_eq(sscanf(env->register_application->name, "app-%d", &idx), 1);
        ck_assert(idx >= 0 && idx < N_PARKED);
        ck_assert_ptr_null(p->requests[idx]);
        ck_assert_uint_ne(rpc_request_pipe_id(req), 0);
        p->requests[idx] = req;

        if (++p->n_parked == N_PARKED) {
                p->all_parked = true;
                /* Answer later, from a timer. */
                ck_assert_int_ge(sd_event_add_time_relative(p->event, NULL, CLOCK_MONOTONIC, 20 * 1000, 0,
                                                            answer_all_shuffled, p),
                                 0);
        }
        return 0; /* parked */
}

typedef struct CallCookie {
        Parked *p;
        int idx;
} CallCookie;

static void parked_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        CallCookie *ck = userdata;
        Parked *p = ck->p;

        (void) c;
        ck_assert_int_eq(error, 0);
        ck_assert_ptr_nonnull(reply);
        ck_assert_int_eq(reply->body_case, SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY);
        ck_assert_str_eq(reply->register_application_reply->app_id, p->names[ck->idx]);
        ck_assert(!p->ok[ck->idx]);
        p->ok[ck->idx] = true;
        if (++p->n_replies == N_PARKED)
                p->done = true;
}

START_TEST(test_parked_requests_answered_out_of_order) {
        static Parked p;
        static CallCookie cookies[N_PARKED];
        RpcServerConfig cfg = { .n_contexts = 64 };
        RpcClient *c = NULL;
        RpcServerStats st;

        memset(&p, 0, sizeof(p));
        ck_assert_int_ge(sd_event_new(&p.event), 0);
        ck_assert_int_eq(rpc_server_new_envelope(p.event, url, &cfg, parking_handler, &p, &p.server), 0);
        ck_assert_int_eq(rpc_client_new(p.event, url, NULL, &c), 0);

        for (int i = 0; i < N_PARKED; i++) {
                Spark__RegisterApplication ra;
                Envelope env;

                snprintf(p.names[i], sizeof(p.names[i]), "app-%d", i);
                make_register_app(&env, &ra, p.names[i]);
                cookies[i] = (CallCookie) { .p = &p, .idx = i };
                ck_assert_int_eq(rpc_client_call(c, &env, 10000, parked_reply, &cookies[i]), 0);
        }
        ck_assert_uint_eq(rpc_client_pending(c), N_PARKED);

        test_run_until_flag(p.event, &p.done, 15 * SEC);
        ck_assert(p.all_parked);
        ck_assert_uint_eq(p.n_answered, N_PARKED);
        ck_assert_uint_eq(p.n_replies, N_PARKED);
        ck_assert_uint_eq(rpc_client_pending(c), 0);

        rpc_server_get_stats(p.server, &st);
        ck_assert_uint_eq(st.requests, N_PARKED);
        ck_assert_uint_eq(st.replies, N_PARKED);
        ck_assert_uint_eq(st.waiting, 0);

        rpc_client_free(c);
        rpc_server_free(p.server);
        sd_event_unref(p.event);
}
END_TEST

/* ------------------------------------------------- nobody listening */

typedef struct Outcome {
        int error;
        bool have_reply;
        int body_case;
        char message[256];
        bool done;
} Outcome;

static void record_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        Outcome *o = userdata;

        (void) c;
        o->error = error;
        o->have_reply = reply != NULL;
        o->body_case = reply ? (int) reply->body_case : 0;
        if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                snprintf(o->message, sizeof(o->message), "%s", reply->error->message);
        o->done = true;
}

/* One RegisterApplication call, run to its end; returns its error. */
static int call_once(sd_event *e, RpcClient *c, const char *name, int timeout_ms) {
        Spark__RegisterApplication ra;
        Envelope env;
        Outcome o = {};

        make_register_app(&env, &ra, name);
        ck_assert_int_eq(rpc_client_call(c, &env, timeout_ms, record_reply, &o), 0);
        test_run_until_flag(e, &o.done, (uint64_t) timeout_ms * 1000 + 5 * SEC);
        ck_assert(o.done);
        return o.error;
}

START_TEST(test_sync_call_nobody_listening) {
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env = ENVELOPE_INIT, *reply = (Envelope *) 0x1;
        uint64_t t0;
        int k;

        hb.worker_id = (char *) "w1";
        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);

        t0 = now_mono_usec();
        k = rpc_call_sync(url, &env, 2000, 0, &reply);
        ck_assert_int_lt(k, 0);
        ck_assert(k == -ECONNREFUSED || k == -ENOENT || k == -ETIMEDOUT);
        ck_assert_ptr_null(reply);
        ck_assert_uint_lt(now_mono_usec() - t0, 2500 * 1000);

        /* tcp port 1 on loopback: refused at once. */
        t0 = now_mono_usec();
        k = rpc_call_sync("tcp://127.0.0.1:1", &env, 2000, 0, &reply);
        ck_assert_int_eq(k, -ECONNREFUSED);
        ck_assert_uint_lt(now_mono_usec() - t0, 1000 * 1000);

        ck_assert_int_eq(rpc_call_sync("bogus://x", &env, 100, 0, &reply), -EOPNOTSUPP);
        ck_assert_int_eq(rpc_call_sync(url, &env, 0, 0, &reply), -EINVAL);
}
END_TEST

START_TEST(test_async_call_nobody_listening_times_out) {
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env = ENVELOPE_INIT;
        sd_event *e = NULL;
        RpcClient *c = NULL;
        Outcome o = {};
        uint64_t t0;

        hb.worker_id = (char *) "w1";
        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), 0);
        t0 = now_mono_usec();
        ck_assert_int_eq(rpc_client_call(c, &env, 300, record_reply, &o), 0);
        test_run_until_flag(e, &o.done, 5 * SEC);
        ck_assert(o.done);
        ck_assert_int_eq(o.error, -ETIMEDOUT);
        ck_assert(!o.have_reply);
        ck_assert_uint_ge(now_mono_usec() - t0, 250 * 1000);
        ck_assert_uint_lt(now_mono_usec() - t0, 2 * SEC);

        /* Bad arguments are refused and the callback is not called. */
        ck_assert_int_eq(rpc_client_call(c, &env, 0, record_reply, &o), -EINVAL);
        {
                Envelope empty = ENVELOPE_INIT;
                ck_assert_int_eq(rpc_client_call(c, &empty, 100, record_reply, &o), -EINVAL);
        }

        rpc_client_free(c);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------------------ sync round trip */

static int echo_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        (void) s;
        (void) userdata;
        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_REGISTER_APPLICATION:
                return reply_app_id(req, env->register_application->name);
        case SPARK__ENVELOPE__BODY_HEARTBEAT:
                /* Not handled: the server answers with this error. */
                return -ENOENT;
        case SPARK__ENVELOPE__BODY_KILL_APPLICATION:
                ck_assert_int_eq(rpc_request_reply_error(req, -EPERM, "no, %s", "thanks"), 0);
                ck_assert_int_eq(rpc_request_reply_error(req, -EPERM, "twice"), -ESTALE);
                return -EIO; /* ignored: already answered */
        default:
                return -EOPNOTSUPP;
        }
}

typedef struct SyncJob {
        Envelope *req;
        int result;
        Envelope *reply;
} SyncJob;

static void sync_job_call(void *arg) {
        SyncJob *j = arg;

        j->result = rpc_call_sync(url, j->req, 3000, 0, &j->reply);
}

/* rpc_call_sync() of req while the loop serves: its result must be want.
 * Returns the reply. */
static Envelope *sync_call(sd_event *e, Envelope *req, int want) {
        SyncJob j = { .req = req };

        test_call_beside_loop(e, sync_job_call, &j, 10 * SEC);
        ck_assert_int_eq(j.result, want);
        ck_assert_ptr_nonnull(j.reply);
        return j.reply;
}

START_TEST(test_sync_call_and_errors) {
        Spark__RegisterApplication ra;
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Spark__KillApplication ka = SPARK__KILL_APPLICATION__INIT;
        Envelope env, env2 = ENVELOPE_INIT, env3 = ENVELOPE_INIT;
        sd_event *e = NULL;
        RpcServer *s = NULL;
        Envelope *reply;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, echo_handler, NULL, &s), 0);

        make_register_app(&env, &ra, "hello");
        reply = sync_call(e, &env, 0);
        ck_assert_str_eq(reply->register_application_reply->app_id, "hello");
        reply = envelope_free(reply);

        /* Handler returned -ENOENT: an Error with that code. */
        hb.worker_id = (char *) "w";
        ENVELOPE_SET(&env2, HEARTBEAT, heartbeat, &hb);
        reply = sync_call(e, &env2, -ENOENT);
        ck_assert_int_eq(reply->body_case, SPARK__ENVELOPE__BODY_ERROR);
        ck_assert_int_eq(reply->error->code, -ENOENT);
        reply = envelope_free(reply);

        /* Explicit error answer; a second answer was refused. */
        ka.app_id = (char *) "a";
        ENVELOPE_SET(&env3, KILL_APPLICATION, kill_application, &ka);
        reply = sync_call(e, &env3, -EPERM);
        ck_assert_str_eq(reply->error->message, "no, thanks");
        reply = envelope_free(reply);

        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------------------ a kept connection */

typedef struct SessionJob {
        RpcSyncSession *session;
        Envelope *req;
        int timeout_ms;
        size_t max_reply;
        int result;
} SessionJob;

static void session_job_call(void *arg) {
        SessionJob *j = arg;
        Envelope *reply = NULL;

        j->result = rpc_sync_session_call(j->session, j->req, j->timeout_ms, j->max_reply, &reply);
        envelope_free(reply);
}

static int session_call(sd_event *e, RpcSyncSession *session, Envelope *req, int timeout_ms, size_t max_reply) {
        SessionJob j = { .session = session, .req = req, .timeout_ms = timeout_ms, .max_reply = max_reply };

        test_call_beside_loop(e, session_job_call, &j, 10 * SEC);
        return j.result;
}

/* The connections requests came on, as echo_handler() answers them. */
typedef struct PipesSeen {
        uint32_t last;
        unsigned distinct;
} PipesSeen;

static int pipes_seen_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        PipesSeen *p = userdata;

        if (rpc_request_pipe_id(req) != p->last) {
                p->last = rpc_request_pipe_id(req);
                p->distinct++;
        }
        return echo_handler(s, req, env, NULL);
}

START_TEST(test_sync_session_keeps_its_connection) {
        Spark__RegisterApplication ra;
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env, hb_env = ENVELOPE_INIT;
        RpcSyncSession *session = NULL;
        PipesSeen seen = {}, seen2 = {};
        sd_event *e = NULL;
        RpcServer *s = NULL;
        int k;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, pipes_seen_handler, &seen, &s), 0);
        make_register_app(&env, &ra, "kept");
        hb.worker_id = (char *) "w";
        ENVELOPE_SET(&hb_env, HEARTBEAT, heartbeat, &hb);

        ck_assert_int_eq(rpc_sync_session_new(url, NULL, &session), 0);
        ck_assert_str_eq(rpc_sync_session_url(session), url);
        ck_assert(!rpc_sync_session_connected(session));
        for (int i = 0; i < 5; i++)
                ck_assert_int_eq(session_call(e, session, &env, 3000, 0), 0);
        ck_assert_uint_eq(seen.distinct, 1);

        /* an Error is an answer: the connection stays */
        ck_assert_int_eq(session_call(e, session, &hb_env, 3000, 0), -ENOENT);
        ck_assert(rpc_sync_session_connected(session));
        ck_assert_int_eq(session_call(e, session, &env, 3000, 0), 0);
        ck_assert_uint_eq(seen.distinct, 1);

        /* a larger reply than the connection was opened for: a new one,
         * which the smaller calls after it use too */
        ck_assert_int_eq(session_call(e, session, &env, 3000, (size_t) SPARK_MAX_MESSAGE_BYTES * 2), 0);
        ck_assert_uint_eq(seen.distinct, 2);
        ck_assert_int_eq(session_call(e, session, &env, 3000, 0), 0);
        ck_assert_uint_eq(seen.distinct, 2);

        /* the server goes: no answer, and the connection is dropped ... */
        s = rpc_server_free(s);
        k = session_call(e, session, &env, 300, 0);
        ck_assert(k == -ETIMEDOUT || k == -ECONNREFUSED || k == -ENOENT || k == -ECONNRESET);
        ck_assert(!rpc_sync_session_connected(session));

        /* ... so that the next call dials the server that is there now */
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, pipes_seen_handler, &seen2, &s), 0);
        ck_assert_int_eq(session_call(e, session, &env, 3000, 0), 0);
        ck_assert_int_eq(session_call(e, session, &env, 3000, 0), 0);
        ck_assert_uint_eq(seen2.distinct, 1);

        rpc_sync_session_free(session);
        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------------------------- oversized */

typedef struct Counter {
        unsigned calls;
} Counter;

static int counting_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Counter *n = userdata;

        (void) s;
        n->calls++;
        if (env->body_case == SPARK__ENVELOPE__BODY_REGISTER_APPLICATION)
                return reply_app_id(req, env->register_application->name);
        return -EOPNOTSUPP;
}

START_TEST(test_oversized_request_refused) {
        RpcServerConfig cfg = { .max_request_bytes = 1024 };
        Spark__RegisterApplication ra;
        Envelope env;
        char *big;
        sd_event *e = NULL;
        RpcServer *s = NULL;
        RpcClient *c = NULL;
        Counter n = {};
        Outcome o = {};

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, &cfg, counting_handler, &n, &s), 0);
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), 0);

        big = malloc(8192);
        memset(big, 'x', 8191);
        big[8191] = 0;
        make_register_app(&env, &ra, big);
        ck_assert_int_eq(rpc_client_call(c, &env, 500, record_reply, &o), 0);
        test_run_until_flag(e, &o.done, 5 * SEC);
        ck_assert(o.done);
        ck_assert_int_eq(o.error, -ETIMEDOUT);
        ck_assert_uint_eq(n.calls, 0);
        free(big);

        /* The server is still fine. */
        ck_assert_int_eq(call_once(e, c, "small", 3000), 0);
        ck_assert_uint_eq(n.calls, 1);

        rpc_client_free(c);
        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------------------ garbage on the wire */

typedef struct RawJob {
        const void *data;
        size_t len;
        int nng_rv;
        nng_msg *reply;
} RawJob;

static void raw_job_call(void *arg) {
        RawJob *j = arg;
        nng_socket sock;
        int rv;

        rv = nng_req0_open(&sock);
        if (rv == 0)
                rv = nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, 3000);
        if (rv == 0)
                rv = nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, 3000);
        if (rv == 0)
                rv = nng_dial(sock, url, NULL, 0);
        if (rv == 0)
                rv = nng_send(sock, (void *) j->data, j->len, 0);
        if (rv == 0)
                rv = nng_recvmsg(sock, &j->reply, 0);
        nng_close(sock);
        j->nng_rv = rv;
}

/* Sends data from a raw req socket while the loop serves; returns the
 * answer. */
static nng_msg *raw_request(sd_event *e, const void *data, size_t len) {
        RawJob j = { .data = data, .len = len };

        test_call_beside_loop(e, raw_job_call, &j, 10 * SEC);
        ck_assert_int_eq(j.nng_rv, 0);
        return j.reply;
}

/* The code of the Error envelope the server answers data with. */
static int error_answer(sd_event *e, const void *data, size_t len) {
        _cleanup_(envelope_freep) Envelope *reply = NULL;
        nng_msg *m = raw_request(e, data, len);
        int k;

        k = envelope_decode(nng_msg_body(m), nng_msg_len(m), SPARK_MAX_MESSAGE_BYTES, &reply);
        nng_msg_free(m);
        ck_assert_int_eq(k, 0);
        ck_assert_int_eq(reply->body_case, SPARK__ENVELOPE__BODY_ERROR);
        return reply->error->code;
}

START_TEST(test_garbage_gets_error_envelope) {
        /* Not protobuf at all. */
        static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x13, 0x37, 0x00, 0x42 };
        /* version 7, body ack. */
        static const uint8_t wrong_version[] = { 0x08, 0x07, 0x52, 0x00 };
        /* version 1, only an unknown field 200. */
        static const uint8_t unknown_body[] = { 0x08, 0x01, 0xc0, 0x0c, 0x01 };
        sd_event *e = NULL;
        RpcServer *s = NULL;
        Counter n = {};
        RpcServerStats st;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, counting_handler, &n, &s), 0);

        ck_assert_int_eq(error_answer(e, garbage, sizeof(garbage)), -EBADMSG);
        ck_assert_int_eq(error_answer(e, wrong_version, sizeof(wrong_version)), -EPROTONOSUPPORT);
        ck_assert_int_eq(error_answer(e, unknown_body, sizeof(unknown_body)), -ENOMSG);
        /* Empty request: an Error too, whatever its code. */
        (void) error_answer(e, "", 0);

        ck_assert_uint_eq(n.calls, 0);
        rpc_server_get_stats(s, &st);
        ck_assert_uint_eq(st.decode_errors, 4);
        ck_assert_uint_eq(st.replies, 4);

        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* --------------------------------------- raw handler and reply helpers */

static int raw_echo_handler(RpcServer *s, RpcRequest *req, const void *data, size_t len, void *userdata) {
        (void) s;
        (void) userdata;
        ck_assert_ptr_null(rpc_request_envelope(req));
        return rpc_request_reply(req, data, len);
}

START_TEST(test_raw_handler_echo) {
        static const char hello[] = "not an envelope";
        sd_event *e = NULL;
        RpcServer *s = NULL;
        nng_msg *m;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new(e, url, NULL, raw_echo_handler, NULL, &s), 0);
        ck_assert_str_eq(rpc_server_url(s), url);

        m = raw_request(e, hello, sizeof(hello));
        ck_assert_uint_eq(nng_msg_len(m), sizeof(hello));
        ck_assert_str_eq(nng_msg_body(m), hello);
        nng_msg_free(m);

        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* --------------------------------------- resend after server restart */

typedef struct Restart {
        RpcRequest *parked;
        unsigned abandoned;
        unsigned n_requests, expect;
        bool got_request, got_expected;
} Restart;

static void on_abandon(RpcRequest *req, void *userdata) {
        Restart *r = userdata;

        r->abandoned++;
        if (req == r->parked)
                r->parked = NULL;
}

static int park_one_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Restart *r = userdata;

        (void) s;
        (void) env;
        r->parked = req;
        r->got_request = true;
        if (++r->n_requests == r->expect)
                r->got_expected = true;
        rpc_request_set_abandon_handler(req, on_abandon, r);
        return 0;
}

START_TEST(test_resend_after_server_restart) {
        Spark__RegisterApplication ra;
        Envelope env;
        sd_event *e = NULL;
        RpcServer *s = NULL;
        RpcClient *c = NULL;
        Restart r = {};
        Outcome o = {};
        Counter n = {};

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, park_one_handler, &r, &s), 0);
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), 0);

        make_register_app(&env, &ra, "again");
        ck_assert_int_eq(rpc_client_call(c, &env, 8000, record_reply, &o), 0);
        test_run_until_flag(e, &r.got_request, 5 * SEC);
        ck_assert(r.got_request);

        /* The first server goes away with the request parked... */
        s = rpc_server_free(s);
        ck_assert_uint_eq(r.abandoned, 1);
        ck_assert(!o.done);

        /* ...and its successor answers the resent request. */
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, counting_handler, &n, &s), 0);
        test_run_until_flag(e, &o.done, 7 * SEC);
        ck_assert(o.done);
        ck_assert_int_eq(o.error, 0);
        ck_assert_uint_eq(n.calls, 1);

        rpc_client_free(c);
        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------- freeing with work in flight */

static int free_self_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        RpcServer **sp = userdata;

        (void) req;
        (void) env;
        ck_assert_ptr_eq(*sp, s);
        *sp = rpc_server_free(s);
        return -ESHUTDOWN; /* must be ignored: the server is gone */
}

START_TEST(test_free_with_work_in_flight) {
        Spark__RegisterApplication ra;
        Envelope env;
        sd_event *e = NULL;
        RpcServer *s = NULL;
        RpcClient *c = NULL;
        Restart r = { .expect = 5 };
        Outcome o[5] = {};

        ck_assert_int_ge(sd_event_new(&e), 0);

        /* Client freed with calls pending: each completes with -ECANCELED. */
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, park_one_handler, &r, &s), 0);
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), 0);
        make_register_app(&env, &ra, "x");
        for (int i = 0; i < 5; i++)
                ck_assert_int_eq(rpc_client_call(c, &env, 5000, record_reply, &o[i]), 0);
        test_run_until_flag(e, &r.got_expected, 5 * SEC);
        ck_assert_uint_eq(r.n_requests, 5);
        c = rpc_client_free(c);
        for (int i = 0; i < 5; i++) {
                ck_assert(o[i].done);
                ck_assert_int_eq(o[i].error, -ECANCELED);
        }
        /* Server freed with requests parked. */
        s = rpc_server_free(s);
        ck_assert_uint_eq(r.abandoned, 5);

        /* Server freed from within its own handler. */
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, free_self_handler, &s, &s), 0);
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), 0);
        ck_assert_int_eq(call_once(e, c, "x", 300), -ETIMEDOUT);
        ck_assert_ptr_null(s);
        rpc_client_free(c);

        ck_assert_ptr_null(rpc_server_free(NULL));
        ck_assert_ptr_null(rpc_client_free(NULL));
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------- clients sharing one loop queue */

typedef struct Outcomes {
        const Outcome *o;
        size_t n;
} Outcomes;

static bool outcomes_done(void *userdata) {
        const Outcomes *w = userdata;

        for (size_t i = 0; i < w->n; i++)
                if (!w->o[i].done)
                        return false;
        return true;
}

START_TEST(test_clients_share_a_queue) {
        Spark__RegisterApplication ra;
        Envelope env;
        sd_event *e = NULL;
        LoopQueue *q = NULL;
        RpcServer *s = NULL;
        RpcClient *a = NULL, *b = NULL;
        char nowhere[192];
        Outcome oa[3] = {}, ob[20] = {};

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &q), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, echo_handler, NULL, &s), 0);
        snprintf(nowhere, sizeof(nowhere), "ipc://%s/nobody.sock", tmpdir);

        /* a waits for a server that is not there; b gets its answers */
        ck_assert_int_eq(rpc_client_new(e, nowhere, &(RpcClientConfig) { .queue = q }, &a), 0);
        ck_assert_int_eq(rpc_client_new(e, url, &(RpcClientConfig) { .queue = q }, &b), 0);
        make_register_app(&env, &ra, "shared");
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(rpc_client_call(a, &env, 10000, record_reply, &oa[i]), 0);
        for (int i = 0; i < 20; i++)
                ck_assert_int_eq(rpc_client_call(b, &env, 5000, record_reply, &ob[i]), 0);
        (void) test_run_until(e, outcomes_done, &(Outcomes) { ob, ELEMENTSOF(ob) }, 5 * SEC);
        for (int i = 0; i < 20; i++) {
                ck_assert(ob[i].done);
                ck_assert_int_eq(ob[i].error, 0);
                ck_assert_int_eq(ob[i].body_case, SPARK__ENVELOPE__BODY_REGISTER_APPLICATION_REPLY);
        }
        ck_assert_uint_eq(rpc_client_pending(a), 3);

        /* Freeing one client completes its own calls only; the queue and
         * the other client go on. */
        a = rpc_client_free(a);
        for (int i = 0; i < 3; i++) {
                ck_assert(oa[i].done);
                ck_assert_int_eq(oa[i].error, -ECANCELED);
        }
        ck_assert_int_eq(call_once(e, b, "shared", 5000), 0);

        b = rpc_client_free(b);
        s = rpc_server_free(s);
        q = loop_queue_free(q);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------ a peer process killed: pipe removal */

typedef struct PipeWatch {
        uint32_t request_pipe;
        uint32_t added_pipe;
        uint32_t removed_pipe;
        RpcRequest *parked;
        bool got_request, removed;
} PipeWatch;

static int pipe_watch_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        PipeWatch *w = userdata;

        (void) s;
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_HEARTBEAT);
        w->request_pipe = rpc_request_pipe_id(req);
        w->parked = req;
        w->got_request = true;
        return 0; /* parked, like a poll waiting for tasks */
}

static void pipe_watch_pipe(RpcServer *s, uint32_t pipe_id, bool added, void *userdata) {
        PipeWatch *w = userdata;

        (void) s;
        if (added)
                w->added_pipe = pipe_id;
        else if (pipe_id == w->request_pipe) {
                w->removed_pipe = pipe_id;
                w->removed = true;
        }
}

/* Runs in a fresh process (exec'ed), so it owns a clean nng. */
static int req_child(const char *child_url) {
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env = ENVELOPE_INIT;
        nng_socket sock;
        nng_msg *m;

        hb.worker_id = (char *) "doomed";
        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);
        if (nng_req0_open(&sock) != 0)
                return 1;
        if (nng_dial(sock, child_url, NULL, 0) != 0)
                return 2;
        if (nng_util_msg_from_envelope(&env, &m) < 0)
                return 3;
        if (nng_sendmsg(sock, m, 0) != 0)
                return 4;
        for (;;)
                pause(); /* until SIGKILL */
}

START_TEST(test_pipe_removed_when_peer_killed) {
        sd_event *e = NULL;
        RpcServer *s = NULL;
        PipeWatch w = {};
        pid_t pid;
        int status;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, pipe_watch_handler, &w, &s), 0);
        rpc_server_set_pipe_handler(s, pipe_watch_pipe, &w);

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                execl("/proc/self/exe", "test-rpc", "--req-child", url, (char *) NULL);
                _exit(127);
        }

        test_run_until_flag(e, &w.got_request, 10 * SEC);
        ck_assert(w.got_request);
        ck_assert_uint_ne(w.request_pipe, 0);
        test_run_for(e, 20 * 1000);
        ck_assert_uint_eq(w.added_pipe, w.request_pipe);

        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFSIGNALED(status));

        test_run_until_flag(e, &w.removed, 5 * SEC);
        ck_assert(w.removed);
        ck_assert_uint_eq(w.removed_pipe, w.request_pipe);

        /* Answering the parked request of a dead peer is harmless. */
        ck_assert_int_eq(rpc_request_reply_error(w.parked, -ECONNRESET, "peer gone"), 0);
        test_run_for(e, 20 * 1000);

        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------ the connection known to be gone */

/* Runs the loop until rpc_client_connection_lost(c) is want (nng's
 * threads set it) or timeout; returns what it is then. */
typedef struct LostWait {
        RpcClient *client;
        bool want;
} LostWait;

static bool lost_is(void *userdata) {
        const LostWait *w = userdata;

        return rpc_client_connection_lost(w->client) == w->want;
}

static bool run_until_lost_is(sd_event *e, RpcClient *c, bool want, uint64_t timeout_usec) {
        (void) test_run_until(e, lost_is, &(LostWait) { c, want }, timeout_usec);
        return rpc_client_connection_lost(c);
}

START_TEST(test_connection_lost) {
        sd_event *e = NULL;
        RpcServer *s = NULL;
        RpcClient *c = NULL;
        Counter n = {};

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert(!rpc_client_connection_lost(NULL));

        /* Nobody there yet: not known to be gone, only silent. */
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), 0);
        ck_assert_int_eq(call_once(e, c, "lost", 300), -ETIMEDOUT);
        ck_assert(!rpc_client_connection_lost(c));

        /* Connected and answered. */
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, counting_handler, &n, &s), 0);
        ck_assert_int_eq(call_once(e, c, "lost", 5000), 0);
        ck_assert(!rpc_client_connection_lost(c));

        /* The server goes: the pipe is removed, and a call that waits
         * for a new connection in vain times out with the loss still
         * known. */
        s = rpc_server_free(s);
        ck_assert(run_until_lost_is(e, c, true, 3 * SEC));
        ck_assert_int_eq(call_once(e, c, "lost", 500), -ETIMEDOUT);
        ck_assert(rpc_client_connection_lost(c));

        /* A new server at the URL: reconnected, no longer lost. */
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, counting_handler, &n, &s), 0);
        ck_assert(!run_until_lost_is(e, c, false, 5 * SEC));
        ck_assert_int_eq(call_once(e, c, "lost", 5000), 0);
        ck_assert_uint_eq(n.calls, 2);

        rpc_client_free(c);
        rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

/* ------------------------------------------------------------ the suite */

int main(int argc, char *argv[]) {
        const TTest *tests[] = {
                test_parked_requests_answered_out_of_order,
                test_sync_call_nobody_listening,
                test_async_call_nobody_listening_times_out,
                test_sync_call_and_errors,
                test_sync_session_keeps_its_connection,
                test_oversized_request_refused,
                test_garbage_gets_error_envelope,
                test_raw_handler_echo,
                test_resend_after_server_restart,
                test_free_with_work_in_flight,
                test_clients_share_a_queue,
                test_pipe_removed_when_peer_killed,
                test_connection_lost,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 60 };

        if (argc == 3 && streq(argv[1], "--req-child"))
                return req_child(argv[2]);

        return check_run_tests("rpc", &options, tests);
}
