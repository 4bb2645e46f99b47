/* See error-buf.h. */
#include <stdarg.h>
#include <stdio.h>

#include "error-buf.h"

int error_buf_set(char *err, size_t size, int r, const char *fmt, ...) {
        va_list ap;

        if (err && size > 0) {
                va_start(ap, fmt);
                vsnprintf(err, size, fmt, ap);
                va_end(ap);
        }
        return r;
}
