/* Roles over real nng TLS sockets (rpc-server.h, rpc-client.h,
 * docs/security.md): a server that wants an admin for KillApplication and
 * any role for ClusterState.  Both clients answer its challenge on their
 * own; an admin is let through and the handler sees its role and subject,
 * a client is refused with EPERM and the reason, and the refusal handler
 * is told; a certificate without a role is refused; later requests on a
 * proven connection go through; a client without a certificate gets no
 * connection at all; a plaintext listener lets anyone through except a
 * job's task (a process running as one of systemd's dynamic users). */
#include <check.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-run.h"
#include "local-peer.h"
#include "macro.h"
#include "peer-proof.h"
#include "rpc-client.h"
#include "rpc-server.h"
#include "test-fixtures.h"

#define DATA "tests/data/peer-proof/"
#define SEC USEC_PER_SEC

static const TlsSettings server_tls = { DATA "ca.pem", DATA "server.pem", DATA "server.key" };
static const TlsSettings admin_tls = { DATA "ca.pem", DATA "admin.pem", DATA "admin.key" };
static const TlsSettings client_tls = { DATA "ca.pem", DATA "client.pem", DATA "client.key" };
static const TlsSettings no_ou_tls = { DATA "ca.pem", DATA "no-ou.pem", DATA "no-ou.key" };

typedef struct Seen {
        unsigned handled, refused;
        PeerIdentity peer;
        char reason[512];
} Seen;

static char url[64];

static uint32_t policy(const Envelope *env, void *userdata) {
        (void) userdata;
        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_KILL_APPLICATION:
                return PEER_ROLE_BIT(PEER_ROLE_ADMIN);
        case SPARK__ENVELOPE__BODY_HEARTBEAT:
                return PEER_ROLES_NONE;
        default:
                return PEER_ROLES_ANY;
        }
}

static void on_refused(RpcServer *s, RpcRequest *req, const char *reason, void *userdata) {
        Seen *seen = userdata;
        (void) s, (void) req;
        seen->refused++;
        snprintf(seen->reason, sizeof(seen->reason), "%s", reason);
}

static int handler(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Seen *seen = userdata;
        (void) s, (void) env;
        seen->handled++;
        seen->peer = *rpc_request_peer(req);
        return rpc_request_reply_ack(req);
}

static void kill_app(Envelope *env, Spark__KillApplication *ka) {
        *ka = (Spark__KillApplication) SPARK__KILL_APPLICATION__INIT;
        ka->app_id = (char *) "app-20261201000000-0001";
        *env = (Envelope) ENVELOPE_INIT;
        ENVELOPE_SET(env, KILL_APPLICATION, kill_application, ka);
}

typedef struct Result {
        bool done;
        int error;
        char message[512];
        bool challenge;
} Result;

static void on_reply(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        Result *r = userdata;
        (void) c;
        r->done = true;
        r->error = error;
        if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                snprintf(r->message, sizeof(r->message), "%s", reply->error->message);
                r->challenge = reply->error->challenge.len == PEER_PROOF_NONCE_SIZE;
        }
}

/* One KillApplication over an async client that waits timeout_ms for its
 * answer; the loop serves both. */
static Result async_kill_within(sd_event *e, RpcClient *c, int timeout_ms) {
        Spark__KillApplication ka;
        Result r = {};
        Envelope env;

        kill_app(&env, &ka);
        ck_assert_int_eq(rpc_client_call(c, &env, timeout_ms, on_reply, &r), 0);
        ck_assert(test_run_until_flag(e, &r.done, 10 * SEC));
        return r;
}

static Result async_kill(sd_event *e, RpcClient *c) {
        return async_kill_within(e, c, 8000);
}

typedef struct SyncCall {
        const TlsSettings *tls;
        Result result;
} SyncCall;

static void sync_call(void *arg) {
        SyncCall *c = arg;
        Spark__KillApplication ka;
        Envelope env, *reply = NULL;

        kill_app(&env, &ka);
        c->result.error = rpc_call_sync_tls(url, c->tls, &env, 5000, 0, &reply);
        if (reply && reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                snprintf(c->result.message, sizeof(c->result.message), "%s", reply->error->message);
        ck_assert_ptr_null(env.peer_proof); /* the caller's envelope is left as it was */
        envelope_free(reply);
}

static Result sync_kill(sd_event *e, const TlsSettings *tls) {
        SyncCall c = { .tls = tls };

        test_call_beside_loop(e, sync_call, &c, 10 * SEC);
        return c.result;
}

/* Three KillApplications over one kept connection (rpc_sync_session_*). */
typedef struct SessionKills {
        const TlsSettings *tls;
        int errors[3];
} SessionKills;

static void session_kills(void *arg) {
        SessionKills *k = arg;
        _cleanup_(rpc_sync_session_freep) RpcSyncSession *session = NULL;
        Spark__KillApplication ka;
        Envelope env;

        kill_app(&env, &ka);
        ck_assert_int_eq(rpc_sync_session_new(url, k->tls, &session), 0);
        for (size_t i = 0; i < ELEMENTSOF(k->errors); i++) {
                Envelope *reply = NULL;

                k->errors[i] = rpc_sync_session_call(session, &env, 5000, 0, &reply);
                envelope_free(reply);
        }
}

/* Sets url to a free port of loopback: tls+tcp:// if tls, else tcp://. */
static void pick_url(bool tls) {
        snprintf(url, sizeof(url), "%s://127.0.0.1:%u", tls ? "tls+tcp" : "tcp", test_free_port());
}

/* The server under test at url, with the server's certificate over TLS,
 * asking for roles. */
static RpcServer *serve_at_url(sd_event *e, Seen *seen, bool tls) {
        RpcServer *s = NULL;
        char error[256] = "";

        ck_assert_int_eq(rpc_server_new_envelope(e, url, tls ? &(RpcServerConfig) { .tls = &server_tls } : NULL,
                                                 handler, seen, &s),
                         0);
        ck_assert_msg(rpc_server_set_roles(s, policy, on_refused, seen, error, sizeof(error)) == 0, "%s", error);
        return s;
}

static RpcServer *serve(sd_event *e, Seen *seen, bool tls) {
        pick_url(tls);
        return serve_at_url(e, seen, tls);
}

START_TEST(test_async_roles) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(rpc_server_freep) RpcServer *s = NULL;
        _cleanup_(rpc_client_freep) RpcClient *admin = NULL, *client = NULL, *no_ou = NULL;
        Seen seen = {};
        Result r;

        ck_assert_int_ge(sd_event_new(&e), 0);
        s = serve(e, &seen, true);

        ck_assert_int_eq(rpc_client_new(e, url, &(RpcClientConfig) { .tls = &admin_tls }, &admin), 0);
        r = async_kill(e, admin);
        ck_assert_msg(r.error == 0, "%d %s", r.error, r.message);
        ck_assert_int_eq(seen.handled, 1);
        ck_assert_int_eq(seen.peer.role, PEER_ROLE_ADMIN);
        ck_assert_str_eq(seen.peer.subject, "O=spark-deploy, OU=admin, CN=ops");
        /* the connection is proven: the next one goes straight through */
        r = async_kill(e, admin);
        ck_assert_int_eq(r.error, 0);
        ck_assert_int_eq(seen.handled, 2);

        ck_assert_int_eq(rpc_client_new(e, url, &(RpcClientConfig) { .tls = &client_tls }, &client), 0);
        r = async_kill(e, client);
        ck_assert_int_eq(r.error, -EPERM);
        ck_assert_str_eq(r.message,
                         "KillApplication needs role admin; you are client (O=spark-deploy, OU=client, CN=alice)");
        ck_assert_int_eq(seen.handled, 2);
        ck_assert_int_eq(seen.refused, 1);
        ck_assert_str_eq(seen.reason, r.message);

        ck_assert_int_eq(rpc_client_new(e, url, &(RpcClientConfig) { .tls = &no_ou_tls }, &no_ou), 0);
        r = async_kill(e, no_ou);
        ck_assert_int_eq(r.error, -EPERM);
        ck_assert_ptr_nonnull(strstr(r.message, "carries no role"));
        ck_assert_int_eq(seen.handled, 2);
        ck_assert_int_eq(seen.refused, 2);
}
END_TEST

START_TEST(test_sync_roles) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(rpc_server_freep) RpcServer *s = NULL;
        Seen seen = {};
        Result r;

        ck_assert_int_ge(sd_event_new(&e), 0);
        s = serve(e, &seen, true);

        r = sync_kill(e, &admin_tls);
        ck_assert_msg(r.error == 0, "%d %s", r.error, r.message);
        ck_assert_int_eq(seen.handled, 1);
        ck_assert_int_eq(seen.peer.role, PEER_ROLE_ADMIN);

        r = sync_kill(e, &client_tls);
        ck_assert_int_eq(r.error, -EPERM);
        ck_assert_ptr_nonnull(strstr(r.message, "KillApplication needs role admin; you are client"));
        ck_assert_int_eq(seen.handled, 1);
        ck_assert_int_eq(seen.refused, 1);

        /* a kept connection proves its role once: three calls, four
         * answers (the challenge, then each call's) */
        {
                SessionKills k = { .tls = &admin_tls };
                RpcServerStats before, after;

                rpc_server_get_stats(s, &before);
                test_call_beside_loop(e, session_kills, &k, 20 * SEC);
                rpc_server_get_stats(s, &after);
                for (size_t i = 0; i < ELEMENTSOF(k.errors); i++)
                        ck_assert_int_eq(k.errors[i], 0);
                ck_assert_int_eq(seen.handled, 4);
                ck_assert_uint_eq(after.replies - before.replies, 4);
        }
}
END_TEST

START_TEST(test_plaintext_checks_nothing) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(rpc_server_freep) RpcServer *s = NULL;
        _cleanup_(rpc_client_freep) RpcClient *c = NULL;
        Seen seen = {};
        Result r;

        ck_assert_int_ge(sd_event_new(&e), 0);
        s = serve(e, &seen, false);
        ck_assert_int_eq(rpc_client_new(e, url, NULL, &c), 0);
        r = async_kill(e, c);
        ck_assert_int_eq(r.error, 0);
        ck_assert_int_eq(seen.handled, 1);
        ck_assert(!seen.peer.tls);
        ck_assert_int_eq(seen.peer.role, _PEER_ROLE_INVALID);
        ck_assert_int_eq(seen.refused, 0);
}
END_TEST

/* A child process that makes one blocking call as uid once told to go:
 * KillApplication (needs admin) or a Heartbeat (needs no role).  It is
 * forked before this process uses nng, which does not survive a fork. */
typedef struct Caller {
        pid_t pid;
        int go; /* write end: a byte says go */
        int status;
} Caller;

static Caller caller_fork(uid_t uid, bool kill) {
        Caller c;
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        c.pid = fork();
        ck_assert_int_ge(c.pid, 0);
        if (c.pid == 0) {
                _cleanup_(envelope_freep) Envelope *reply = NULL;
                Spark__KillApplication ka;
                Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
                Envelope env = ENVELOPE_INIT;
                char b;
                int k;

                close(p[1]);
                if (read(p[0], &b, 1) != 1)
                        _exit(4);
                if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(3);
                if (kill)
                        kill_app(&env, &ka);
                else
                        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);
                k = rpc_call_sync(url, &env, 5000, 0, &reply);
                _exit(k == 0 ? 0 : k == -EPERM ? 1 : 2);
        }
        close(p[0]);
        c.go = p[1];
        return c;
}

static bool caller_exited(void *userdata) {
        Caller *c = userdata;
        pid_t w = waitpid(c->pid, &c->status, WNOHANG);

        ck_assert_int_ge(w, 0);
        return w == c->pid;
}

/* Lets c make its call while the loop serves; its exit status: 0 answered,
 * 1 refused with EPERM, 2 another error. */
static int caller_run(sd_event *e, Caller *c) {
        ck_assert_int_eq(write(c->go, "g", 1), 1);
        close(c->go);
        ck_assert_msg(test_run_until(e, caller_exited, c, 10 * SEC), "the child's call did not end");
        ck_assert(WIFEXITED(c->status));
        return WEXITSTATUS(c->status);
}

START_TEST(test_plaintext_refuses_a_job) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(rpc_server_freep) RpcServer *s = NULL;
        const uid_t job = LOCAL_PEER_DYNAMIC_UID_MIN + 17;
        Caller root, user, task_kill, task_heartbeat;
        Seen seen = {};

        if (geteuid() != 0)
                return; /* needs to become other users: run as root (CI does) */
        pick_url(false);
        root = caller_fork(0, true);
        user = caller_fork(1000, true);
        task_kill = caller_fork(job, true);
        task_heartbeat = caller_fork(job, false);

        ck_assert_int_ge(sd_event_new(&e), 0);
        s = serve_at_url(e, &seen, false);

        /* an operator (root here) and any other local user get through */
        ck_assert_int_eq(caller_run(e, &root), 0);
        ck_assert_int_eq(caller_run(e, &user), 0);
        ck_assert_int_eq(seen.handled, 2);
        /* a task: what needs a role is refused, with the uid in the reason */
        ck_assert_int_eq(caller_run(e, &task_kill), 1);
        ck_assert_int_eq(seen.refused, 1);
        ck_assert_int_eq(seen.handled, 2);
        ck_assert_ptr_nonnull(strstr(seen.reason, "KillApplication is not for a job's tasks: uid 61201"));
        /* ... and what needs none still goes through (as an executor's
         * RegisterExecutor and Poll do at its driver) */
        ck_assert_int_eq(caller_run(e, &task_heartbeat), 0);
        ck_assert_int_eq(seen.handled, 3);
        ck_assert_int_eq(seen.refused, 1);
}
END_TEST

START_TEST(test_no_certificate_no_connection) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(rpc_server_freep) RpcServer *s = NULL;
        _cleanup_(rpc_client_freep) RpcClient *c = NULL;
        const TlsSettings ca_only = { DATA "ca.pem", NULL, NULL };
        Seen seen = {};

        ck_assert_int_ge(sd_event_new(&e), 0);
        s = serve(e, &seen, true);
        /* the TLS handshake wants a certificate: without one there is no
         * connection at all, and the call times out */
        ck_assert_int_eq(rpc_client_new(e, url, &(RpcClientConfig) { .tls = &ca_only }, &c), 0);
        ck_assert_int_eq(async_kill_within(e, c, 500).error, -ETIMEDOUT);
        ck_assert_int_eq(seen.handled, 0);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_async_roles,
                test_sync_roles,
                test_plaintext_checks_nothing,
                test_plaintext_refuses_a_job,
                test_no_certificate_no_connection,
                NULL,
        };
        const CheckOptions options = { .timeout = 60 };

        return check_run_tests("rpc-roles", &options, tests);
}
