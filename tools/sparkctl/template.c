/* See template.h. */
#include <inttypes.h>
#include <string.h>

#include "template.h"

static bool shell_safe(char c) {
        /* no '=' (a first word "A=b" would be an assignment), no '~' (expansion) */
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c != '\0' && strchr("_@%+:,./-", c));
}

int shell_quote(Buf *b, const char *s, size_t n) {
        bool plain = n > 0;
        size_t start = 0;
        int r;

        if (n > 0 && memchr(s, '\0', n))
                return -EINVAL;
        for (size_t i = 0; i < n && plain; i++)
                plain = shell_safe(s[i]);
        if (plain)
                return buf_append(b, s, n);

        r = buf_puts(b, "'");
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (s[i] != '\'')
                        continue;
                r = buf_append(b, s + start, i - start);
                if (r >= 0)
                        r = buf_puts(b, "'\\''");
                start = i + 1;
        }
        if (r >= 0)
                r = buf_append(b, s + start, n - start);
        if (r >= 0)
                r = buf_puts(b, "'");
        return r;
}

bool template_has_placeholders(const char *tmpl) {
        return strstr(tmpl, "{}") || strstr(tmpl, "{#}");
}

static int expand(Buf *b, const char *tmpl, const void *input, size_t n, int64_t index) {
        const char *p = tmpl;
        int r = 0;

        while (*p && r >= 0) {
                const char *next = strchr(p, '{');

                if (!next)
                        return buf_puts(b, p);
                r = buf_append(b, p, (size_t) (next - p));
                if (r < 0)
                        break;
                if (strncmp(next, "{}", 2) == 0) {
                        r = shell_quote(b, input, n);
                        p = next + 2;
                } else if (strncmp(next, "{#}", 3) == 0) {
                        r = buf_printf(b, "%" PRIi64, index);
                        p = next + 3;
                } else {
                        r = buf_append(b, next, 1);
                        p = next + 1;
                }
        }
        return r;
}

int template_expand(const char *tmpl, bool append_input, const void *input, size_t n, int64_t index, char **ret) {
        Buf b = {};
        int r;

        r = expand(&b, tmpl, input, n, index);
        if (r >= 0 && append_input) {
                r = buf_puts(&b, " ");
                if (r >= 0)
                        r = shell_quote(&b, input, n);
        }
        if (r < 0) {
                buf_done(&b);
                return r;
        }
        *ret = buf_steal(&b);
        return *ret ? 0 : -ENOMEM;
}
