/* A growable byte buffer, always NUL-terminated, for strings built piece by
 * piece (command lines, table cells). */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "macro.h"

typedef struct Buf {
        char *data;
        size_t len;
        size_t cap;
} Buf;

int buf_append(Buf *b, const void *p, size_t n);
int buf_puts(Buf *b, const char *s);
int buf_printf(Buf *b, const char *fmt, ...) _printf_(2, 3);
/* Hands the string to the caller (never NULL on success: "" for nothing) and
 * leaves b empty. */
char *buf_steal(Buf *b);
void buf_done(Buf *b);
