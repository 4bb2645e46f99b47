/* Text we hand to systemd (unit properties, environment values) and to
 * people (logs): well-formed UTF-8 without control characters. */
#pragma once

#include <stdbool.h>

/* Well-formed UTF-8 (no overlong forms, no surrogates, nothing beyond
 * U+10FFFF) without control characters; a tab is allowed if allow_tab. */
bool utf8_text_is_valid(const char *s, bool allow_tab);
