/* Shell quoting of input lines into {} and {#} substitution: unit cases,
 * and a round trip through /bin/sh for every byte value. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check-run.h"
#include "template.h"

static char *quoted(const char *s, size_t n) {
        Buf b = {};

        ck_assert_int_eq(shell_quote(&b, s, n), 0);
        return buf_steal(&b);
}

#define ck_quote(in, expected)                                  \
        do {                                                    \
                char *_q = quoted((in), strlen(in));            \
                ck_assert_str_eq(_q, (expected));               \
                free(_q);                                       \
        } while (0)

static char *expanded(const char *tmpl, bool append, const char *input, int64_t index) {
        char *s = NULL;

        ck_assert_int_eq(template_expand(tmpl, append, input, strlen(input), index, &s), 0);
        return s;
}

#define ck_expand(tmpl, append, input, index, expected)                         \
        do {                                                                    \
                char *_s = expanded((tmpl), (append), (input), (index));        \
                ck_assert_str_eq(_s, (expected));                               \
                free(_s);                                                       \
        } while (0)

START_TEST(test_quote) {
        Buf b = {};

        ck_quote("plain-word_1.txt", "plain-word_1.txt");
        ck_quote("/path/to/file,v:2@x%y+z", "/path/to/file,v:2@x%y+z");
        ck_quote("", "''");
        ck_quote("two words", "'two words'");
        ck_quote("it's", "'it'\\''s'");
        ck_quote("'", "''\\'''");
        ck_quote("$HOME `id` $(id) \\ \" ; | & > < * ? [ ] # ~ !", "'$HOME `id` $(id) \\ \" ; | & > < * ? [ ] # ~ !'");
        ck_quote("A=b", "'A=b'");  /* else, as a first word, an assignment */
        ck_quote("~root", "'~root'");
        ck_quote("line1\nline2", "'line1\nline2'");
        ck_quote("-n", "-n");
        ck_quote("caf\xc3\xa9", "'caf\xc3\xa9'");

        /* a NUL byte cannot be in a command line */
        ck_assert_int_eq(shell_quote(&b, "a\0b", 3), -EINVAL);
        buf_done(&b);
}
END_TEST

START_TEST(test_expand) {
        ck_expand("echo {}", false, "hello world", 0, "echo 'hello world'");
        ck_expand("echo {} {}", false, "x", 0, "echo x x");
        ck_expand("echo {#}: {}", false, "a", 41, "echo 41: a");
        ck_expand("cp {} {}.bak", false, "my file", 3, "cp 'my file' 'my file'.bak");
        ck_expand("echo { } {x} {#", false, "a", 1, "echo { } {x} {#");
        ck_expand("echo {{}}", false, "a", 1, "echo {a}");
        ck_expand("awk '{print}' {}", false, "f", 0, "awk '{print}' f");
        ck_expand("true", false, "x", 9, "true");
        ck_expand("wc -l", true, "my file", 0, "wc -l 'my file'");
        ck_expand("echo {}", false, "", 0, "echo ''");
        ck_expand("{}", false, "rm -rf /", 0, "'rm -rf /'");

        ck_assert(template_has_placeholders("x {}"));
        ck_assert(template_has_placeholders("x {#}"));
        ck_assert(!template_has_placeholders("x { } {x}"));
}
END_TEST

/* Runs `printf %s {}` with sh and checks that the input comes back as it
 * went in: quoting makes any line data, never syntax. */
static void round_trip(const char *input, size_t n) {
        _cleanup_free_ char *cmd = NULL;
        char out[1024];
        size_t got;
        FILE *p;

        ck_assert_int_eq(template_expand("printf %s {}", false, input, n, 0, &cmd), 0);
        p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        got = fread(out, 1, sizeof(out), p);
        ck_assert_int_eq(pclose(p), 0);
        ck_assert_uint_eq(got, n);
        ck_assert_mem_eq(out, input, n);
}

START_TEST(test_shell_round_trip) {
        static const char *const cases[] = {
                "simple", "two words", "it's", "'", "''", "\"", "$HOME", "`id`", "$(echo no)", "a\\b",
                "*", "?", "~", "!x", "#c", "; echo no", "| cat", "&", "\n", "x\ny", " lead", "trail ",
                "%s %d", "-n", "--", "A=b", "{}", "{#}",
        };
        char all[256];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                round_trip(cases[i], strlen(cases[i]));
        /* every byte but NUL, alone and together */
        for (int c = 1; c < 256; c++) {
                char one = (char) c;
                round_trip(&one, 1);
                all[c - 1] = one;
        }
        round_trip(all, 255);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_quote,
                test_expand,
                test_shell_round_trip,
                NULL,
        };
        const CheckOptions options = { .timeout = 60 };

        return check_run_tests("sparkctl-template", &options, tests);
}
