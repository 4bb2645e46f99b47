/* The proof of a peer's role (peer-proof.h) against the certificates of
 * tests/data/peer-proof: a good proof gives the role and subject; a
 * certificate from another CA, expired, without an OU, with two, with an
 * unknown role, or a CA's own is refused; so is a signature over another
 * nonce or by another key, garbage PEM, a chain, and oversized fields.
 * The nonce set accepts a nonce once, on its connection, before it
 * expires, and forgets the oldest first. */
#include <check.h>

#include "check-run.h"
#include "macro.h"
#include "peer-proof.h"

#define DATA "tests/data/peer-proof/"

static const uint8_t nonce[PEER_PROOF_NONCE_SIZE] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

static PeerSigner *signer_of(const char *name) {
        char cert[256], key[256], error[256] = "";
        PeerSigner *s = NULL;

        snprintf(cert, sizeof(cert), DATA "%s.pem", name);
        snprintf(key, sizeof(key), DATA "%s.key", name);
        ck_assert_msg(peer_signer_new(cert, key, &s, error, sizeof(error)) == 0, "%s: %s", name, error);
        return s;
}

static PeerVerifier *verifier(void) {
        char error[256] = "";
        PeerVerifier *v = NULL;

        ck_assert_msg(peer_verifier_new(DATA "ca.pem", &v, error, sizeof(error)) == 0, "%s", error);
        return v;
}

/* The verdict on a proof by name's certificate and key. */
static int check_of(const char *name, PeerIdentity *id, char *error, size_t size) {
        _cleanup_(peer_verifier_freep) PeerVerifier *v = verifier();
        _cleanup_(peer_signer_freep) PeerSigner *s = signer_of(name);
        Spark__PeerProof p = SPARK__PEER_PROOF__INIT;
        uint8_t sig[PEER_PROOF_SIGNATURE_MAX];

        ck_assert_int_eq(peer_signer_sign(s, nonce, sizeof(nonce), &p, sig), 0);
        return peer_verifier_check(v, &p, id, error, size);
}

START_TEST(test_good_proof) {
        char error[256] = "";
        PeerIdentity id;

        ck_assert_int_eq(check_of("client", &id, error, sizeof(error)), 0);
        ck_assert(id.tls);
        ck_assert_int_eq(id.role, PEER_ROLE_CLIENT);
        ck_assert_str_eq(id.subject, "O=spark-deploy, OU=client, CN=alice");
        ck_assert_int_eq(check_of("admin", &id, error, sizeof(error)), 0);
        ck_assert_int_eq(id.role, PEER_ROLE_ADMIN);
}
END_TEST

START_TEST(test_refused_certificates) {
        static const struct {
                const char *name;
                int error;
                const char *reason;
        } cases[] = {
                { "other-ca-client", -EKEYREJECTED, "not signed by the cluster CA" },
                { "expired", -EKEYREJECTED, "expired" },
                { "sub-ca", -EKEYREJECTED, "is a CA" },
                { "no-ou", -EPERM, "no role" },
                { "two-ou", -EPERM, "more than one OU" },
                { "bad-role", -EPERM, "not a role" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char error[256] = "";
                PeerIdentity id;

                ck_assert_msg(check_of(cases[i].name, &id, error, sizeof(error)) == cases[i].error, "%s: %s",
                              cases[i].name, error);
                ck_assert_msg(strstr(error, cases[i].reason), "%s: %s", cases[i].name, error);
        }
}
END_TEST

START_TEST(test_bad_signatures) {
        _cleanup_(peer_verifier_freep) PeerVerifier *v = verifier();
        _cleanup_(peer_signer_freep) PeerSigner *client = signer_of("client"), *admin = signer_of("admin");
        Spark__PeerProof p = SPARK__PEER_PROOF__INIT, q = SPARK__PEER_PROOF__INIT;
        uint8_t sig[PEER_PROOF_SIGNATURE_MAX], sig2[PEER_PROOF_SIGNATURE_MAX], other[PEER_PROOF_NONCE_SIZE];
        char error[256] = "";
        PeerIdentity id;

        /* a signature over another nonce */
        ck_assert_int_eq(peer_signer_sign(client, nonce, sizeof(nonce), &p, sig), 0);
        memcpy(other, nonce, sizeof(other));
        other[0] ^= 1;
        p.nonce.data = other;
        ck_assert_int_eq(peer_verifier_check(v, &p, &id, error, sizeof(error)), -EKEYREJECTED);
        ck_assert_ptr_nonnull(strstr(error, "signature"));

        /* the admin's certificate with a signature by the client's key */
        ck_assert_int_eq(peer_signer_sign(client, nonce, sizeof(nonce), &p, sig), 0);
        ck_assert_int_eq(peer_signer_sign(admin, nonce, sizeof(nonce), &q, sig2), 0);
        q.signature = p.signature;
        ck_assert_int_eq(peer_verifier_check(v, &q, &id, error, sizeof(error)), -EKEYREJECTED);

        /* a flipped bit in the signature */
        ck_assert_int_eq(peer_signer_sign(client, nonce, sizeof(nonce), &p, sig), 0);
        sig[p.signature.len / 2] ^= 0x10;
        ck_assert_int_eq(peer_verifier_check(v, &p, &id, error, sizeof(error)), -EKEYREJECTED);
}
END_TEST

START_TEST(test_key_must_match) {
        char error[256] = "";
        PeerSigner *s = NULL;

        ck_assert_int_eq(peer_signer_new(DATA "client.pem", DATA "other.key", &s, error, sizeof(error)),
                         -EKEYREJECTED);
        ck_assert_ptr_nonnull(strstr(error, "does not belong"));
        ck_assert_int_eq(peer_signer_new(DATA "client.pem", DATA "missing.key", &s, error, sizeof(error)), -EBADMSG);
        ck_assert_int_eq(peer_signer_new(DATA "missing.pem", DATA "client.key", &s, error, sizeof(error)), -ENOENT);
        ck_assert_int_eq(peer_signer_new(DATA "README", DATA "client.key", &s, error, sizeof(error)), -EBADMSG);
        ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_garbage_and_sizes) {
        _cleanup_(peer_verifier_freep) PeerVerifier *v = verifier();
        _cleanup_(peer_signer_freep) PeerSigner *client = signer_of("client"), *admin = signer_of("admin");
        Spark__PeerProof p = SPARK__PEER_PROOF__INIT, q = SPARK__PEER_PROOF__INIT;
        uint8_t sig[PEER_PROOF_SIGNATURE_MAX], sig2[PEER_PROOF_SIGNATURE_MAX];
        _cleanup_free_ uint8_t *big = NULL, *chain = NULL;
        char garbage[] = "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n";
        char error[256] = "";
        PeerIdentity id;

        ck_assert_int_eq(peer_signer_sign(client, nonce, sizeof(nonce), &p, sig), 0);
        ck_assert_int_eq(peer_signer_sign(admin, nonce, sizeof(nonce), &q, sig2), 0);

        p.certificate = (ProtobufCBinaryData) { sizeof(garbage), (uint8_t *) garbage };
        ck_assert_int_eq(peer_verifier_check(v, &p, &id, error, sizeof(error)), -EBADMSG);
        p.certificate = (ProtobufCBinaryData) { 5, (uint8_t *) "\0\0\0\0\0" };
        ck_assert_int_eq(peer_verifier_check(v, &p, &id, error, sizeof(error)), -EBADMSG);

        /* a chain: the client's certificate followed by the admin's */
        ck_assert_int_eq(peer_signer_sign(client, nonce, sizeof(nonce), &p, sig), 0);
        chain = malloc(p.certificate.len + q.certificate.len);
        ck_assert_ptr_nonnull(chain);
        memcpy(chain, p.certificate.data, p.certificate.len - 1); /* without the NUL */
        memcpy(chain + p.certificate.len - 1, q.certificate.data, q.certificate.len);
        p.certificate = (ProtobufCBinaryData) { p.certificate.len - 1 + q.certificate.len, chain };
        ck_assert_int_eq(peer_verifier_check(v, &p, &id, error, sizeof(error)), -EBADMSG);

        ck_assert_int_eq(peer_signer_sign(client, nonce, sizeof(nonce), &p, sig), 0);
        big = calloc(1, PEER_PROOF_CERTIFICATE_MAX + 1);
        ck_assert_ptr_nonnull(big);
        q = p;
        q.certificate = (ProtobufCBinaryData) { PEER_PROOF_CERTIFICATE_MAX + 1, big };
        ck_assert_int_eq(peer_verifier_check(v, &q, &id, error, sizeof(error)), -EMSGSIZE);
        q = p;
        q.certificate.len = 0;
        ck_assert_int_eq(peer_verifier_check(v, &q, &id, error, sizeof(error)), -EMSGSIZE);
        q = p;
        q.signature = (ProtobufCBinaryData) { PEER_PROOF_SIGNATURE_MAX + 1, big };
        ck_assert_int_eq(peer_verifier_check(v, &q, &id, error, sizeof(error)), -EMSGSIZE);
        q = p;
        q.signature.len = 0;
        ck_assert_int_eq(peer_verifier_check(v, &q, &id, error, sizeof(error)), -EMSGSIZE);
        q = p;
        q.nonce.len = PEER_PROOF_NONCE_SIZE - 1;
        ck_assert_int_eq(peer_verifier_check(v, &q, &id, error, sizeof(error)), -EMSGSIZE);
        q = p;
        q.nonce.len = 0;
        ck_assert_int_eq(peer_verifier_check(v, &q, &id, error, sizeof(error)), -EMSGSIZE);

        /* and the untouched proof still holds */
        ck_assert_int_eq(peer_verifier_check(v, &p, &id, error, sizeof(error)), 0);
        ck_assert_int_eq(peer_signer_sign(client, nonce, 16, &p, sig), -EINVAL);
}
END_TEST

START_TEST(test_nonces) {
        _cleanup_free_ PeerNonces *n = calloc(1, sizeof(PeerNonces));
        uint8_t a[PEER_PROOF_NONCE_SIZE], b[PEER_PROOF_NONCE_SIZE], first[PEER_PROOF_NONCE_SIZE];

        ck_assert_ptr_nonnull(n);
        ck_assert_int_eq(peer_nonces_issue(n, 7, 1000, a), 0);
        ck_assert_int_eq(peer_nonces_issue(n, 7, 1000, b), 0);
        ck_assert(memcmp(a, b, sizeof(a)) != 0);

        /* unknown, wrong size, wrong connection */
        ck_assert_int_eq(peer_nonces_consume(n, nonce, sizeof(nonce), 7, 1000), -ESTALE);
        ck_assert_int_eq(peer_nonces_consume(n, a, sizeof(a) - 1, 7, 1000), -ESTALE);
        ck_assert_int_eq(peer_nonces_consume(n, a, sizeof(a), 8, 1000), -ESTALE);
        /* once only */
        ck_assert_int_eq(peer_nonces_consume(n, a, sizeof(a), 7, 1000), 0);
        ck_assert_int_eq(peer_nonces_consume(n, a, sizeof(a), 7, 1000), -ESTALE);
        /* expired */
        ck_assert_int_eq(peer_nonces_consume(n, b, sizeof(b), 7, 1000 + PEER_NONCE_TTL_MS), -ESTALE);
        ck_assert_int_eq(peer_nonces_issue(n, 7, 1000, b), 0);
        ck_assert_int_eq(peer_nonces_consume(n, b, sizeof(b), 7, 1000 + PEER_NONCE_TTL_MS - 1), 0);

        /* the oldest is forgotten first */
        ck_assert_int_eq(peer_nonces_issue(n, 9, 2000, first), 0);
        for (unsigned i = 0; i < PEER_NONCES_MAX - 1; i++)
                ck_assert_int_eq(peer_nonces_issue(n, 9, 2000, a), 0);
        ck_assert_int_eq(peer_nonces_consume(n, first, sizeof(first), 9, 2000), 0);
        ck_assert_int_eq(peer_nonces_issue(n, 9, 2000, first), 0);
        for (unsigned i = 0; i < PEER_NONCES_MAX; i++)
                ck_assert_int_eq(peer_nonces_issue(n, 9, 2000, b), 0);
        ck_assert_int_eq(peer_nonces_consume(n, first, sizeof(first), 9, 2000), -ESTALE);
        ck_assert_int_eq(peer_nonces_consume(n, b, sizeof(b), 9, 2000), 0);
}
END_TEST

START_TEST(test_role_names) {
        char buf[64];

        ck_assert_int_eq(peer_role_from_string("admin"), PEER_ROLE_ADMIN);
        ck_assert_int_eq(peer_role_from_string("Admin"), _PEER_ROLE_INVALID);
        ck_assert_int_eq(peer_role_from_string(""), _PEER_ROLE_INVALID);
        ck_assert_ptr_null(peer_role_to_string(_PEER_ROLE_MAX));
        ck_assert_str_eq(peer_roles_to_string(PEER_ROLE_BIT(PEER_ROLE_ADMIN), buf, sizeof(buf)), "admin");
        ck_assert_str_eq(peer_roles_to_string(PEER_ROLE_BIT(PEER_ROLE_CLIENT) | PEER_ROLE_BIT(PEER_ROLE_ADMIN), buf,
                                              sizeof(buf)),
                         "client or admin");
        ck_assert_str_eq(peer_roles_to_string(PEER_ROLES_ANY, buf, sizeof(buf)),
                         "master, worker, driver, client or admin");
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_good_proof,
                test_refused_certificates,
                test_bad_signatures,
                test_key_must_match,
                test_garbage_and_sizes,
                test_nonces,
                test_role_names,
                NULL,
        };

        return check_run_tests("peer-proof", NULL, tests);
}
