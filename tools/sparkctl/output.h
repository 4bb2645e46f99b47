/* What sparkctl prints: JSON (escaped so that any bytes give valid JSON),
 * aligned tables for people, and short human forms of durations and sizes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"

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
void json_bool(Json *j, const char *key, bool v);

/* A table of strings printed with aligned columns: the header row first,
 * two spaces between columns, no trailing blanks.  Cells are copied with
 * control characters and invalid UTF-8 replaced by '?', so a hostile name
 * from the network cannot drive the terminal.  A failed add is remembered
 * and returned by table_print(), so callers may add a row without checking
 * each cell. */
typedef struct Table Table;

Table *table_new(const char *header, ...) __attribute__((sentinel));
Table *table_free(Table *t);
int table_add(Table *t, const char *cell); /* NULL: "-" */
int table_addf(Table *t, const char *fmt, ...) _printf_(2, 3);
size_t table_rows(const Table *t); /* without the header */
/* The column (< 64) is left out when all its cells are empty ("REASON"). */
void table_set_optional(Table *t, size_t column);
/* -ENOMEM if an add failed, -EINVAL if the last row is not complete. */
int table_print(const Table *t, FILE *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(Table *, table_free);

/* Copies s into buf with control characters and invalid UTF-8 replaced by
 * '?' (truncating at a character boundary); returns buf. */
char *string_sanitize(const char *s, char *buf, size_t size);

/* "350ms", "12.3s", "5m03s", "2h05m", "3d04h"; negative: "-". */
char *format_duration_ms(char *buf, size_t size, int64_t ms);
/* A size given in MiB: "512M", "1.5G", "8G", "2T". */
char *format_mib(char *buf, size_t size, int64_t mib);

#define FORMAT_SHORT_MAX 32
