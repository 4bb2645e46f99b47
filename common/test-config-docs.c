/* The manual against the schema: docs/spark.conf.5 documents every key of
 * config_schema() once, in its section, with its default exactly as
 * config_key_format_value() writes it, and with its type, range and whether
 * SIGHUP applies it; and no page in docs/ names a key that does not exist.
 *
 * In spark.conf.5 each key is one tagged paragraph:
 *
 *     .TP
 *     .BR master.worker_timeout_ms " = 10000"
 *     .RI ( "integer, 100..3600000; reloadable" )
 *
 * under ".SS master" (the section's name).  Runs from the source root. */
#include <check.h>
#include <ctype.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "alloc-util.h"
#include "check-run.h"
#include "config.h"
#include "fileio.h"
#include "macro.h"

#define PAGE "docs/spark.conf.5"
#define PAGES_GLOB "docs/*.[1-8]"

static char *read_file(const char *path) {
        char *buf = NULL;
        int r = read_full_file(path, 0, 0, &buf, NULL);

        ck_assert_msg(r >= 0, "cannot read %s (run from the source root): %s", path, strerror(-r));
        return buf;
}

/* The lines of text, split in place; NULL-terminated. */
static char **split_lines(char *text, size_t *ret_n) {
        size_t n = 0, cap = 0;
        char **lines = NULL;

        ck_assert_int_eq(GREEDY_REALLOC(lines, cap, 1), 0);
        for (char *p = text; p && *p;) {
                char *nl = strchr(p, '\n');

                ck_assert_int_eq(GREEDY_REALLOC(lines, cap, n + 2), 0);
                lines[n++] = p;
                if (nl)
                        *nl = '\0';
                p = nl ? nl + 1 : NULL;
        }
        lines[n] = NULL;
        *ret_n = n;
        return lines;
}

/* The text of roff escapes as these pages use them: \- \(dq \(aq \e \&,
 * and font changes \fB \fI \fR \fP dropped.  strict: anything else fails
 * the test, so that a value is never compared in a form we do not
 * understand; else other escapes are dropped. */
static void unescape(const char *in, char *out, size_t size, bool strict) {
        size_t o = 0;

        for (const char *p = in; *p; p++) {
                const char *add = NULL;
                char one[2] = { *p, 0 };

                if (*p != '\\')
                        add = one;
                else if (p[1] == '-' || p[1] == 'e' || p[1] == '&') {
                        add = p[1] == '-' ? "-" : p[1] == 'e' ? "\\" : "";
                        p++;
                } else if (p[1] == '(' && p[2] && p[3]) {
                        if (strncmp(p + 2, "dq", 2) == 0)
                                add = "\"";
                        else if (strncmp(p + 2, "aq", 2) == 0)
                                add = "'";
                        else if (strict)
                                ck_abort_msg("unknown escape in '%s'", in);
                        else
                                add = "";
                        p += 3;
                } else if (p[1] == 'f' && p[2]) {
                        add = "";
                        p += 2;
                } else if (strict)
                        ck_abort_msg("unknown escape in '%s'", in);
                else {
                        add = "";
                        p += p[1] ? 1 : 0;
                }
                ck_assert_msg(o + strlen(add) < size, "line too long: '%s'", in);
                memcpy(out + o, add, strlen(add));
                o += strlen(add);
        }
        out[o] = '\0';
}

/* The arguments of a macro line (".BR a \"b c\""): unquoted words, or
 * double-quoted strings (roff has no escaped quote inside them: \(dq). */
static size_t macro_args(const char *line, char args[][512], size_t max) {
        const char *p = strchr(line, ' ');
        size_t n = 0;

        while (p && *p) {
                const char *start, *end;

                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                if (*p == '"') {
                        start = p + 1;
                        end = strchr(start, '"');
                        ck_assert_msg(end, "unterminated quote in '%s'", line);
                        p = end + 1;
                } else {
                        start = p;
                        end = start + strcspn(start, " ");
                        p = end;
                }
                ck_assert_msg(n < max, "too many arguments in '%s'", line);
                ck_assert_msg((size_t) (end - start) < 512, "argument too long in '%s'", line);
                memcpy(args[n], start, (size_t) (end - start));
                args[n][end - start] = '\0';
                n++;
        }
        return n;
}

static bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What the meta line of k must say. */
static void expected_meta(const ConfigKey *k, char *buf, size_t size) {
        const char *type = config_key_type_to_string(k->type), *reload = k->reloadable ? "reloadable" : "restart";

        if (k->type == CONFIG_KEY_INT)
                snprintf(buf, size, "%s, %" PRId64 "..%" PRId64 "; %s", type, k->min, k->max, reload);
        else
                snprintf(buf, size, "%s; %s", type, reload);
}

/* A key's tag line: ".BR KEY \" = DEFAULT\"".  Returns the key (unescaped,
 * in key) and the default (in def), or false for other lines. */
static bool parse_tag(const char *line, char *key, size_t key_size, char *def, size_t def_size) {
        char args[4][512], value[512];
        size_t n;

        if (!startswith(line, ".BR "))
                return false;
        n = macro_args(line, args, ELEMENTSOF(args));
        if (n != 2 || !startswith(args[1], " = "))
                return false;
        unescape(args[0], key, key_size, true);
        unescape(args[1] + 3, value, sizeof(value), true);
        snprintf(def, def_size, "%s", value);
        return true;
}

START_TEST(test_every_key_documented) {
        _cleanup_(config_done) SparkConfig defaults = {};
        _cleanup_free_ char *text = read_file(PAGE);
        _cleanup_free_ char **lines = NULL;
        const ConfigKey *schema;
        size_t n_keys, n_lines;

        ck_assert_int_eq(config_defaults(&defaults), 0);
        lines = split_lines(text, &n_lines);
        schema = config_schema(&n_keys);
        ck_assert_uint_gt(n_keys, 0);

        for (size_t i = 0; i < n_keys; i++) {
                const ConfigKey *k = schema + i;
                _cleanup_free_ char *want_default = NULL;
                const char *section = NULL;
                char want_meta[128], key[512], def[512];
                unsigned found = 0;

                ck_assert_int_eq(config_key_format_value(k, &defaults, &want_default), 0);
                expected_meta(k, want_meta, sizeof(want_meta));

                for (size_t l = 0; l < n_lines; l++) {
                        char args[4][512], meta[512];

                        if (startswith(lines[l], ".SS "))
                                section = lines[l] + 4;
                        if (!parse_tag(lines[l], key, sizeof(key), def, sizeof(def)) || !streq(key, k->key))
                                continue;
                        found++;

                        ck_assert_msg(l > 0 && streq(lines[l - 1], ".TP"), "%s: the tag line must follow .TP",
                                      k->key);
                        ck_assert_msg(section && streq(section, config_section_to_string(k->section)),
                                      "%s: documented under '.SS %s', not '.SS %s'", k->key, strna(section),
                                      config_section_to_string(k->section));
                        ck_assert_msg(streq(def, want_default), "%s: documented default %s, the schema's is %s",
                                      k->key, def, want_default);

                        ck_assert_msg(lines[l + 1] && startswith(lines[l + 1], ".RI ( "),
                                      "%s: the tag line must be followed by .RI ( \"TYPE...\" )", k->key);
                        ck_assert_msg(macro_args(lines[l + 1], args, ELEMENTSOF(args)) == 3 &&
                                              streq(args[0], "(") && streq(args[2], ")"),
                                      "%s: malformed meta line '%s'", k->key, lines[l + 1]);
                        unescape(args[1], meta, sizeof(meta), true);
                        ck_assert_msg(streq(meta, want_meta), "%s: documented as (%s), the schema says (%s)", k->key,
                                      meta, want_meta);
                }
                ck_assert_msg(found == 1, "%s is documented %u times in " PAGE ", not once", k->key, found);
        }
}
END_TEST

START_TEST(test_no_unknown_keys_documented) {
        _cleanup_free_ char *text = read_file(PAGE);
        _cleanup_free_ char **lines = NULL;
        size_t n_lines, n_tags = 0, n_keys;

        lines = split_lines(text, &n_lines);
        (void) config_schema(&n_keys);
        for (size_t l = 0; l < n_lines; l++) {
                char key[512], def[512];

                if (!parse_tag(lines[l], key, sizeof(key), def, sizeof(def)))
                        continue;
                ck_assert_msg(config_key_find_by_key(key), PAGE ": '%s' is not a configuration key", key);
                n_tags++;
        }
        ck_assert_uint_eq(n_tags, n_keys);
}
END_TEST

static bool is_key_char(char c) {
        return islower((unsigned char) c) || isdigit((unsigned char) c) || c == '_';
}

/* Every "section.name" in the text of every page names a key.  File names
 * (master.conf) are not keys; names inside longer words (spark-master.x)
 * are not either. */
static void check_key_references(const char *path) {
        static const char *const not_keys[] = { "conf" };
        _cleanup_free_ char *text = read_file(path);
        _cleanup_free_ char **lines = NULL;
        size_t n_lines;

        lines = split_lines(text, &n_lines);
        for (size_t l = 0; l < n_lines; l++) {
                char plain[4096];

                if (startswith(lines[l], ".\\\"") || startswith(lines[l], "'\\\""))
                        continue; /* a comment */
                unescape(lines[l], plain, sizeof(plain), false);
                for (ConfigSection s = 0; s < _CONFIG_SECTION_MAX; s++) {
                        const char *name = config_section_to_string(s);
                        size_t len = strlen(name);

                        for (const char *p = strstr(plain, name); p; p = strstr(p + 1, name)) {
                                char key[256];
                                const char *e = p + len + 1;
                                size_t n = 0;
                                bool skip = false;

                                if (p[len] != '.' || !is_key_char(*e))
                                        continue;
                                if (p > plain && (isalnum((unsigned char) p[-1]) || strchr("-_./@", p[-1])))
                                        continue;
                                while (is_key_char(e[n]))
                                        n++;
                                for (size_t i = 0; i < ELEMENTSOF(not_keys); i++)
                                        skip |= strlen(not_keys[i]) == n && strncmp(e, not_keys[i], n) == 0;
                                /* cluster.tls_* stands for the TLS keys */
                                skip |= e[n] == '*';
                                if (skip)
                                        continue;
                                snprintf(key, sizeof(key), "%.*s", (int) (len + 1 + n), p);
                                ck_assert_msg(config_key_find_by_key(key), "%s:%zu: '%s' is not a configuration key",
                                              path, l + 1, key);
                        }
                }
        }
}

START_TEST(test_key_references) {
        glob_t g = {};

        ck_assert_int_eq(glob(PAGES_GLOB, 0, NULL, &g), 0);
        ck_assert_uint_gt(g.gl_pathc, 1);
        for (size_t i = 0; i < g.gl_pathc; i++)
                check_key_references(g.gl_pathv[i]);
        globfree(&g);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_every_key_documented,
                test_no_unknown_keys_documented,
                test_key_references,
                NULL,
        };

        return check_run_tests("config-docs", NULL, tests);
}
