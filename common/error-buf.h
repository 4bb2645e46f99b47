/* Error strings for the caller: functions that check user input fill a
 * buffer the caller passes in with what is wrong, and return an error. */
#pragma once

#include <errno.h>
#include <stddef.h>

#include "macro.h"

/* Formats into err (when err is not NULL and size > 0; truncated to fit)
 * and returns r, so that a check reads
 *     return error_buf_set(err, size, -EINVAL, "cores: %d is out of range", n); */
int error_buf_set(char *err, size_t size, int r, const char *fmt, ...) _printf_(4, 5);

/* The same for the common case, bad input: returns -EINVAL. */
#define error_buf_invalid(err, size, ...) error_buf_set(err, size, -EINVAL, __VA_ARGS__)
