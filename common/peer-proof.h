/* Proof of a peer's role on a TLS listener (docs/security.md).
 *
 * nng 1.5.2 tells a listener only that the peer's certificate verified
 * (NNG_OPT_TLS_VERIFIED), not which certificate it was, so the role in it
 * cannot be read from the connection.  Instead the server sends a fresh
 * nonce; the peer answers with its certificate and a signature of
 *     "spark-deploy peer proof v1\0" || nonce
 * made with the certificate's key (SHA-256; ECDSA P-256 for the keys
 * spark-tls makes).  The server checks, with mbedtls, that the certificate
 * was signed by the cluster CA and is valid now, carries exactly one OU that
 * names a role, that the nonce is one it issued to that connection and has
 * not been used, and that the signature verifies with the certificate's
 * public key.  The domain string keeps the signature from meaning anything
 * outside this protocol.
 *
 * Three parts: a signer (the client's certificate and key), a verifier (the
 * CA), and the server's bounded set of issued nonces.  Nothing here logs;
 * messages for the user go into the error buffers the callers pass. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "macro.h"
#include "peer-role.h"

#define PEER_PROOF_DOMAIN "spark-deploy peer proof v1"
#define PEER_PROOF_NONCE_SIZE 32u
/* Bounds of the fields a peer sends (a certificate chain is refused: the
 * cluster's certificates are signed by the CA directly). */
#define PEER_PROOF_CERTIFICATE_MAX 16384u
#define PEER_PROOF_SIGNATURE_MAX 1024u

/* The code of the Error that carries a challenge: a proof of role is needed
 * (none was sent on this connection, or its nonce was unknown, used, or
 * expired).  Distinct from every refusal, which is -EPERM. */
#define PEER_PROOF_REQUIRED (-EKEYEXPIRED)

/* Issued nonces: how long one may be answered, and how many are kept (the
 * oldest is forgotten first, so a flood of challenges costs bounded memory
 * and only makes slow peers ask again). */
#define PEER_NONCE_TTL_MS 30000u
#define PEER_NONCES_MAX 1024u

/* ------------------------------------------------------------ signer */

typedef struct PeerSigner PeerSigner;

/* Loads a certificate (PEM) and its private key (PEM, unencrypted) and
 * checks that they belong together.  On failure returns a negative errno
 * and says which file and why in error. */
int peer_signer_new(const char *cert_file, const char *key_file, PeerSigner **ret, char *error, size_t error_size);
PeerSigner *peer_signer_free(PeerSigner *s);

/* Fills proof (initialised by the caller) for nonce.  Its certificate
 * points into s, its signature into sig; both stay valid while s and sig
 * do.  Returns 0, -EINVAL for a nonce of the wrong size, -EIO if signing
 * failed. */
int peer_signer_sign(PeerSigner *s, const uint8_t *nonce, size_t nonce_size, Spark__PeerProof *proof,
                     uint8_t sig[static PEER_PROOF_SIGNATURE_MAX]);

DEFINE_TRIVIAL_CLEANUP_FUNC(PeerSigner *, peer_signer_free);

/* ------------------------------------------------------------ verifier */

typedef struct PeerVerifier PeerVerifier;

int peer_verifier_new(const char *ca_file, PeerVerifier **ret, char *error, size_t error_size);
PeerVerifier *peer_verifier_free(PeerVerifier *v);

/* Checks proof's certificate and signature (the nonce's freshness is
 * peer_nonces_consume()'s).  Returns 0 and the peer's role and subject, or:
 *   -EMSGSIZE      a field is empty or too large, or the nonce's size is wrong
 *   -EBADMSG       the certificate is not one PEM certificate
 *   -EKEYREJECTED  not signed by the CA, not valid now, a CA itself, or
 *                  the signature does not verify with its key
 *   -EPERM         its subject has no OU, more than one, or an unknown role
 * with the reason in error. */
int peer_verifier_check(PeerVerifier *v, const Spark__PeerProof *proof, PeerIdentity *ret, char *error,
                        size_t error_size);

DEFINE_TRIVIAL_CLEANUP_FUNC(PeerVerifier *, peer_verifier_free);

/* ------------------------------------------------------------ nonces */

typedef struct PeerNonce {
        uint8_t nonce[PEER_PROOF_NONCE_SIZE];
        uint32_t pipe_id;
        uint64_t expires_ms;
        bool live;
} PeerNonce;

typedef struct PeerNonces {
        PeerNonce slots[PEER_NONCES_MAX];
        unsigned next;
} PeerNonces;

/* A fresh random nonce for the connection pipe_id, valid until
 * now_ms + PEER_NONCE_TTL_MS.  Returns 0 or -EIO (no randomness). */
int peer_nonces_issue(PeerNonces *n, uint32_t pipe_id, uint64_t now_ms, uint8_t ret[static PEER_PROOF_NONCE_SIZE]);

/* Uses up nonce if it was issued to pipe_id, is unused and has not expired:
 * returns 0; else -ESTALE and nothing changes. */
int peer_nonces_consume(PeerNonces *n, const uint8_t *nonce, size_t size, uint32_t pipe_id, uint64_t now_ms);
