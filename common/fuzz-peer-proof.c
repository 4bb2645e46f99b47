/* libFuzzer target: the proof of a peer's role (peer-proof.h) as a server
 * receives it — a PeerProof decoded from arbitrary bytes, checked against
 * the test CA of tests/data/peer-proof (read from the source root).
 *
 * Oracles: the check never crashes and fails only with its documented
 * codes; a success names a known role and a subject (only the seeds, made
 * with the test client's key, can get one: the fuzzer cannot forge a
 * signature); the proof's nonce is never accepted by a nonce set that did
 * not issue it, and an issued nonce is accepted once. */
#include "fuzz-util.h"
#include "peer-proof.h"

#define DATA "tests/data/peer-proof/"

static PeerVerifier *verifier;

static void write_proof_seed(const char *dir, const char *name, const Spark__PeerProof *p) {
        size_t len = spark__peer_proof__get_packed_size(p);
        _cleanup_free_ uint8_t *buf = malloc(len + 1);

        FUZZ_ASSERT(buf);
        spark__peer_proof__pack(p, buf);
        fuzz_write_seed_raw(dir, name, buf, len);
}

static void write_seeds(const char *dir) {
        static const char *const names[] = { "client", "admin", "expired", "no-ou", "two-ou", "other-ca-client" };
        uint8_t nonce[PEER_PROOF_NONCE_SIZE] = { 42 };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_(peer_signer_freep) PeerSigner *s = NULL;
                Spark__PeerProof p = SPARK__PEER_PROOF__INIT;
                uint8_t sig[PEER_PROOF_SIGNATURE_MAX];
                char cert[128], key[128];

                snprintf(cert, sizeof(cert), DATA "%s.pem", names[i]);
                snprintf(key, sizeof(key), DATA "%s.key", names[i]);
                if (peer_signer_new(cert, key, &s, NULL, 0) < 0)
                        fuzz_fail("cannot load %s (run from the source root)", cert);
                FUZZ_ASSERT(peer_signer_sign(s, nonce, sizeof(nonce), &p, sig) == 0);
                write_proof_seed(dir, names[i], &p);
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        char error[256] = "";

        (void) argc, (void) argv;
        fuzz_write_seeds_if_asked(write_seeds);
        if (peer_verifier_new(DATA "ca.pem", &verifier, error, sizeof(error)) < 0)
                fuzz_fail("%s (run from the source root)", error);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static PeerNonces nonces;
        uint8_t issued[PEER_PROOF_NONCE_SIZE];
        Spark__PeerProof *p;
        char error[256] = "";
        PeerIdentity id;
        int r;

        if (size > 2 * PEER_PROOF_CERTIFICATE_MAX)
                return 0;
        p = spark__peer_proof__unpack(NULL, size, data);
        if (!p)
                return 0;

        r = peer_verifier_check(verifier, p, &id, error, sizeof(error));
        FUZZ_ASSERT(r == 0 || r == -EMSGSIZE || r == -EBADMSG || r == -EKEYREJECTED || r == -EPERM);
        if (r == 0) {
                FUZZ_ASSERT(peer_role_to_string(id.role));
                FUZZ_ASSERT(id.tls && id.subject[0]);
        } else
                FUZZ_ASSERT(error[0]);

        /* a nonce nobody issued to this connection is never accepted */
        memset(&nonces, 0, sizeof(nonces));
        FUZZ_ASSERT(peer_nonces_consume(&nonces, p->nonce.data, p->nonce.len, 1, 0) == -ESTALE);
        FUZZ_ASSERT(peer_nonces_issue(&nonces, 1, 0, issued) == 0);
        FUZZ_ASSERT(peer_nonces_consume(&nonces, p->nonce.data, p->nonce.len, 2, 0) == -ESTALE);
        FUZZ_ASSERT(peer_nonces_consume(&nonces, issued, sizeof(issued), 1, 0) == 0);
        FUZZ_ASSERT(peer_nonces_consume(&nonces, issued, sizeof(issued), 1, 0) == -ESTALE);

        spark__peer_proof__free_unpacked(p, NULL);
        return 0;
}
