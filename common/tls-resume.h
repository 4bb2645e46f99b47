/* TLS session resumption within one process, between nng's tls+tcp://
 * connections (nng-tls-engine.c) and the task channel's (tls-session.c).
 *
 * An executor over TLS makes two connections to its driver: nng's, to
 * register and poll, then the task channel's, beside it.  Each full
 * handshake costs the executor two signature checks and a key exchange
 * (some 5 ms of CPU) and the driver a signature and a key exchange, while
 * the executors of an application start together on the same cores.  The
 * channel's handshake resumes the session nng's made instead: the
 * executor offers the session's id, and the driver, holding that session
 * in a cache of the process, takes it up without any public-key operation.
 *
 * Nothing is trusted that was not verified: a client remembers a session
 * only once its handshake verified the server (certificate, CA, host
 * name), and offers it only to the same host name; a server resumes only
 * sessions that a configuration with the same certificate made, and only a
 * process that holds the session's secret can finish a resumed handshake.
 * Anything else is a full handshake, verified as always. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

/* Server side: sessions of conf are kept for later resumption, in the
 * process's cache for own_cert (one per distinct certificate, a few at
 * most; beyond that, none: every handshake is full). */
void tls_resume_serve(mbedtls_ssl_config *conf, const mbedtls_x509_crt *own_cert);

/* Client side: ssl's handshake with server_name is done and verified;
 * remember its session (the process keeps the newest one). */
void tls_resume_remember(const mbedtls_ssl_context *ssl, const char *server_name);

/* Client side, before the handshake: offer the session remembered for
 * server_name, if there is one.  True if one was offered. */
bool tls_resume_offer(mbedtls_ssl_context *ssl, const char *server_name);

/* How many sessions the servers of this process have taken up. */
uint64_t tls_resume_served(void);
