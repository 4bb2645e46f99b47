/* The TLS engine of nng's tls+tcp:// transport: mbedtls 2.28, as nng's
 * own, but with the key exchange's curves chosen.
 *
 * nng's built-in engine keeps mbedtls's default list, which puts secp521r1
 * first; a server takes the first curve of its list that the client
 * offers, so every handshake between two nng peers does its key exchange
 * on P-521.  Measured here, that made a handshake cost about 14 ms of the
 * client's CPU and 9.5 ms of the server's; on X25519 it costs 5.6 and
 * 2.6 ms, and an executor registers over TLS that much sooner.  The
 * certificates that spark-tls makes are P-256, so nothing of their
 * strength is lost.
 *
 * nng lets a program supply its engine (nng/supplemental/tls/engine.h);
 * nng_tls_use_engine() registers this one, once per process and after nng
 * has initialised (which registers nng's own), and nng-tls.c calls it
 * before it makes any TLS configuration.  The engine
 * keeps nng's behaviour otherwise: TLS 1.2, the same checks, the same
 * errors for nng to report. */
#pragma once

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>

/* The curves of the key exchange, best first: X25519, P-256, P-384.  The
 * task channel's sessions (tls-session.c) offer the same. */
extern const mbedtls_ecp_group_id tls_key_exchange_curves[];

/* The process's random generator for TLS, seeded once (thread-safe; NULL
 * if it could not be seeded): this engine's and the task channel's. */
mbedtls_ctr_drbg_context *tls_random_generator(void);

/* Registers the engine for the configurations made from now on (a
 * configuration keeps the engine it was made with).  Idempotent and
 * thread-safe; 0 or a negative errno. */
int nng_tls_use_engine(void);
