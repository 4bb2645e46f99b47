/* See peer-proof.h.  mbedtls 2.28 (Debian's, the one nng links). */
#include <stdarg.h>
#include <sys/random.h>

#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/sha256.h>
#include <mbedtls/x509_crt.h>

#include "nng-tls.h"
#include "peer-proof.h"

_Static_assert(PEER_PROOF_SIGNATURE_MAX >= MBEDTLS_PK_SIGNATURE_MAX_SIZE, "signature buffer too small");

struct PeerSigner {
        char *cert_pem;   /* NUL-terminated; sent with its NUL (mbedtls wants one) */
        size_t cert_size;
        mbedtls_pk_context key;
};

struct PeerVerifier {
        mbedtls_x509_crt ca;
};

static int fill_random(void *userdata, unsigned char *buf, size_t len) {
        (void) userdata;
        while (len > 0) {
                ssize_t k = getrandom(buf, len, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return MBEDTLS_ERR_PK_ALLOC_FAILED; /* any error: signing fails */
                }
                buf += k;
                len -= (size_t) k;
        }
        return 0;
}

/* SHA-256 of the domain string (with its NUL) and the nonce. */
static int proof_digest(const uint8_t *nonce, size_t nonce_size, uint8_t ret[static 32]) {
        uint8_t msg[sizeof(PEER_PROOF_DOMAIN) + PEER_PROOF_NONCE_SIZE];

        if (nonce_size != PEER_PROOF_NONCE_SIZE)
                return -EINVAL;
        memcpy(msg, PEER_PROOF_DOMAIN, sizeof(PEER_PROOF_DOMAIN));
        memcpy(msg + sizeof(PEER_PROOF_DOMAIN), nonce, nonce_size);
        return mbedtls_sha256_ret(msg, sizeof(msg), ret, 0) == 0 ? 0 : -EIO;
}

static void set_error(char *error, size_t size, const char *fmt, ...) _printf_(3, 4);
static void set_error(char *error, size_t size, const char *fmt, ...) {
        va_list ap;

        if (!error || size == 0)
                return;
        va_start(ap, fmt);
        vsnprintf(error, size, fmt, ap);
        va_end(ap);
}

PeerSigner *peer_signer_free(PeerSigner *s) {
        if (!s)
                return NULL;
        mbedtls_pk_free(&s->key);
        free(s->cert_pem);
        free(s);
        return NULL;
}

int peer_signer_new(const char *cert_file, const char *key_file, PeerSigner **ret, char *error, size_t error_size) {
        _cleanup_(peer_signer_freep) PeerSigner *s = NULL;
        mbedtls_x509_crt crt;
        int k;

        if (isempty(cert_file) || isempty(key_file) || !ret)
                return -EINVAL;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        mbedtls_pk_init(&s->key);

        k = nng_tls_read_pem(cert_file, &s->cert_pem);
        if (k < 0) {
                set_error(error, error_size, "certificate %s: %s", cert_file, strerror(-k));
                return k;
        }
        s->cert_size = strlen(s->cert_pem) + 1;
        if (s->cert_size > PEER_PROOF_CERTIFICATE_MAX) {
                set_error(error, error_size, "certificate %s: larger than %u bytes", cert_file,
                          PEER_PROOF_CERTIFICATE_MAX);
                return -EFBIG;
        }

        if (mbedtls_pk_parse_keyfile(&s->key, key_file, NULL) != 0) {
                set_error(error, error_size, "private key %s: cannot be read or parsed (PEM, unencrypted)",
                          key_file);
                return -EBADMSG;
        }

        mbedtls_x509_crt_init(&crt);
        k = 0;
        if (mbedtls_x509_crt_parse(&crt, (const unsigned char *) s->cert_pem, s->cert_size) != 0) {
                set_error(error, error_size, "certificate %s: not a PEM certificate", cert_file);
                k = -EBADMSG;
        } else if (mbedtls_pk_check_pair(&crt.pk, &s->key) != 0) {
                set_error(error, error_size, "private key %s does not belong to the certificate %s", key_file,
                          cert_file);
                k = -EKEYREJECTED;
        }
        mbedtls_x509_crt_free(&crt);
        if (k < 0)
                return k;

        *ret = TAKE_PTR(s);
        return 0;
}

int peer_signer_sign(PeerSigner *s, const uint8_t *nonce, size_t nonce_size, Spark__PeerProof *proof,
                     uint8_t sig[static PEER_PROOF_SIGNATURE_MAX]) {
        uint8_t digest[32];
        size_t sig_size = 0;
        int k;

        if (!s || !nonce || !proof)
                return -EINVAL;
        k = proof_digest(nonce, nonce_size, digest);
        if (k < 0)
                return k;
        if (mbedtls_pk_sign(&s->key, MBEDTLS_MD_SHA256, digest, sizeof(digest), sig, &sig_size, fill_random,
                            NULL) != 0)
                return -EIO;

        proof->certificate = (ProtobufCBinaryData) { s->cert_size, (uint8_t *) s->cert_pem };
        proof->nonce = (ProtobufCBinaryData) { nonce_size, (uint8_t *) nonce };
        proof->signature = (ProtobufCBinaryData) { sig_size, sig };
        return 0;
}

PeerVerifier *peer_verifier_free(PeerVerifier *v) {
        if (!v)
                return NULL;
        mbedtls_x509_crt_free(&v->ca);
        free(v);
        return NULL;
}

int peer_verifier_new(const char *ca_file, PeerVerifier **ret, char *error, size_t error_size) {
        _cleanup_free_ char *pem = NULL;
        PeerVerifier *v;
        int k;

        if (isempty(ca_file) || !ret)
                return -EINVAL;
        k = nng_tls_read_pem(ca_file, &pem);
        if (k < 0) {
                set_error(error, error_size, "CA certificate %s: %s", ca_file, strerror(-k));
                return k;
        }
        v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        mbedtls_x509_crt_init(&v->ca);
        if (mbedtls_x509_crt_parse(&v->ca, (const unsigned char *) pem, strlen(pem) + 1) != 0) {
                set_error(error, error_size, "CA certificate %s: not a PEM certificate", ca_file);
                peer_verifier_free(v);
                return -EBADMSG;
        }
        *ret = v;
        return 0;
}

/* The single OU of a subject, as a role. */
static int subject_role(const mbedtls_x509_name *name, PeerRole *ret, char *error, size_t error_size) {
        char value[64];
        unsigned n = 0;
        PeerRole role = _PEER_ROLE_INVALID;

        for (; name; name = name->next) {
                if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_ORG_UNIT, &name->oid) != 0)
                        continue;
                if (++n > 1)
                        break;
                if (name->val.len >= sizeof(value) || memchr(name->val.p, 0, name->val.len)) {
                        role = _PEER_ROLE_INVALID;
                        continue;
                }
                memcpy(value, name->val.p, name->val.len);
                value[name->val.len] = '\0';
                role = peer_role_from_string(value);
        }
        if (n == 0) {
                set_error(error, error_size, "the certificate carries no role (no OU in its subject)");
                return -EPERM;
        }
        if (n > 1) {
                set_error(error, error_size, "the certificate carries more than one OU; exactly one role is allowed");
                return -EPERM;
        }
        if (role < 0) {
                set_error(error, error_size,
                          "the certificate's OU is not a role (master, worker, driver, client or admin)");
                return -EPERM;
        }
        *ret = role;
        return 0;
}

static const char *verify_flags_reason(uint32_t flags) {
        if (flags & MBEDTLS_X509_BADCERT_EXPIRED)
                return "it has expired";
        if (flags & MBEDTLS_X509_BADCERT_FUTURE)
                return "it is not valid yet";
        if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
                return "it is not signed by the cluster CA";
        return "it does not verify against the cluster CA";
}

int peer_verifier_check(PeerVerifier *v, const Spark__PeerProof *p, PeerIdentity *ret, char *error,
                        size_t error_size) {
        _cleanup_free_ char *pem = NULL;
        mbedtls_x509_crt crt;
        uint8_t digest[32];
        uint32_t flags = 0;
        PeerRole role;
        int k;

        if (!v || !p || !ret)
                return -EINVAL;
        if (p->certificate.len == 0 || p->certificate.len > PEER_PROOF_CERTIFICATE_MAX ||
            p->signature.len == 0 || p->signature.len > PEER_PROOF_SIGNATURE_MAX ||
            p->nonce.len != PEER_PROOF_NONCE_SIZE) {
                set_error(error, error_size, "malformed proof of role (a field is empty or of the wrong size)");
                return -EMSGSIZE;
        }

        /* mbedtls parses PEM only from a NUL-terminated buffer. */
        pem = malloc(p->certificate.len + 1);
        if (!pem)
                return -ENOMEM;
        memcpy(pem, p->certificate.data, p->certificate.len);
        pem[p->certificate.len] = '\0';

        mbedtls_x509_crt_init(&crt);
        if (!strstr(pem, "-----BEGIN CERTIFICATE-----") ||
            mbedtls_x509_crt_parse(&crt, (const unsigned char *) pem, strlen(pem) + 1) != 0) {
                set_error(error, error_size, "the proof's certificate is not a PEM certificate");
                k = -EBADMSG;
                goto out;
        }
        if (crt.next) {
                set_error(error, error_size, "the proof carries a chain; send the certificate alone");
                k = -EBADMSG;
                goto out;
        }
        if (mbedtls_x509_crt_verify(&crt, &v->ca, NULL, NULL, &flags, NULL, NULL) != 0) {
                set_error(error, error_size, "the proof's certificate is refused: %s", verify_flags_reason(flags));
                k = -EKEYREJECTED;
                goto out;
        }
        if (crt.ca_istrue) {
                set_error(error, error_size, "the proof's certificate is a CA, not a member's");
                k = -EKEYREJECTED;
                goto out;
        }
        k = subject_role(&crt.subject, &role, error, error_size);
        if (k < 0)
                goto out;

        k = proof_digest(p->nonce.data, p->nonce.len, digest);
        if (k < 0)
                goto out;
        if (mbedtls_pk_verify(&crt.pk, MBEDTLS_MD_SHA256, digest, sizeof(digest), p->signature.data,
                              p->signature.len) != 0) {
                set_error(error, error_size, "the proof's signature does not verify with its certificate's key");
                k = -EKEYREJECTED;
                goto out;
        }

        *ret = (PeerIdentity) { .tls = true, .role = role };
        if (mbedtls_x509_dn_gets(ret->subject, sizeof(ret->subject), &crt.subject) < 0)
                snprintf(ret->subject, sizeof(ret->subject), "(subject too long)");
        k = 0;
out:
        mbedtls_x509_crt_free(&crt);
        return k;
}

int peer_nonces_issue(PeerNonces *n, uint32_t pipe_id, uint64_t now_ms, uint8_t ret[static PEER_PROOF_NONCE_SIZE]) {
        PeerNonce *slot;

        if (!n || !ret)
                return -EINVAL;
        if (fill_random(NULL, ret, PEER_PROOF_NONCE_SIZE) != 0)
                return -EIO;
        /* A ring: the slot taken is the oldest one. */
        slot = &n->slots[n->next];
        n->next = (n->next + 1) % PEER_NONCES_MAX;
        memcpy(slot->nonce, ret, PEER_PROOF_NONCE_SIZE);
        slot->pipe_id = pipe_id;
        slot->expires_ms = now_ms + PEER_NONCE_TTL_MS;
        slot->live = true;
        return 0;
}

int peer_nonces_consume(PeerNonces *n, const uint8_t *nonce, size_t size, uint32_t pipe_id, uint64_t now_ms) {
        if (!n || !nonce || size != PEER_PROOF_NONCE_SIZE)
                return -ESTALE;
        for (unsigned i = 0; i < PEER_NONCES_MAX; i++) {
                PeerNonce *slot = &n->slots[i];

                if (!slot->live || memcmp(slot->nonce, nonce, PEER_PROOF_NONCE_SIZE) != 0)
                        continue;
                if (slot->pipe_id != pipe_id || now_ms >= slot->expires_ms)
                        return -ESTALE;
                slot->live = false;
                return 0;
        }
        return -ESTALE;
}
