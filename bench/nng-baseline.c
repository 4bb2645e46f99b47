/* nng-baseline: the raw nng req/rep mechanism with nothing of ours around
 * it, the "limit" rows of docs/DESIGN.md §10.  The rep side runs in a child process
 * (as a daemon would), echoing each request from an aio callback; the req
 * side is this process.
 *
 *   nng-baseline rate URL CONTEXTS SECONDS   round trips/s with CONTEXTS
 *                                            requests in flight (64 B each)
 *   nng-baseline rtt URL COUNT               COUNT sequential 64 B round
 *                                            trips, one context
 *
 * Prints "key value" lines: rate_msgs_per_s; rtt_us_p50, rtt_us_p99,
 * rtt_us_mean, and rtt_ctxsw_server, rtt_ctxsw_client: the context
 * switches of each side (all its threads) per round trip.  Exits non-zero on any error.
 *
 * With a tls+tcp:// URL: mutual TLS through common/nng-util's listener and
 * dialer, as the daemons have it (the listener requires the peer's
 * certificate).  Both sides trust $SPARK_TLS_CA_FILE; the req side presents
 * $SPARK_TLS_CERT_FILE and $SPARK_TLS_KEY_FILE (a client's certificate, as
 * sparkctl), the rep side $BENCH_TLS_SERVER_CERT_FILE and
 * $BENCH_TLS_SERVER_KEY_FILE (a daemon's: a client certificate is not for
 * servers).  No proof of role: that is one more round trip per connection,
 * made once, not per message. */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <nng/nng.h>
#include <nng/supplemental/util/platform.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "bench-util.h"
#include "macro.h"
#include "nng-util.h"
#include "tls.h"

#define MSG_BYTES 64
#define MAX_CONTEXTS 1024

/* ------------------------------------------------------------ rep side */

typedef enum ServerState { SERVER_RECV, SERVER_SEND } ServerState;

typedef struct ServerCtx {
        nng_ctx ctx;
        nng_aio *aio;
        ServerState state;
} ServerCtx;

static void server_cb(void *arg) {
        ServerCtx *c = arg;

        if (nng_aio_result(c->aio) != 0) {
                if (c->state == SERVER_SEND)
                        nng_msg_free(nng_aio_get_msg(c->aio));
                if (nng_aio_result(c->aio) == NNG_ECLOSED)
                        return;
                c->state = SERVER_RECV;
                nng_ctx_recv(c->ctx, c->aio);
                return;
        }
        if (c->state == SERVER_RECV) {
                /* echo the request back as it is */
                c->state = SERVER_SEND;
                nng_ctx_send(c->ctx, c->aio);
                return;
        }
        c->state = SERVER_RECV;
        nng_ctx_recv(c->ctx, c->aio);
}

static _Noreturn void serve(const char *url, int n_contexts) {
        static ServerCtx ctxs[MAX_CONTEXTS];
        TlsSettings tls = {
                .ca_file = getenv(TLS_CA_FILE_ENV),
                .cert_file = getenv("BENCH_TLS_SERVER_CERT_FILE"),
                .key_file = getenv("BENCH_TLS_SERVER_KEY_FILE"),
        };
        nng_socket s;
        int rv;

        rv = nng_errno(nng_rep0_open(&s));
        if (rv == 0)
                rv = nng_util_listen(s, url, &tls, NULL);
        if (rv < 0) {
                fprintf(stderr, "nng-baseline: cannot listen on %s: %s\n", url, strerror(-rv));
                _exit(1);
        }
        for (int i = 0; i < n_contexts; i++) {
                if (nng_ctx_open(&ctxs[i].ctx, s) != 0 || nng_aio_alloc(&ctxs[i].aio, server_cb, &ctxs[i]) != 0)
                        _exit(1);
                ctxs[i].state = SERVER_RECV;
                nng_ctx_recv(ctxs[i].ctx, ctxs[i].aio);
        }
        /* until the parent goes */
        for (;;)
                pause();
}

static pid_t start_server(const char *url, int n_contexts) {
        pid_t pid = fork();

        if (pid < 0)
                return -1;
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                serve(url, n_contexts);
        }
        return pid;
}

static void stop_server(pid_t pid) {
        if (pid > 0) {
                kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
        }
}

/* Returns 0 or a negative errno. */
static int dial(const char *url, nng_socket *ret) {
        TlsSettings tls = tls_settings_from_env();
        int rv = nng_errno(nng_req0_open(ret));

        if (rv < 0)
                return rv;
        /* the server may take a moment to listen: retry the first dial */
        for (int i = 0; i < 200; i++) {
                rv = nng_util_dial(*ret, url, &tls, 0, NULL);
                if (rv != -ECONNREFUSED)
                        break;
                nng_msleep(10);
        }
        return rv;
}

/* Starts the server of n_contexts contexts and dials it: its pid, or -1
 * (said on stderr) with nothing left running. */
static pid_t start_and_dial(const char *url, int n_contexts, nng_socket *ret) {
        pid_t server = start_server(url, n_contexts);
        int rv;

        if (server < 0)
                return -1;
        rv = dial(url, ret);
        if (rv < 0) {
                fprintf(stderr, "nng-baseline: cannot dial %s: %s\n", url, strerror(-rv));
                stop_server(server);
                return -1;
        }
        return server;
}

/* ------------------------------------------------------------- rate */

typedef struct ClientCtx {
        nng_ctx ctx;
        nng_aio *aio;
        ServerState state; /* SERVER_SEND: a request is out; SERVER_RECV: awaiting the reply */
} ClientCtx;

static atomic_uint_fast64_t completed;
static atomic_bool stopping;

static void client_send(ClientCtx *c) {
        nng_msg *m;

        if (atomic_load(&stopping) || nng_msg_alloc(&m, MSG_BYTES) != 0)
                return;
        memset(nng_msg_body(m), 'x', MSG_BYTES);
        nng_aio_set_msg(c->aio, m);
        c->state = SERVER_SEND;
        nng_ctx_send(c->ctx, c->aio);
}

static void client_cb(void *arg) {
        ClientCtx *c = arg;
        int rv = nng_aio_result(c->aio);

        if (rv != 0) {
                if (c->state == SERVER_SEND)
                        nng_msg_free(nng_aio_get_msg(c->aio));
                if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
                        return;
                client_send(c);
                return;
        }
        if (c->state == SERVER_SEND) {
                c->state = SERVER_RECV;
                nng_ctx_recv(c->ctx, c->aio);
                return;
        }
        nng_msg_free(nng_aio_get_msg(c->aio));
        atomic_fetch_add(&completed, 1);
        client_send(c);
}

static int run_rate(const char *url, int n_contexts, double seconds) {
        static ClientCtx ctxs[MAX_CONTEXTS];
        nng_socket s;
        uint64_t c0, c1, t0, t1;
        pid_t server;

        server = start_and_dial(url, n_contexts, &s);
        if (server < 0)
                return 1;
        for (int i = 0; i < n_contexts; i++) {
                if (nng_ctx_open(&ctxs[i].ctx, s) != 0 || nng_aio_alloc(&ctxs[i].aio, client_cb, &ctxs[i]) != 0) {
                        stop_server(server);
                        return 1;
                }
                nng_ctx_set_ms(ctxs[i].ctx, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
                client_send(&ctxs[i]);
        }
        nng_msleep(500); /* warm up: connections, thread pools */
        c0 = atomic_load(&completed);
        t0 = bench_now_usec();
        nng_msleep((nng_duration) (seconds * 1000));
        c1 = atomic_load(&completed);
        t1 = bench_now_usec();
        atomic_store(&stopping, true);

        printf("rate_msgs_per_s %.0f\n", (double) (c1 - c0) * 1e6 / (double) (t1 - t0));
        printf("rate_contexts %d\n", n_contexts);
        fflush(stdout);
        stop_server(server);
        /* skip nng_close(): with the peer gone it has nothing to flush, and
         * nng 1.5.2 can hang closing a busy socket (see common/rpc-server.h) */
        _exit(0);
}

/* -------------------------------------------------------------- rtt */

static uint64_t own_ctxsw(void) {
        struct rusage ru;

        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return 0;
        return (uint64_t) ru.ru_nvcsw + (uint64_t) ru.ru_nivcsw;
}

static int run_rtt(const char *url, int count) {
        _cleanup_free_ uint64_t *samples = calloc((size_t) count, sizeof(uint64_t));
        uint64_t server_cs = 0, client_cs = 0;
        nng_socket s;
        pid_t server;
        int rv;

        if (!samples)
                return 1;
        server = start_and_dial(url, 1, &s);
        if (server < 0)
                return 1;
        for (int i = -count / 10; i < count; i++) {
                nng_msg *m;
                uint64_t t0;

                if (i == 0) {
                        server_cs = bench_ctxsw_of(server, NULL);
                        client_cs = own_ctxsw();
                }
                t0 = bench_now_usec();

                if (nng_msg_alloc(&m, MSG_BYTES) != 0)
                        break;
                memset(nng_msg_body(m), 'x', MSG_BYTES);
                rv = nng_sendmsg(s, m, 0);
                if (rv == 0)
                        rv = nng_recvmsg(s, &m, 0);
                if (rv != 0) {
                        fprintf(stderr, "nng-baseline: round trip failed: %s\n", nng_strerror(rv));
                        stop_server(server);
                        return 1;
                }
                nng_msg_free(m);
                if (i >= 0)
                        samples[i] = bench_now_usec() - t0;
        }
        server_cs = bench_ctxsw_of(server, NULL) - server_cs;
        client_cs = own_ctxsw() - client_cs;
        bench_sort_u64(samples, (size_t) count);
        printf("rtt_us_p50 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 50));
        printf("rtt_us_p99 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 99));
        printf("rtt_us_mean %.1f\n", bench_mean_u64(samples, (size_t) count));
        printf("rtt_ctxsw_server %.1f\n", (double) server_cs / count);
        printf("rtt_ctxsw_client %.1f\n", (double) client_cs / count);
        fflush(stdout);
        stop_server(server);
        _exit(0);
}

int main(int argc, char **argv) {
        if (argc == 5 && streq(argv[1], "rate")) {
                int n = atoi(argv[3]);
                if (n < 1 || n > MAX_CONTEXTS)
                        return 2;
                return run_rate(argv[2], n, atof(argv[4]));
        }
        if (argc == 4 && streq(argv[1], "rtt") && atoi(argv[3]) > 0)
                return run_rtt(argv[2], atoi(argv[3]));
        fprintf(stderr, "usage: nng-baseline rate URL CONTEXTS SECONDS | rtt URL COUNT\n");
        return 2;
}
