/* SHA-256 against the FIPS 180-2 / NIST example vectors, the padding
 * boundaries (55, 56, 63, 64, … bytes), and feeding the same data in pieces
 * of every size. */
#include <check.h>

#include "check-run.h"
#include "macro.h"
#include "sha256.h"

static const char *hex_of(const void *data, size_t len, char hex[static SHA256_HEX_SIZE]) {
        return sha256_hex(data, len, hex);
}

START_TEST(test_fips_vectors) {
        char hex[SHA256_HEX_SIZE];

        ck_assert_str_eq(hex_of("", 0, hex), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        ck_assert_str_eq(hex_of("abc", 3, hex), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        ck_assert_str_eq(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex),
                         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        ck_assert_str_eq(hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
                                "lmnopqrsmnopqrstnopqrstu",
                                112, hex),
                         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
        ck_assert_str_eq(hex_of("The quick brown fox jumps over the lazy dog", 43, hex),
                         "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592");
}
END_TEST

START_TEST(test_million_a) {
        char block[1000], hex[SHA256_HEX_SIZE];
        uint8_t digest[SHA256_DIGEST_SIZE];
        Sha256 s;

        memset(block, 'a', sizeof(block));
        sha256_init(&s);
        for (unsigned i = 0; i < 1000; i++)
                sha256_update(&s, block, sizeof(block));
        sha256_final(&s, digest);
        ck_assert_str_eq(sha256_to_hex(digest, hex), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(test_padding_boundaries) {
        static const struct {
                size_t len;
                const char *hex;
        } v[] = {
                { 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072" },
                { 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e" },
                { 63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2" },
                { 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c" },
                { 65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9" },
                { 119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c" },
                { 120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98" },
        };
        char buf[128], hex[SHA256_HEX_SIZE];

        memset(buf, 'x', sizeof(buf));
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                ck_assert_str_eq(hex_of(buf, v[i].len, hex), v[i].hex);
}
END_TEST

START_TEST(test_incremental_matches_one_shot) {
        uint8_t data[1000], one[SHA256_DIGEST_SIZE], pieces[SHA256_DIGEST_SIZE];

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t) (i * 131 + 7);
        sha256(data, sizeof(data), one);

        for (size_t step = 1; step <= 130; step++) {
                Sha256 s;

                sha256_init(&s);
                for (size_t off = 0; off < sizeof(data); off += step)
                        sha256_update(&s, data + off, MIN(step, sizeof(data) - off));
                sha256_final(&s, pieces);
                ck_assert_mem_eq(one, pieces, SHA256_DIGEST_SIZE);
        }
}
END_TEST

START_TEST(test_hex_is_valid) {
        ck_assert(sha256_hex_is_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        ck_assert(!sha256_hex_is_valid(NULL));
        ck_assert(!sha256_hex_is_valid(""));
        ck_assert(!sha256_hex_is_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85"));
        ck_assert(!sha256_hex_is_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8555"));
        ck_assert(!sha256_hex_is_valid("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
        ck_assert(!sha256_hex_is_valid("../0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
}
END_TEST

/* RFC 4231 §4, test cases 1-4, 6 and 7 (5 is a truncated MAC). */
START_TEST(test_hmac_rfc4231) {
        static const char data6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
        static const char data7[] = "This is a test using a larger than block-size key and a larger than block-size "
                                    "data. The key needs to be hashed before being used by the HMAC algorithm.";
        uint8_t key[131], data[50], mac[SHA256_DIGEST_SIZE];
        char hex[SHA256_HEX_SIZE];

        memset(key, 0x0b, 20);
        hmac_sha256(key, 20, "Hi There", 8, mac);
        ck_assert_str_eq(sha256_to_hex(mac, hex), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

        hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac);
        ck_assert_str_eq(sha256_to_hex(mac, hex), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

        memset(key, 0xaa, 20);
        memset(data, 0xdd, 50);
        hmac_sha256(key, 20, data, 50, mac);
        ck_assert_str_eq(sha256_to_hex(mac, hex), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");

        for (unsigned i = 0; i < 25; i++)
                key[i] = (uint8_t) (i + 1);
        memset(data, 0xcd, 50);
        hmac_sha256(key, 25, data, 50, mac);
        ck_assert_str_eq(sha256_to_hex(mac, hex), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");

        memset(key, 0xaa, 131);
        hmac_sha256(key, 131, data6, strlen(data6), mac);
        ck_assert_str_eq(sha256_to_hex(mac, hex), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
        hmac_sha256(key, 131, data7, strlen(data7), mac);
        ck_assert_str_eq(sha256_to_hex(mac, hex), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}
END_TEST

/* The message in pieces gives the MAC of the whole. */
START_TEST(test_hmac_pieces) {
        uint8_t a[SHA256_DIGEST_SIZE], b[SHA256_DIGEST_SIZE];

        hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, a);
        hmac_sha256_v("Jefe", 4, (const void *const[]) { "what do ", "", "ya want for nothing?" },
                      (const size_t[]) { 8, 0, 20 }, 3, b);
        ck_assert_mem_eq(a, b, sizeof(a));
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_fips_vectors,
                test_million_a,
                test_padding_boundaries,
                test_incremental_matches_one_shot,
                test_hex_is_valid,
                test_hmac_rfc4231,
                test_hmac_pieces,
                NULL,
        };

        return check_run_tests("sha256", NULL, tests);
}
