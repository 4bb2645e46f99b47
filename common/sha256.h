/* SHA-256 (FIPS 180-4), small and self-contained: function-task libraries
 * travel by their digest, the driver names them by it and the executor
 * checks what it fetched against it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32u
#define SHA256_BLOCK_SIZE 64u
/* 64 hex digits and a NUL. */
#define SHA256_HEX_SIZE (2u * SHA256_DIGEST_SIZE + 1u)

typedef struct Sha256 {
        uint32_t state[8];
        uint64_t length;                 /* bytes hashed so far */
        uint8_t block[SHA256_BLOCK_SIZE];
        size_t fill;                     /* bytes waiting in block */
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t len);
/* Writes the digest; s must be initialised again before reuse. */
void sha256_final(Sha256 *s, uint8_t digest[static SHA256_DIGEST_SIZE]);

/* One-shot digest of a buffer. */
void sha256(const void *data, size_t len, uint8_t digest[static SHA256_DIGEST_SIZE]);

/* Lower-case hex of a digest; returns hex. */
char *sha256_to_hex(const uint8_t digest[static SHA256_DIGEST_SIZE], char hex[static SHA256_HEX_SIZE]);

/* One-shot lower-case hex digest of a buffer; returns hex. */
char *sha256_hex(const void *data, size_t len, char hex[static SHA256_HEX_SIZE]);

/* True for exactly 64 lower-case hex digits: the only form of a library
 * hash we accept from the network (it becomes part of a file name). */
bool sha256_hex_is_valid(const char *s);

/* HMAC-SHA256 (RFC 2104): keys longer than a block are hashed first.  The
 * executor secret (executor-secret.h) is one. */
void hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                 uint8_t mac[static SHA256_DIGEST_SIZE]);

/* HMAC-SHA256 over several pieces, concatenated: n pieces at data[i], of
 * lengths lens[i]. */
void hmac_sha256_v(const void *key, size_t key_len, const void *const *data, const size_t *lens, size_t n,
                   uint8_t mac[static SHA256_DIGEST_SIZE]);
