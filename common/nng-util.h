/* Glue between nng and the rest of the code: the one place where nng's
 * positive NNG_E* codes become negative errno values, plus the socket
 * settings every daemon applies the same way. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "codec.h"
#include "tls.h"

/* Translates an nng return value: 0 stays 0, NNG_E* becomes a negative
 * errno (NNG_ETIMEDOUT → -ETIMEDOUT, NNG_ECLOSED → -ESHUTDOWN, …), a
 * system error carried by nng becomes that errno, anything unknown -EIO.
 * A failed TLS handshake (NNG_ECRYPTO, NNG_EPEERAUTH) becomes
 * -EKEYREJECTED.  A value that is already negative is returned unchanged. */
int nng_errno(int nng_rv);

/* NNG_OPT_RECVMAXSZ: nng drops (and disconnects) a peer that sends a larger
 * message, before any of our code sees it.  0 means SPARK_MAX_MESSAGE_BYTES. */
int nng_util_set_recv_limit(nng_socket s, size_t max_bytes);

/* Opens a socket with open_fn (nng_rep0_open, nng_sub0_open, ...) and sets
 * its receive limit (nng_util_set_recv_limit()); closes it again if that
 * fails, so that *ret is an open socket only on success. */
int nng_util_open(int (*open_fn)(nng_socket *), size_t max_bytes, nng_socket *ret);

/* Dialer back-off for sockets that dial (inherited by dialers created after
 * this call).  Values <= 0 keep nng's defaults. */
int nng_util_set_reconnect(nng_socket s, int min_ms, int max_ms);

/* nng_listen() / nng_dial() with the TLS settings applied when url is
 * tls+tcp:// (see nng-tls.h; tls may be NULL for other URLs).  flags as
 * nng's (NNG_FLAG_NONBLOCK for a dialer that keeps trying in the
 * background).  ret may be NULL. */
int nng_util_listen(nng_socket s, const char *url, const TlsSettings *tls, nng_listener *ret);
/* As nng_util_listen(), but a tls+tcp:// listener asks for no client
 * certificate (nng_tls_setup_listener_no_client_cert()). */
int nng_util_listen_no_client_cert(nng_socket s, const char *url, const TlsSettings *tls, nng_listener *ret);
int nng_util_dial(nng_socket s, const char *url, const TlsSettings *tls, int flags, nng_dialer *ret);

/* Packs env (version set to SPARK_PROTOCOL_VERSION) straight into a new nng
 * message, without an intermediate buffer.  -EINVAL if env has no body. */
int nng_util_msg_from_envelope(Envelope *env, nng_msg **ret);

/* A new nng message holding a copy of buf. */
int nng_util_msg_from_buf(const void *buf, size_t len, nng_msg **ret);

/* Checks that url names a transport we support (tcp://, ipc://,
 * tls+tcp://, inproc://) and that nng can parse it.  Returns 0, -EINVAL
 * (malformed) or -EPROTONOSUPPORT (another scheme). */
int nng_util_check_url(const char *url);

/* CLOCK_MONOTONIC in milliseconds, for deadlines computed on nng threads. */
uint64_t nng_util_now_ms(void);

/* Remaining milliseconds until deadline_ms (>= 0). */
int nng_util_remaining_ms(uint64_t deadline_ms);

static inline void nng_msg_freep(nng_msg **m) {
        if (*m)
                nng_msg_free(*m);
}
#define _cleanup_nng_msg_ _cleanup_(nng_msg_freep)
