/* Mutual TLS for nng's tls+tcp:// transport (nng 1.5 with mbedTLS).
 *
 * A listener gets the CA, its certificate and key, and
 * NNG_TLS_AUTH_MODE_REQUIRED: a peer without a certificate signed by the CA
 * fails the handshake and never becomes a pipe.  A dialer gets the CA (the
 * server must present a certificate signed by it, for the host name in the
 * URL), and its own certificate and key when set.
 *
 * Host names: the dialer checks the server certificate against the URL's
 * host.  mbedTLS 2.28 (Debian's) matches only DNS names and the CN, not IP
 * address entries, so a certificate for an address must also carry the
 * address as a DNS name (tools/spark-tls writes both).
 *
 * Errors, for the callers' messages:
 *   -ENOKEY        a tls+tcp:// URL without the settings it needs
 *   -ENOENT, -EACCES, -EISDIR, -EFBIG …   a PEM file cannot be read
 *   -EBADMSG       a PEM file the TLS engine cannot parse
 *   -EKEYREJECTED  (from nng_errno(): NNG_ECRYPTO, NNG_EPEERAUTH) the TLS
 *                  handshake failed: either side refused the other's
 *                  certificate.
 * What nng 1.5 lets us see of a refused handshake is in tls-watch.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <nng/nng.h>

#include "tls.h"

/* PEM files larger than this are refused (-EFBIG). */
#define TLS_PEM_FILE_MAX (1024u * 1024u)

/* The contents of the PEM file path, NUL-terminated as the PEM parsers
 * want them (at most TLS_PEM_FILE_MAX bytes, else -EFBIG). */
int nng_tls_read_pem(const char *path, char **ret);

/* For a tls+tcp:// listener: applies t (which must name all three files,
 * else -ENOKEY) with the peer's certificate required.  For any other URL
 * does nothing and returns 0.  Call before nng_listener_start(). */
int nng_tls_setup_listener(nng_listener l, const char *url, const TlsSettings *t);

/* The same with NNG_TLS_AUTH_MODE_NONE: the listener proves who it is but
 * asks the peer for no certificate.  For the driver's executor_listen:
 * executors hold no certificate, and prove who they are with their secret
 * (executor-secret.h) in every request. */
int nng_tls_setup_listener_no_client_cert(nng_listener l, const char *url, const TlsSettings *t);

/* For a tls+tcp:// dialer: verifies the server against t's CA (-ENOKEY if
 * t names none) and its host name against url; presents t's certificate
 * when it names one.  For any other URL does nothing.  Call before
 * nng_dialer_start(). */
int nng_tls_setup_dialer(nng_dialer d, const char *url, const TlsSettings *t);

/* Loads each file t names into a throwaway TLS configuration, so that a
 * daemon can refuse to start with a precise message rather than fail every
 * handshake.  need_cert: the certificate and key must be named too.
 * Returns 0, or a negative errno with "<what> <path>: <why>" in error. */
int nng_tls_check_settings(const TlsSettings *t, bool need_cert, char *error, size_t error_size);
