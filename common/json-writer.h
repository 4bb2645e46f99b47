/* JSON for sparkctl and the daemons' HTTP API: a streaming writer that
 * places the commas and escapes so that any bytes give valid JSON. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0 if the bytes
 * there are not one (overlong forms, surrogates and values past U+10FFFF
 * are not). */
size_t utf8_sequence_length(const uint8_t *p, size_t n);

/* Writes n bytes as the inside of a JSON string (without the quotes): valid
 * UTF-8 passes through; '"', '\\' and control characters are escaped; each
 * byte that is not part of valid UTF-8 becomes \u00XX (its value as a code
 * point), so the result is valid JSON whatever the bytes are. */
void json_escape(FILE *f, const void *p, size_t n);

/* A streaming JSON writer that places the commas.  Write errors stick to the
 * FILE (check ferror()). */
#define JSON_MAX_DEPTH 16

typedef struct Json {
        FILE *f;
        unsigned depth;
        bool has_members[JSON_MAX_DEPTH];
} Json;

void json_init(Json *j, FILE *f);
/* key: the member name inside an object; NULL inside an array or at the top. */
void json_object_begin(Json *j, const char *key);
void json_object_end(Json *j);
void json_array_begin(Json *j, const char *key);
void json_array_end(Json *j);
void json_string(Json *j, const char *key, const char *s); /* NULL: "" */
void json_bytes(Json *j, const char *key, const void *p, size_t n);
void json_int(Json *j, const char *key, int64_t v);
void json_double(Json *j, const char *key, double v); /* not finite: 0 */
void json_bool(Json *j, const char *key, bool v);
