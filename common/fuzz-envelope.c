/* libFuzzer target: the envelope decoder (codec.h) on arbitrary bytes.
 *
 * Oracles: decoding never crashes and fails only with the documented codes;
 * what decodes re-encodes, decodes again to the same body type, and
 * encodes again to the same bytes (a round trip is stable); a limit one
 * byte below the input's size is -EMSGSIZE. */
#include "fuzz-messages.h"
#include "fuzz-util.h"

static void write_seeds(const char *dir) {
        const FuzzIds ids = FUZZ_SEED_IDS("tcp://127.0.0.1:7077");
        int bodies[128];
        size_t n = fuzz_envelope_bodies(bodies, ELEMENTSOF(bodies));

        for (size_t i = 0; i < n; i++) {
                _cleanup_envelope_ Envelope *env = fuzz_envelope_new(bodies[i], &ids);
                char name[128];

                snprintf(name, sizeof(name), "%02d-%s", bodies[i], envelope_body_name(env));
                fuzz_write_seed(dir, name, &env, 1);
        }
        /* a version this build does not speak, and an unknown body number */
        fuzz_write_seed_raw(dir, "wrong-version", "\x08\x02\x52\x00", 4);
        fuzz_write_seed_raw(dir, "unknown-body", "\x08\x01\xa2\x06\x00", 5);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc, (void) argv;
        fuzz_write_seeds_if_asked(write_seeds);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_envelope_ Envelope *env = NULL, *env2 = NULL;
        _cleanup_free_ void *buf = NULL, *buf2 = NULL;
        size_t len, len2;
        int r;

        r = envelope_decode(data, size, SPARK_MAX_MESSAGE_BYTES, &env);
        if (r < 0) {
                FUZZ_ASSERT(r == -EBADMSG || r == -EPROTONOSUPPORT || r == -ENOMSG);
                return 0;
        }
        FUZZ_ASSERT(env->version == SPARK_PROTOCOL_VERSION);
        FUZZ_ASSERT(env->body_case != SPARK__ENVELOPE__BODY__NOT_SET);
        FUZZ_ASSERT(strcmp(envelope_body_name(env), "unknown") != 0);
        FUZZ_ASSERT(protobuf_c_message_check(&env->base));

        if (size > 0) {
                Envelope *small = NULL;
                FUZZ_ASSERT(envelope_decode(data, size, size - 1, &small) == -EMSGSIZE);
                FUZZ_ASSERT(!small);
        }

        r = envelope_encode(env, &buf, &len);
        FUZZ_ASSERT(r == 0);
        r = envelope_decode(buf, len, SPARK_MAX_MESSAGE_BYTES, &env2);
        if (r != 0)
                fuzz_fail("a re-encoded envelope does not decode: %s", strerror(-r));
        FUZZ_ASSERT(env2->body_case == env->body_case);
        FUZZ_ASSERT(env2->epoch == env->epoch && env2->seq == env->seq);

        r = envelope_encode(env2, &buf2, &len2);
        FUZZ_ASSERT(r == 0);
        if (len2 != len || memcmp(buf, buf2, len) != 0)
                fuzz_fail("round trip not stable: %zu bytes, then %zu bytes", len, len2);
        return 0;
}
