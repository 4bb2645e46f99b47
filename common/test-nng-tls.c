/* Mutual TLS over tls+tcp:// on loopback, with the test certificates of
 * tests/data/tls: a client with a certificate from the cluster CA gets its
 * answer; one without a certificate, with a self-signed one or one from
 * another CA is refused, and so is a server not signed by our CA or not for
 * the host dialled; the listener's refusals reach a TlsWatch; missing or
 * broken settings are refused before anything is sent; pub/sub works over
 * TLS too; the handshakes are our engine's (nng-tls-engine.h).  Runs from
 * the source root. */
#include <check.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-run.h"
#include "codec.h"
#include "event-pub.h"
#include "event-sub.h"
#include "macro.h"
#include "nng-tls.h"
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/tls/tls.h>
#include "nng-util.h"
#include "rpc-client.h"
#include "rpc-server.h"
#include "test-fixtures.h"
#include "tls-watch.h"

#define DATA "tests/data/tls/"
#define SEC USEC_PER_SEC

static const TlsSettings good = { DATA "ca.pem", DATA "host.pem", DATA "host.key" };
static const TlsSettings no_cert = { DATA "ca.pem", NULL, NULL };
static const TlsSettings self_signed = { DATA "ca.pem", DATA "self.pem", DATA "self.key" };
static const TlsSettings other_ca_client = { DATA "ca.pem", DATA "other.pem", DATA "other.key" };
/* Trusts another CA: the server's certificate is not signed by it. */
static const TlsSettings wrong_trust = { DATA "other-ca.pem", DATA "other.pem", DATA "other.key" };

static char url[64], dial_url[64];

static void setup(void) {
        unsigned port = test_free_port();

        snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%u", port);
        snprintf(dial_url, sizeof(dial_url), "tls+tcp://localhost:%u", port);
}

static int ack_handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Spark__Ack ack = SPARK__ACK__INIT;
        Envelope reply = ENVELOPE_INIT;

        (void) s, (void) env, (void) userdata;
        ENVELOPE_SET(&reply, ACK, ack, &ack);
        return rpc_request_reply_envelope(req, &reply);
}

typedef struct Call {
        const char *url;
        const TlsSettings *tls;
        int result;
} Call;

static void call_sync(void *arg) {
        Call *c = arg;
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env = ENVELOPE_INIT, *reply = NULL;

        hb.worker_id = (char *) "worker-1";
        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);
        c->result = rpc_call_sync_tls(c->url, c->tls, &env, 3000, 0, &reply);
        if (c->result == 0 && reply->body_case != SPARK__ENVELOPE__BODY_ACK)
                c->result = -EBADMSG;
        envelope_free(reply);
}

/* rpc_call_sync_tls() on a thread while the loop serves. */
static int call(sd_event *e, const char *to, const TlsSettings *tls) {
        Call c = { .url = to, .tls = tls };

        test_call_beside_loop(e, call_sync, &c, 10 * SEC);
        return c.result;
}

typedef struct Refusals {
        char url[64];
        uint64_t listener, dialer;
        unsigned reports;
} Refusals;

static void on_refused(TlsWatch *w, const char *u, bool listener, uint64_t n, void *userdata) {
        Refusals *r = userdata;

        (void) w;
        snprintf(r->url, sizeof(r->url), "%s", u);
        if (listener)
                r->listener += n;
        else
                r->dialer += n;
        r->reports++;
}

START_TEST(test_mutual_tls) {
        RpcServerConfig cfg = { .tls = &good };
        _cleanup_(tls_watch_freep) TlsWatch *w = NULL;
        Refusals refused = {};
        char loopback2[64];
        sd_event *e = NULL;
        RpcServer *s = NULL;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, &cfg, ack_handler, NULL, &s), 0);
        /* Hour-long intervals: only explicit polls report, and each report
         * after the first waits for that interval. */
        ck_assert_int_eq(tls_watch_new(e, 3600 * SEC, 3600 * SEC, on_refused, &refused, &w), 0);
        ck_assert_int_eq(tls_watch_poll(w), 0);

        /* A member of the cluster, by address and by name. */
        ck_assert_int_eq(call(e, url, &good), 0);
        ck_assert_int_eq(call(e, dial_url, &good), 0);
        /* through our engine (nng-tls-engine.h), not nng's own */
        ck_assert_str_eq(nng_tls_engine_name(), "spark-mbedtls");
        ck_assert_int_eq(tls_watch_poll(w), 0);

        /* Refused by the server: no certificate, a self-signed one, one
         * from another CA. */
        ck_assert_int_eq(call(e, url, &no_cert), -EKEYREJECTED);
        ck_assert_int_eq(tls_watch_poll(w), 1);
        ck_assert_str_eq(refused.url, url);
        ck_assert_uint_eq(refused.listener, 1);
        ck_assert_int_eq(call(e, url, &self_signed), -EKEYREJECTED);
        ck_assert_int_eq(call(e, url, &other_ca_client), -EKEYREJECTED);
        /* Within the report interval: counted, not reported. */
        ck_assert_int_eq(tls_watch_poll(w), 0);
        ck_assert_uint_eq(refused.listener, 1);

        /* Refused by the client: a server not signed by the CA we trust,
         * and one whose certificate is not for the host dialled (all of
         * 127/8 is this host). */
        ck_assert_int_eq(call(e, url, &wrong_trust), -EKEYREJECTED);
        snprintf(loopback2, sizeof(loopback2), "tls+tcp://127.0.0.2:%s", strrchr(url, ':') + 1);
        s = rpc_server_free(s);
        {
                char any[64];

                snprintf(any, sizeof(any), "tls+tcp://0.0.0.0:%s", strrchr(url, ':') + 1);
                ck_assert_int_eq(rpc_server_new_envelope(e, any, &cfg, ack_handler, NULL, &s), 0);
        }
        ck_assert_int_eq(call(e, loopback2, &good), -EKEYREJECTED);
        ck_assert_int_eq(call(e, url, &good), 0);

        /* The old listener went with its pending count: reported now. */
        ck_assert_int_ge(tls_watch_poll(w), 1);
        ck_assert_uint_ge(refused.listener, 3);

        /* Plain TCP to a TLS endpoint gets nowhere. */
        {
                char plain[64];
                int r;

                snprintf(plain, sizeof(plain), "tcp://127.0.0.1:%s", strrchr(url, ':') + 1);
                r = call(e, plain, NULL);
                ck_assert_msg(r == -ECONNRESET || r == -ETIMEDOUT, "plain call: %d", r);
        }

        rpc_server_free(s);
        w = tls_watch_free(w);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_missing_settings) {
        TlsSettings ca_only = { DATA "ca.pem", "", "" };
        RpcServerConfig cfg = { .tls = &ca_only };
        RpcClientConfig ccfg = {};
        sd_event *e = NULL;
        RpcServer *s = NULL;
        RpcClient *c = NULL;
        EventPub *p = NULL;

        ck_assert_int_ge(sd_event_new(&e), 0);
        /* A listener needs all three; a dialer the CA. */
        ck_assert_int_eq(rpc_server_new_envelope(e, url, NULL, ack_handler, NULL, &s), -ENOKEY);
        ck_assert_int_eq(rpc_server_new_envelope(e, url, &cfg, ack_handler, NULL, &s), -ENOKEY);
        ck_assert_int_eq(event_pub_new(url, 0, &ca_only, &p), -ENOKEY);
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), -ENOKEY);
        ck_assert_int_eq(rpc_client_new(e, url, &ccfg, &c), -ENOKEY);
        ck_assert_int_eq(call(e, url, NULL), -ENOKEY);
        /* A dialer may go without a certificate (the server decides). */
        ccfg.tls = &ca_only;
        ck_assert_int_eq(rpc_client_new(e, url, &ccfg, &c), 0);
        c = rpc_client_free(c);

        /* Files that cannot be read or parsed. */
        {
                TlsSettings missing = { "/nonexistent/ca.pem", DATA "host.pem", DATA "host.key" };
                TlsSettings garbage = { "/dev/null", DATA "host.pem", DATA "host.key" };
                TlsSettings swapped = { DATA "ca.pem", DATA "host.key", DATA "host.pem" };

                cfg.tls = &missing;
                ck_assert_int_eq(rpc_server_new_envelope(e, url, &cfg, ack_handler, NULL, &s), -ENOENT);
                cfg.tls = &garbage;
                ck_assert_int_eq(rpc_server_new_envelope(e, url, &cfg, ack_handler, NULL, &s), -EBADMSG);
                cfg.tls = &swapped;
                ck_assert_int_eq(rpc_server_new_envelope(e, url, &cfg, ack_handler, NULL, &s), -EBADMSG);
        }
        /* Settings are ignored for other transports. */
        cfg.tls = NULL;
        ck_assert_int_eq(rpc_server_new_envelope(e, "tcp://127.0.0.1:0", &cfg, ack_handler, NULL, &s), 0);
        s = rpc_server_free(s);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_check_settings) {
        char err[512] = "";

        ck_assert_int_eq(nng_tls_check_settings(&good, true, err, sizeof(err)), 0);
        ck_assert_int_eq(nng_tls_check_settings(&no_cert, false, err, sizeof(err)), 0);

        ck_assert_int_eq(nng_tls_check_settings(&no_cert, true, err, sizeof(err)), -ENOKEY);
        ck_assert_str_eq(err, "no certificate given");
        ck_assert_int_eq(nng_tls_check_settings(NULL, false, err, sizeof(err)), -ENOKEY);
        ck_assert_str_eq(err, "no CA certificate given");
        {
                TlsSettings t = { "/dev/null", DATA "host.pem", DATA "host.key" };
                ck_assert_int_eq(nng_tls_check_settings(&t, true, err, sizeof(err)), -EBADMSG);
                ck_assert_str_eq(err, "CA certificate /dev/null: not a PEM CA certificate the TLS engine accepts");
        }
        {
                TlsSettings t = { DATA "ca.pem", DATA "host.pem", "/nonexistent/host.key" };
                ck_assert_int_eq(nng_tls_check_settings(&t, true, err, sizeof(err)), -ENOENT);
                ck_assert_str_eq(err, "private key /nonexistent/host.key: No such file or directory");
        }
        {
                TlsSettings t = { DATA "ca.pem", DATA "host.pem", NULL };
                ck_assert_int_eq(nng_tls_check_settings(&t, false, err, sizeof(err)), -ENOKEY);
                ck_assert_str_eq(err, "no private key given");
        }
        {
                TlsSettings t = { DATA "ca.pem", DATA "host.pem", DATA "ca.pem" };
                ck_assert_int_eq(nng_tls_check_settings(&t, true, err, sizeof(err)), -EBADMSG);
                ck_assert_msg(strstr(err, "cannot be used together"), "%s", err);
        }
}
END_TEST

typedef struct Events {
        unsigned n;
} Events;

static void on_event(EventSub *s, const Envelope *env, void *userdata) {
        Events *ev = userdata;

        (void) s, (void) env;
        ev->n++;
}

START_TEST(test_pub_sub) {
        EventSubConfig good_cfg = { .tls = &good, .reconnect_min_ms = 20, .reconnect_max_ms = 100 };
        EventSubConfig bad_cfg = { .tls = &self_signed, .reconnect_min_ms = 20, .reconnect_max_ms = 100 };
        Events member = {}, stranger = {};
        EventSub *a = NULL, *b = NULL;
        EventPub *p = NULL;
        sd_event *e = NULL;
        uint64_t deadline;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(event_pub_new(url, 0, &good, &p), 0);
        ck_assert_int_eq(event_sub_new(e, dial_url, &good_cfg, on_event, NULL, &member, &a), 0);
        ck_assert_int_eq(event_sub_new(e, url, &bad_cfg, on_event, NULL, &stranger, &b), 0);

        /* Publish until the member hears; the stranger never connects. */
        deadline = now_mono_usec() + 10 * SEC;
        while (member.n < 3 && now_mono_usec() < deadline) {
                Spark__WorkerLost wl = SPARK__WORKER_LOST__INIT;
                Envelope env = ENVELOPE_INIT;

                wl.worker_id = (char *) "worker-1";
                ENVELOPE_SET(&env, WORKER_LOST, worker_lost, &wl);
                ck_assert_int_eq(event_pub_send(p, &env), 0);
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        }
        ck_assert_uint_ge(member.n, 3);
        ck_assert_uint_eq(stranger.n, 0);
        ck_assert_uint_eq(event_pub_subscribers(p), 1);

        event_sub_free(b);
        event_sub_free(a);
        event_pub_free(p);
        {
                /* Handed to the loop: freed with it (ASan would see a leak). */
                TlsWatch *w = NULL;
                Refusals none = {};

                ck_assert_int_eq(tls_watch_new(e, 0, 0, on_refused, &none, &w), 0);
                ck_assert_int_eq(tls_watch_set_floating(w), 0);
        }
        sd_event_unref(e);
}
END_TEST

/* A daemon checks its TLS files before it opens any socket: the first TLS
 * configuration of the process is made before nng has initialised, which
 * registers nng's own engine.  Ours must still be the one in use after.
 * In a child of its own: nng initialises once per process. */
START_TEST(test_engine_first_thing) {
        char error[512];
        int status;
        pid_t pid;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                nng_socket s;
                bool ok = nng_tls_check_settings(&good, true, error, sizeof(error)) == 0 &&
                          nng_rep0_open(&s) == 0 && nng_util_listen(s, url, &good, NULL) == 0 &&
                          streq(nng_tls_engine_name(), "spark-mbedtls");
                _exit(ok ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_mutual_tls,
                test_missing_settings,
                test_check_settings,
                test_pub_sub,
                test_engine_first_thing,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .timeout = 60 };

        return check_run_tests("nng-tls", &options, tests);
}
