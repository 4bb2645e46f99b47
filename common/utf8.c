/* See utf8.h. */
#include "utf8.h"

bool utf8_text_is_valid(const char *s, bool allow_tab) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                unsigned c = *p, n, cp;

                if (c < 0x80) {
                        if ((c < 0x20 && !(allow_tab && c == '\t')) || c == 0x7f)
                                return false;
                        p++;
                        continue;
                }
                if ((c & 0xe0) == 0xc0) {
                        n = 1;
                        cp = c & 0x1f;
                } else if ((c & 0xf0) == 0xe0) {
                        n = 2;
                        cp = c & 0x0f;
                } else if ((c & 0xf8) == 0xf0) {
                        n = 3;
                        cp = c & 0x07;
                } else
                        return false;
                for (unsigned i = 1; i <= n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (p[i] & 0x3f);
                }
                /* overlong forms, surrogates, beyond Unicode */
                if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
                    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                        return false;
                p += n + 1;
        }
        return true;
}
