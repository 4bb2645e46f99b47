/* Building a string with stdio: open_memstream(3) with the buffer and its
 * size kept beside the stream, so that a function formats into it and hands
 * the result over (or frees it) in one call. */
#pragma once

#include <stdio.h>

typedef struct MemStream {
        FILE *f;
        char *buf;
        size_t size;
} MemStream;

/* Opens the stream; NULL when out of memory. */
FILE *memstream_init(MemStream *m);

/* Closes the stream and hands its NUL-terminated text to *ret (ret_size, if
 * not NULL, gets its length); -ENOMEM if a write failed for want of memory.
 * Either way m holds nothing more. */
int memstream_finalize(MemStream *m, char **ret, size_t *ret_size);

/* Closes the stream and frees what it held; for _cleanup_(). */
void memstream_done(MemStream *m);
