/* The in-process request path of the daemon fuzz targets; see fuzz-rpc.h. */
#include <sys/epoll.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "fuzz-rpc.h"
#include "fuzz-util.h"
#include "nng-util.h"
#include "time-util.h"

#define FUZZ_RPC_DEADLINE_USEC (5 * USEC_PER_SEC)

struct FuzzRpc {
        sd_event *event;
        RpcServer *server;
        nng_socket client;
        bool client_open;
        sd_event_source *reply_source;
        RpcEnvelopeHandler handler;
        void *userdata;
};

static int trampoline(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        FuzzRpc *f = userdata;

        if (!f->handler)
                return rpc_request_reply_error(req, -ENOSYS, "no handler");
        return f->handler(s, req, env, f->userdata);
}

/* Only wakes the loop up: the answer is read by fuzz_rpc_call(). */
static int on_reply_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s, (void) fd, (void) revents, (void) userdata;
        return 0;
}

int fuzz_rpc_new(sd_event *e, const char *url, size_t max_request_bytes, FuzzRpc **ret) {
        RpcServerConfig cfg = { .n_contexts = 4, .max_request_bytes = max_request_bytes };
        FuzzRpc *f;
        int fd, r;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->event = sd_event_ref(e);
        r = rpc_server_new_envelope(e, url, &cfg, trampoline, f, &f->server);
        if (r < 0)
                goto fail;
        r = nng_errno(nng_req0_open(&f->client));
        if (r < 0)
                goto fail;
        f->client_open = true;
        /* one request at a time, answered or the target fails: never resend */
        r = nng_errno(nng_socket_set_ms(f->client, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE));
        if (r >= 0)
                r = nng_errno(nng_socket_set_size(f->client, NNG_OPT_RECVMAXSZ, 0));
        if (r >= 0)
                r = nng_errno(nng_dial(f->client, url, NULL, 0));
        if (r >= 0)
                r = nng_errno(nng_socket_get_int(f->client, NNG_OPT_RECVFD, &fd));
        if (r >= 0)
                r = sd_event_add_io(e, &f->reply_source, fd, EPOLLIN, on_reply_ready, f);
        if (r < 0)
                goto fail;
        *ret = f;
        return 0;
fail:
        fuzz_rpc_free(f);
        return r;
}

FuzzRpc *fuzz_rpc_free(FuzzRpc *f) {
        if (!f)
                return NULL;
        sd_event_source_disable_unref(f->reply_source);
        if (f->client_open)
                nng_close(f->client);
        rpc_server_free(f->server);
        sd_event_unref(f->event);
        free(f);
        return NULL;
}

RpcServer *fuzz_rpc_server(FuzzRpc *f) {
        return f->server;
}

void fuzz_rpc_set_handler(FuzzRpc *f, RpcEnvelopeHandler handler, void *userdata) {
        f->handler = handler;
        f->userdata = userdata;
}

void fuzz_rpc_run_pending(FuzzRpc *f) {
        for (unsigned i = 0; i < 64; i++) {
                int r = sd_event_run(f->event, 0);
                if (r < 0)
                        fuzz_fail("sd_event_run: %s", strerror(-r));
                if (r == 0)
                        break;
        }
}

Envelope *fuzz_rpc_call(FuzzRpc *f, const void *data, size_t len, FuzzRpcKick kick, void *kick_userdata) {
        usec_t deadline = now_mono_usec() + FUZZ_RPC_DEADLINE_USEC;
        Envelope *env = NULL;
        nng_msg *m = NULL;
        int r;

        r = nng_util_msg_from_buf(data, len, &m);
        if (r < 0)
                fuzz_fail("nng_msg_alloc: %s", strerror(-r));
        r = nng_sendmsg(f->client, m, 0);
        if (r != 0)
                fuzz_fail("cannot send the request: %s", nng_strerror(r));

        for (;;) {
                RpcServerStats st;

                r = nng_recvmsg(f->client, &m, NNG_FLAG_NONBLOCK);
                if (r == 0)
                        break;
                if (r != NNG_EAGAIN)
                        fuzz_fail("cannot receive the answer: %s", nng_strerror(r));
                if (now_mono_usec() > deadline)
                        fuzz_fail("no answer to a request within %llu s",
                                  (unsigned long long) (FUZZ_RPC_DEADLINE_USEC / USEC_PER_SEC));

                rpc_server_get_stats(f->server, &st);
                if (st.waiting > 0 && kick) {
                        /* parked: let everything due run first, then make it answer */
                        fuzz_rpc_run_pending(f);
                        rpc_server_get_stats(f->server, &st);
                        if (st.waiting > 0)
                                kick(kick_userdata);
                }
                r = sd_event_run(f->event, 50 * USEC_PER_MSEC);
                if (r < 0)
                        fuzz_fail("sd_event_run: %s", strerror(-r));
        }

        r = envelope_decode(nng_msg_body(m), nng_msg_len(m), SIZE_MAX, &env);
        if (r < 0)
                fuzz_fail("the answer (%zu bytes) does not decode: %s", nng_msg_len(m), strerror(-r));
        nng_msg_free(m);
        /* what the answer caused (timers at 0, events) */
        fuzz_rpc_run_pending(f);
        return env;
}

void fuzz_rpc_trace(const Envelope *req, int decoded, const Envelope *reply) {
        static int verbose = -1;

        if (verbose < 0) {
                const char *v = getenv("SPARK_FUZZ_VERBOSE");
                verbose = v && streq(v, "1");
        }
        if (!verbose)
                return;
        if (reply->body_case == SPARK__ENVELOPE__BODY_ERROR)
                fprintf(stderr, "%s -> error %d %s\n", decoded < 0 ? strerror(-decoded) : envelope_body_name(req),
                        reply->error->code, reply->error->message);
        else
                fprintf(stderr, "%s -> %s\n", decoded < 0 ? strerror(-decoded) : envelope_body_name(req),
                        envelope_body_name(reply));
}

void fuzz_rpc_play(FuzzRpc *f, const uint8_t *data, size_t size, const FuzzRpcTarget *t) {
        FuzzChunk chunks[FUZZ_RPC_MAX_REQUESTS];
        size_t n = fuzz_split(data, size, chunks, ELEMENTSOF(chunks));

        fuzz_rpc_set_handler(f, t->handler, t->userdata);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *before = t->digest(t->userdata), *after = NULL;
                _cleanup_envelope_ Envelope *req = NULL, *reply = NULL;
                int decoded = envelope_decode(chunks[i].data, chunks[i].len, t->max_request_bytes, &req);

                reply = fuzz_rpc_call(f, chunks[i].data, chunks[i].len, t->kick, t->userdata);
                if (t->settle)
                        fuzz_rpc_run_pending(f);
                fuzz_rpc_trace(req, decoded, reply);
                after = t->digest(t->userdata);

                if (decoded < 0) {
                        FUZZ_ASSERT(reply->body_case == SPARK__ENVELOPE__BODY_ERROR);
                        FUZZ_ASSERT(reply->error->code == decoded);
                }
                if (reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                        FUZZ_ASSERT(reply->error->code < 0);
                        FUZZ_ASSERT(!isempty(reply->error->message));
                        if (!streq(before, after))
                                fuzz_fail("%s answered with the error \"%s\" changed the state from\n%s\nto\n%s",
                                          req ? envelope_body_name(req) : "a request", reply->error->message,
                                          before, after);
                }
                if (t->check)
                        t->check(t->userdata, req, reply);
        }
        fuzz_rpc_set_handler(f, NULL, NULL);
}
