/* The executor's nng socket, opened on first need.
 *
 * An executor launched with its driver's task channel registers and polls
 * there (executor-channel.c) and may never need nng: opening it costs
 * nng's start (it starts 13 threads, about 5 ms of a fresh process), and
 * over TLS a second full handshake, both on the way to the registration
 * that the app's first task waits for.  nng is opened when the channel
 * cannot be used, or the first time a task thread fetches a library (a
 * blocking call over nng, executor_fetch_library()); hence the lock. */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "executor.h"
#include "nng-util.h"

/* Non-blocking: the dialer keeps trying until the driver is there. */
static int executor_dial(Executor *e) {
        /* For tls+tcp://: only the CA, to verify the driver.  An executor
         * holds no certificate; its secret says who it is. */
        TlsSettings tls = { .ca_file = e->ca_file };

        return nng_util_dial(e->sock, e->args.driver_url, &tls, NNG_FLAG_NONBLOCK, &e->dialer);
}

static int nng_open_locked(Executor *e) {
        int r;

        r = nng_errno(nng_req0_open(&e->sock));
        if (r < 0)
                return log_error_errno(r, "Failed to open a socket: %m");
        e->sock_open = true;
        r = nng_util_set_recv_limit(e->sock, EXECUTOR_MAX_MESSAGE_BYTES);
        if (r >= 0)
                r = nng_util_set_reconnect(e->sock, 50, 1000);
        /* A request is sent again at once when its connection drops (nng
         * does that itself, whatever this option says); on a live
         * connection never: a parked poll is answered within heartbeat_ms,
         * a resend would only hand the driver a duplicate, and a silent
         * driver is the deadline's business (executor_arm_deadline()).
         * Without a resend time nng arms no timer per request either, which
         * spared its timer thread a wake-up per poll.  Contexts take it from
         * the socket when they are opened. */
        if (r >= 0)
                r = nng_errno(nng_socket_set_ms(e->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE));
        if (r < 0)
                return log_error_errno(r, "Failed to set socket options: %m");
        r = executor_slots_open(e);
        if (r < 0)
                return log_error_errno(r, "Failed to open request contexts: %m");
        r = executor_dial(e);
        if (r < 0)
                return log_error_errno(r, "Failed to dial %s: %m", e->args.driver_url);
        return 0;
}

/* Opens nng unless it is open; with redial, an open socket dials again:
 * its connection goes with the old dialer, and the requests on it end with
 * ECONNRESET and are sent again (executor_slot_done()). */
static int nng_open_or_redial(Executor *e, bool redial) {
        int r = 0;

        pthread_mutex_lock(&e->nng_lock);
        if (e->nng_closed)
                r = -ESHUTDOWN;
        else if (!e->sock_open)
                r = nng_open_locked(e);
        else if (redial) {
                (void) nng_dialer_close(e->dialer);
                r = executor_dial(e);
                if (r < 0)
                        log_error_errno(r, "Failed to dial %s again: %m", e->args.driver_url);
        }
        pthread_mutex_unlock(&e->nng_lock);
        return r;
}

int executor_nng_open(Executor *e) {
        return nng_open_or_redial(e, false);
}

int executor_redial(Executor *e) {
        return nng_open_or_redial(e, true);
}

void executor_nng_close(Executor *e) {
        pthread_mutex_lock(&e->nng_lock);
        e->nng_closed = true;
        if (e->sock_open) {
                (void) nng_close(e->sock);
                e->sock_open = false;
        }
        pthread_mutex_unlock(&e->nng_lock);
}
