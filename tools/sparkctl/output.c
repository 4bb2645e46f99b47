/* See output.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "output.h"

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

void json_bool(Json *j, const char *key, bool v) {
        json_member(j, key);
        fputs(v ? "true" : "false", j->f);
}

/* ------------------------------------------------------------------ tables */

struct Table {
        size_t n_columns;
        char **cells; /* row-major, the header row first */
        size_t n_cells;
        size_t cap;
        uint64_t optional; /* bit per column: hidden when every cell below the header is empty */
        int error;         /* the first failed add: sticks, like ferror() */
};

static int table_add_owned(Table *t, char *cell) {
        if (!cell)
                return (t->error = -ENOMEM);
        if (GREEDY_REALLOC(t->cells, t->cap, t->n_cells + 1) < 0) {
                free(cell);
                return (t->error = -ENOMEM);
        }
        t->cells[t->n_cells++] = cell;
        return 0;
}

Table *table_new(const char *header, ...) {
        _cleanup_(table_freep) Table *t = NULL;
        va_list ap;
        int r = 0;

        t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        va_start(ap, header);
        for (const char *h = header; h && r >= 0; h = va_arg(ap, const char *)) {
                r = table_add(t, h);
                t->n_columns++;
        }
        va_end(ap);
        if (r < 0 || t->n_columns == 0)
                return NULL;
        return TAKE_PTR(t);
}

Table *table_free(Table *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t);
        return NULL;
}

int table_add(Table *t, const char *cell) {
        size_t n;
        char *c;

        if (!cell)
                cell = "-";
        n = strlen(cell) + 1;
        c = malloc(n);
        return table_add_owned(t, c ? string_sanitize(cell, c, n) : NULL);
}

int table_addf(Table *t, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return (t->error = -ENOMEM);
        return table_add(t, s);
}

size_t table_rows(const Table *t) {
        return t->n_cells / t->n_columns - 1;
}

/* Columns on a terminal: one per code point (cells are valid UTF-8). */
static size_t display_width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                if (((uint8_t) *s & 0xC0) != 0x80)
                        w++;
        return w;
}

void table_set_optional(Table *t, size_t column) {
        if (column < 64)
                t->optional |= UINT64_C(1) << column;
}

static bool column_visible(const Table *t, size_t col) {
        if (col >= 64 || !(t->optional & (UINT64_C(1) << col)))
                return true;
        for (size_t i = t->n_columns + col; i < t->n_cells; i += t->n_columns)
                if (t->cells[i][0] != '\0')
                        return true;
        return false;
}

static void print_row(const Table *t, char *const *row, const size_t *width, const bool *visible, FILE *f) {
        size_t last = 0;

        /* no blanks after the last non-empty cell */
        for (size_t col = 0; col < t->n_columns; col++)
                if (visible[col] && row[col][0] != '\0')
                        last = col;
        for (size_t col = 0; col <= last; col++) {
                if (!visible[col])
                        continue;
                fputs(row[col], f);
                if (col < last)
                        fprintf(f, "%*s", (int) (width[col] - display_width(row[col]) + 2), "");
        }
        fputc('\n', f);
}

int table_print(const Table *t, FILE *f) {
        _cleanup_free_ size_t *width = NULL;
        _cleanup_free_ bool *visible = NULL;

        if (t->error < 0)
                return t->error;
        if (t->n_cells % t->n_columns != 0)
                return -EINVAL;
        width = calloc(t->n_columns, sizeof(*width));
        visible = calloc(t->n_columns, sizeof(*visible));
        if (!width || !visible)
                return -ENOMEM;
        for (size_t col = 0; col < t->n_columns; col++)
                visible[col] = column_visible(t, col);
        for (size_t i = 0; i < t->n_cells; i++)
                width[i % t->n_columns] = MAX(width[i % t->n_columns], display_width(t->cells[i]));

        for (size_t i = 0; i < t->n_cells; i += t->n_columns)
                print_row(t, t->cells + i, width, visible, f);
        return ferror(f) ? -EIO : 0;
}

char *string_sanitize(const char *s, char *buf, size_t size) {
        const uint8_t *p = (const uint8_t *) (s ?: "");
        size_t n = strlen((const char *) p), i = 0, o = 0, k;

        if (size == 0)
                return buf;
        while (i < n) {
                k = utf8_sequence_length(p + i, n - i);
                if (k == 0 || p[i] < 0x20 || p[i] == 0x7f) {
                        if (o + 1 >= size)
                                break;
                        buf[o++] = '?';
                        i++;
                        continue;
                }
                if (o + k >= size)
                        break;
                memcpy(buf + o, p + i, k);
                o += k;
                i += k;
        }
        buf[o] = '\0';
        return buf;
}

/* ------------------------------------------------------------ human forms */

char *format_duration_ms(char *buf, size_t size, int64_t ms) {
        int64_t s = ms / 1000;

        if (ms < 0)
                snprintf(buf, size, "-");
        else if (ms < 1000)
                snprintf(buf, size, "%" PRIi64 "ms", ms);
        else if (s < 60)
                snprintf(buf, size, "%" PRIi64 ".%" PRIi64 "s", s, (ms % 1000) / 100);
        else if (s < 3600)
                snprintf(buf, size, "%" PRIi64 "m%02" PRIi64 "s", s / 60, s % 60);
        else if (s < 86400)
                snprintf(buf, size, "%" PRIi64 "h%02" PRIi64 "m", s / 3600, (s % 3600) / 60);
        else
                snprintf(buf, size, "%" PRIi64 "d%02" PRIi64 "h", s / 86400, (s % 86400) / 3600);
        return buf;
}

char *format_mib(char *buf, size_t size, int64_t mib) {
        static const char units[] = { 'M', 'G', 'T', 'P', 'E' };
        int64_t whole = mib, tenths = 0;
        size_t u = 0;

        if (mib < 0) {
                snprintf(buf, size, "-");
                return buf;
        }
        while (whole >= 1024 && u + 1 < sizeof(units)) {
                tenths = (whole % 1024) * 10 / 1024;
                whole /= 1024;
                u++;
        }
        if (tenths > 0 && whole < 10)
                snprintf(buf, size, "%" PRIi64 ".%" PRIi64 "%c", whole, tenths, units[u]);
        else
                snprintf(buf, size, "%" PRIi64 "%c", whole, units[u]);
        return buf;
}
