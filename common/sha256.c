/* SHA-256 as specified in FIPS 180-4 §6.2, written for clarity: one block
 * function, a byte buffer for partial blocks, big-endian everywhere. */
#include <string.h>

#include "sha256.h"

static const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned n) {
        return (x >> n) | (x << (32 - n));
}

static inline uint32_t load_be32(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) (v >> 24);
        p[1] = (uint8_t) (v >> 16);
        p[2] = (uint8_t) (v >> 8);
        p[3] = (uint8_t) v;
}

static void sha256_block(uint32_t state[8], const uint8_t *block) {
        uint32_t w[64], a, b, c, d, e, f, g, h;

        for (unsigned i = 0; i < 16; i++)
                w[i] = load_be32(block + 4 * i);
        for (unsigned i = 16; i < 64; i++) {
                uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
                uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }

        a = state[0], b = state[1], c = state[2], d = state[3];
        e = state[4], f = state[5], g = state[6], h = state[7];
        for (unsigned i = 0; i < 64; i++) {
                uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
                uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
                h = g, g = f, f = e, e = d + t1;
                d = c, c = b, b = a, a = t1 + t2;
        }
        state[0] += a, state[1] += b, state[2] += c, state[3] += d;
        state[4] += e, state[5] += f, state[6] += g, state[7] += h;
}

void sha256_init(Sha256 *s) {
        static const uint32_t H0[8] = {
                0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
        };

        memcpy(s->state, H0, sizeof(H0));
        s->length = 0;
        s->fill = 0;
}

void sha256_update(Sha256 *s, const void *data, size_t len) {
        const uint8_t *p = data;

        s->length += len;
        if (s->fill > 0) {
                size_t n = SHA256_BLOCK_SIZE - s->fill;

                if (n > len)
                        n = len;
                memcpy(s->block + s->fill, p, n);
                s->fill += n;
                p += n;
                len -= n;
                if (s->fill < SHA256_BLOCK_SIZE)
                        return;
                sha256_block(s->state, s->block);
                s->fill = 0;
        }
        for (; len >= SHA256_BLOCK_SIZE; p += SHA256_BLOCK_SIZE, len -= SHA256_BLOCK_SIZE)
                sha256_block(s->state, p);
        if (len > 0) {
                memcpy(s->block, p, len);
                s->fill = len;
        }
}

void sha256_final(Sha256 *s, uint8_t digest[static SHA256_DIGEST_SIZE]) {
        uint64_t bits = s->length * 8;

        /* 0x80, zeros up to 56 mod 64, then the length in bits. */
        s->block[s->fill++] = 0x80;
        if (s->fill > SHA256_BLOCK_SIZE - 8) {
                memset(s->block + s->fill, 0, SHA256_BLOCK_SIZE - s->fill);
                sha256_block(s->state, s->block);
                s->fill = 0;
        }
        memset(s->block + s->fill, 0, SHA256_BLOCK_SIZE - 8 - s->fill);
        store_be32(s->block + 56, (uint32_t) (bits >> 32));
        store_be32(s->block + 60, (uint32_t) bits);
        sha256_block(s->state, s->block);

        for (unsigned i = 0; i < 8; i++)
                store_be32(digest + 4 * i, s->state[i]);
        memset(s, 0, sizeof(*s));
}

void sha256(const void *data, size_t len, uint8_t digest[static SHA256_DIGEST_SIZE]) {
        Sha256 s;

        sha256_init(&s);
        sha256_update(&s, data, len);
        sha256_final(&s, digest);
}

char *sha256_to_hex(const uint8_t digest[static SHA256_DIGEST_SIZE], char hex[static SHA256_HEX_SIZE]) {
        static const char digits[] = "0123456789abcdef";

        for (unsigned i = 0; i < SHA256_DIGEST_SIZE; i++) {
                hex[2 * i] = digits[digest[i] >> 4];
                hex[2 * i + 1] = digits[digest[i] & 0xf];
        }
        hex[2 * SHA256_DIGEST_SIZE] = '\0';
        return hex;
}

char *sha256_hex(const void *data, size_t len, char hex[static SHA256_HEX_SIZE]) {
        uint8_t digest[SHA256_DIGEST_SIZE];

        sha256(data, len, digest);
        return sha256_to_hex(digest, hex);
}

bool sha256_hex_is_valid(const char *s) {
        size_t n = 0;

        if (!s)
                return false;
        for (; s[n]; n++) {
                if (n >= 2 * SHA256_DIGEST_SIZE)
                        return false;
                if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
                        return false;
        }
        return n == 2 * SHA256_DIGEST_SIZE;
}

void hmac_sha256_v(const void *key, size_t key_len, const void *const *data, const size_t *lens, size_t n,
                   uint8_t mac[static SHA256_DIGEST_SIZE]) {
        uint8_t k[SHA256_BLOCK_SIZE] = {}, pad[SHA256_BLOCK_SIZE], inner[SHA256_DIGEST_SIZE];
        Sha256 s;

        if (key_len > SHA256_BLOCK_SIZE)
                sha256(key, key_len, k);
        else if (key_len > 0)
                memcpy(k, key, key_len);

        for (size_t i = 0; i < SHA256_BLOCK_SIZE; i++)
                pad[i] = k[i] ^ 0x36;
        sha256_init(&s);
        sha256_update(&s, pad, sizeof(pad));
        for (size_t i = 0; i < n; i++)
                sha256_update(&s, data[i], lens[i]);
        sha256_final(&s, inner);

        for (size_t i = 0; i < SHA256_BLOCK_SIZE; i++)
                pad[i] = k[i] ^ 0x5c;
        sha256_init(&s);
        sha256_update(&s, pad, sizeof(pad));
        sha256_update(&s, inner, sizeof(inner));
        sha256_final(&s, mac);

        /* the key's material does not outlive the call on our stack */
        explicit_bzero(k, sizeof(k));
        explicit_bzero(pad, sizeof(pad));
        explicit_bzero(&s, sizeof(s));
}

void hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                 uint8_t mac[static SHA256_DIGEST_SIZE]) {
        hmac_sha256_v(key, key_len, (const void *const[]) { data }, (const size_t[]) { len }, 1, mac);
}
