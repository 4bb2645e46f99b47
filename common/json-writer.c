/* See json-writer.h. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json-writer.h"

size_t utf8_sequence_length(const uint8_t *p, size_t n) {
        uint8_t lo = 0x80, hi = 0xBF;
        size_t len;

        if (n == 0)
                return 0;
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xC2 && p[0] <= 0xDF)
                len = 2;
        else if (p[0] >= 0xE0 && p[0] <= 0xEF)
                len = 3;
        else if (p[0] >= 0xF0 && p[0] <= 0xF4)
                len = 4;
        else
                return 0; /* a continuation byte, an overlong lead (C0, C1) or past U+10FFFF */

        /* the second byte's range excludes overlong forms, surrogates and > U+10FFFF */
        if (p[0] == 0xE0)
                lo = 0xA0;
        else if (p[0] == 0xED)
                hi = 0x9F;
        else if (p[0] == 0xF0)
                lo = 0x90;
        else if (p[0] == 0xF4)
                hi = 0x8F;

        if (n < len || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (p[i] < 0x80 || p[i] > 0xBF)
                        return 0;
        return len;
}

static const char *json_short_escape(uint8_t c) {
        switch (c) {
        case '"':
                return "\\\"";
        case '\\':
                return "\\\\";
        case '\n':
                return "\\n";
        case '\r':
                return "\\r";
        case '\t':
                return "\\t";
        case '\b':
                return "\\b";
        case '\f':
                return "\\f";
        default:
                return NULL;
        }
}

void json_escape(FILE *f, const void *data, size_t n) {
        const uint8_t *p = data;
        size_t i = 0, k;

        while (i < n) {
                const char *e = json_short_escape(p[i]);

                if (e) {
                        fputs(e, f);
                        i++;
                        continue;
                }
                k = p[i] < 0x20 || p[i] == 0x7f ? 0 : utf8_sequence_length(p + i, n - i);
                if (k == 0) {
                        /* a control character, or a byte that is not part of valid UTF-8 */
                        fprintf(f, "\\u%04x", p[i]);
                        i++;
                        continue;
                }
                fwrite(p + i, 1, k, f);
                i += k;
        }
}

void json_init(Json *j, FILE *f) {
        *j = (Json) { .f = f };
}

static void json_member(Json *j, const char *key) {
        if (j->has_members[j->depth])
                fputc(',', j->f);
        j->has_members[j->depth] = true;
        if (key) {
                fputc('"', j->f);
                json_escape(j->f, key, strlen(key));
                fputs("\":", j->f);
        }
}

static void json_open(Json *j, const char *key, char c) {
        json_member(j, key);
        fputc(c, j->f);
        /* deeper than we ever nest: keep writing valid JSON, commas may suffer */
        if (j->depth + 1 < JSON_MAX_DEPTH)
                j->depth++;
        j->has_members[j->depth] = false;
}

static void json_close(Json *j, char c) {
        fputc(c, j->f);
        if (j->depth > 0)
                j->depth--;
}

void json_object_begin(Json *j, const char *key) {
        json_open(j, key, '{');
}

void json_object_end(Json *j) {
        json_close(j, '}');
}

void json_array_begin(Json *j, const char *key) {
        json_open(j, key, '[');
}

void json_array_end(Json *j) {
        json_close(j, ']');
}

void json_bytes(Json *j, const char *key, const void *p, size_t n) {
        json_member(j, key);
        fputc('"', j->f);
        json_escape(j->f, p, n);
        fputc('"', j->f);
}

void json_string(Json *j, const char *key, const char *s) {
        json_bytes(j, key, s ?: "", s ? strlen(s) : 0);
}

void json_int(Json *j, const char *key, int64_t v) {
        json_member(j, key);
        fprintf(j->f, "%" PRIi64, v);
}

void json_double(Json *j, const char *key, double v) {
        json_member(j, key);
        fprintf(j->f, "%.6g", isfinite(v) ? v : 0.0);
}

void json_bool(Json *j, const char *key, bool v) {
        json_member(j, key);
        fputs(v ? "true" : "false", j->f);
}
