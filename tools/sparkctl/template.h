/* Command tasks: from the --command template to each task's command line.
 * {} becomes the task's input as one shell word and {#} its index (from 0),
 * so that an input line is data, never shell syntax. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Appends n bytes of s to b as one shell word: as they are if non-empty and
 * made only of characters that no shell treats specially, else in single
 * quotes with each ' written as '\''.  -EINVAL if s holds a NUL byte (a
 * command line cannot). */
int shell_quote(Buf *b, const char *s, size_t n);

/* Whether tmpl uses {} or {#}. */
bool template_has_placeholders(const char *tmpl);

/* The command line of one task: tmpl with every {} replaced by the quoted
 * input and every {#} by index; with append_input, " {}" is added at the
 * end first (GNU parallel's rule for a command without placeholders). */
int template_expand(const char *tmpl, bool append_input, const void *input, size_t n, int64_t index, char **ret);
