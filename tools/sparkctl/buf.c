/* See buf.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "buf.h"

static int buf_reserve(Buf *b, size_t extra) {
        if (extra > SIZE_MAX - b->len - 1)
                return -ENOMEM;
        return GREEDY_REALLOC(b->data, b->cap, b->len + extra + 1);
}

int buf_append(Buf *b, const void *p, size_t n) {
        int r;

        r = buf_reserve(b, n);
        if (r < 0)
                return r;
        if (n > 0)
                memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
}

int buf_puts(Buf *b, const char *s) {
        return buf_append(b, s, strlen(s));
}

int buf_printf(Buf *b, const char *fmt, ...) {
        va_list ap;
        int n, r;

        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        r = buf_reserve(b, (size_t) n);
        if (r < 0)
                return r;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t) n;
        return 0;
}

char *buf_steal(Buf *b) {
        char *s;

        if (!b->data && buf_reserve(b, 0) < 0)
                return NULL;
        s = b->data;
        *b = (Buf) {};
        return s;
}

void buf_done(Buf *b) {
        free(b->data);
        *b = (Buf) {};
}
