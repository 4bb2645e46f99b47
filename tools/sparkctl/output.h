/* What sparkctl prints: JSON (json-writer.h), aligned tables for people,
 * and short human forms of durations and sizes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json-writer.h"
#include "macro.h"

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
