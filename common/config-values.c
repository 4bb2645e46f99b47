/* Table-driven operations on a SparkConfig: defaults, freeing, comparing,
 * formatting, and what SIGHUP needs (which keys changed, applying the
 * reloadable ones). */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config-internal.h"
#include "memstream-util.h"

char **config_strv_free(char **l) {
        if (l) {
                for (char **i = l; *i; i++)
                        free(*i);
                free(l);
        }
        return NULL;
}

size_t config_strv_length(char *const *l) {
        size_t n = 0;

        if (l)
                while (l[n])
                        n++;
        return n;
}

static bool strv_equal(char *const *a, char *const *b) {
        size_t n = config_strv_length(a);

        if (n != config_strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!streq(a[i], b[i]))
                        return false;
        return true;
}

static int strv_copy(char *const *l, char ***ret) {
        size_t n = config_strv_length(l);
        char **c;

        if (!l) {
                *ret = NULL;
                return 0;
        }
        c = calloc(n + 1, sizeof(char *));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(l[i]);
                if (!c[i]) {
                        config_strv_free(c);
                        return -ENOMEM;
                }
        }
        *ret = c;
        return 0;
}

int config_quote(const char *s, char **ret) {
        /* what libconfig reads back as the byte itself */
        static const char *const escapes[256] = {
                ['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\t'] = "\\t", ['\r'] = "\\r",
        };
        _cleanup_(memstream_done) MemStream m = {};
        FILE *f;

        f = memstream_init(&m);
        if (!f)
                return -ENOMEM;
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) (s ?: ""); *p; p++)
                if (escapes[*p])
                        fputs(escapes[*p], f);
                else if (*p < ' ' || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
        fputc('"', f);
        return memstream_finalize(&m, ret, NULL);
}

static size_t value_size(const ConfigKey *k) {
        switch (k->type) {
        case CONFIG_KEY_STRING:
        case CONFIG_KEY_ENDPOINT:
                return sizeof(char *);
        case CONFIG_KEY_INT:
                return sizeof(int64_t);
        case CONFIG_KEY_BOOL:
                return sizeof(bool);
        case CONFIG_KEY_ENV:
        case CONFIG_KEY_STRV:
        case CONFIG_KEY_RESOURCES:
        case CONFIG_KEY_AMOUNTS:
                return sizeof(char **);
        default:
                return 0;
        }
}

static void value_free(const ConfigKey *k, SparkConfig *c) {
        void *v = config_key_value(k, c);

        switch (k->type) {
        case CONFIG_KEY_STRING:
        case CONFIG_KEY_ENDPOINT:
                free(*(char **) v);
                *(char **) v = NULL;
                break;
        case CONFIG_KEY_ENV:
        case CONFIG_KEY_STRV:
        case CONFIG_KEY_RESOURCES:
        case CONFIG_KEY_AMOUNTS:
                *(char ***) v = config_strv_free(*(char ***) v);
                break;
        default:
                break;
        }
}

/* Copies k's value from src into dst, which must not own one. */
static int value_copy(const ConfigKey *k, SparkConfig *dst, const SparkConfig *src) {
        const void *from = config_key_value_const(k, src);
        void *to = config_key_value(k, dst);

        switch (k->type) {
        case CONFIG_KEY_STRING:
        case CONFIG_KEY_ENDPOINT:
                if (!*(char *const *) from) {
                        *(char **) to = NULL;
                        return 0;
                }
                *(char **) to = strdup(*(char *const *) from);
                return *(char **) to ? 0 : -ENOMEM;
        case CONFIG_KEY_ENV:
        case CONFIG_KEY_STRV:
        case CONFIG_KEY_RESOURCES:
        case CONFIG_KEY_AMOUNTS:
                return strv_copy(*(char **const *) from, (char ***) to);
        default:
                memcpy(to, from, value_size(k));
                return 0;
        }
}

int config_defaults(SparkConfig *c) {
        const ConfigKey *schema;
        size_t n;

        if (!c)
                return -EINVAL;
        *c = (SparkConfig) {};
        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                const ConfigKey *k = schema + i;
                void *v = config_key_value(k, c);

                switch (k->type) {
                case CONFIG_KEY_STRING:
                case CONFIG_KEY_ENDPOINT:
                        *(char **) v = strdup(k->default_string);
                        if (!*(char **) v) {
                                config_done(c);
                                return -ENOMEM;
                        }
                        break;
                case CONFIG_KEY_INT:
                        *(int64_t *) v = k->default_int;
                        break;
                case CONFIG_KEY_BOOL:
                        *(bool *) v = k->default_int != 0;
                        break;
                default:
                        /* a list's default is empty, NULL: *c is zeroed */
                        break;
                }
        }
        return 0;
}

void config_done(SparkConfig *c) {
        const ConfigKey *schema;
        size_t n;

        if (!c)
                return;
        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++)
                value_free(schema + i, c);
        *c = (SparkConfig) {};
}

bool config_key_equal(const ConfigKey *k, const SparkConfig *a, const SparkConfig *b) {
        const void *x = config_key_value_const(k, a), *y = config_key_value_const(k, b);

        switch (k->type) {
        case CONFIG_KEY_STRING:
        case CONFIG_KEY_ENDPOINT:
                return streq_ptr(*(char *const *) x, *(char *const *) y);
        case CONFIG_KEY_INT:
                return *(const int64_t *) x == *(const int64_t *) y;
        case CONFIG_KEY_BOOL:
                return *(const bool *) x == *(const bool *) y;
        case CONFIG_KEY_ENV:
        case CONFIG_KEY_STRV:
        case CONFIG_KEY_RESOURCES:
        case CONFIG_KEY_AMOUNTS:
                return strv_equal(*(char **const *) x, *(char **const *) y);
        default:
                return false;
        }
}

/* A list of strings in libconfig's syntax: an environment as a group,
 * { NAME = "value"; ... }, or a list as an array, [ "a", "b" ] ({ } and [ ]
 * when empty). */
static int format_strings(char *const *l, bool as_env, char **ret) {
        _cleanup_(memstream_done) MemStream m = {};
        FILE *f;
        int r = 0;

        f = memstream_init(&m);
        if (!f)
                return -ENOMEM;
        fputc(as_env ? '{' : '[', f);
        for (char *const *e = l; e && *e; e++) {
                const char *eq = as_env ? strchr(*e, '=') : NULL;
                _cleanup_free_ char *q = NULL;

                r = config_quote(!as_env ? *e : eq ? eq + 1 : "", &q);
                if (r < 0)
                        break;
                if (as_env)
                        fprintf(f, " %.*s = %s;", (int) (eq ? eq - *e : (ptrdiff_t) strlen(*e)), *e, q);
                else
                        fprintf(f, "%s %s", e == l ? "" : ",", q);
        }
        fputs(as_env ? " }" : " ]", f);
        if (r < 0)
                return r;
        return memstream_finalize(&m, ret, NULL);
}

int config_key_format_value(const ConfigKey *k, const SparkConfig *c, char **ret) {
        const void *v;
        char *s = NULL;

        if (!k || !c || !ret)
                return -EINVAL;
        v = config_key_value_const(k, c);
        switch (k->type) {
        case CONFIG_KEY_STRING:
        case CONFIG_KEY_ENDPOINT:
                return config_quote(*(char *const *) v, ret);
        case CONFIG_KEY_INT:
                if (asprintf(&s, "%" PRId64, *(const int64_t *) v) < 0)
                        return -ENOMEM;
                break;
        case CONFIG_KEY_BOOL:
                s = strdup(*(const bool *) v ? "true" : "false");
                if (!s)
                        return -ENOMEM;
                break;
        case CONFIG_KEY_ENV:
                return format_strings(*(char **const *) v, true, ret);
        case CONFIG_KEY_STRV:
                return format_strings(*(char **const *) v, false, ret);
        case CONFIG_KEY_RESOURCES:
                return config_format_resources(*(char **const *) v, ret);
        case CONFIG_KEY_AMOUNTS:
                return config_format_amounts(*(char **const *) v, ret);
        default:
                return -EINVAL;
        }
        *ret = s;
        return 0;
}

int config_diff_reloadable(
                const SparkConfig *old,
                const SparkConfig *new,
                unsigned sections,
                const ConfigKey ***ret_changed) {
        const ConfigKey *schema, **changed = NULL;
        size_t n, n_changed = 0;
        int fixed = 0;

        if (!old || !new)
                return -EINVAL;
        schema = config_schema(&n);
        if (ret_changed) {
                changed = calloc(n + 1, sizeof(ConfigKey *));
                if (!changed)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                const ConfigKey *k = schema + i;

                if (!(sections & CONFIG_SECTION_MASK(k->section)) || config_key_equal(k, old, new))
                        continue;
                if (changed)
                        changed[n_changed++] = k;
                if (!k->reloadable)
                        fixed++;
        }
        if (ret_changed)
                *ret_changed = changed;
        return fixed;
}

int config_apply_reloadable(SparkConfig *c, const SparkConfig *new) {
        _cleanup_(config_done) SparkConfig fresh = {};
        const ConfigKey *schema;
        size_t n;
        int r;

        if (!c || !new)
                return -EINVAL;

        /* Copy everything first, so that running out of memory changes nothing. */
        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++)
                if (schema[i].reloadable) {
                        r = value_copy(schema + i, &fresh, new);
                        if (r < 0)
                                return r;
                }

        /* Swap the copies in; the old values leave with `fresh`. */
        for (size_t i = 0; i < n; i++)
                if (schema[i].reloadable) {
                        uint8_t tmp[MAX(sizeof(int64_t), sizeof(void *))];
                        size_t size = value_size(schema + i);
                        void *a = config_key_value(schema + i, c), *b = config_key_value(schema + i, &fresh);

                        memcpy(tmp, a, size);
                        memcpy(a, b, size);
                        memcpy(b, tmp, size);
                }
        return 0;
}
