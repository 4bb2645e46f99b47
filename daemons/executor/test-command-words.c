/* command_words(): which lines run without the shell, and their words. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check-run.h"
#include "command-words.h"
#include "macro.h"

static void expect_words(const char *line, const char *const *want) {
        _cleanup_(command_words_freep) char **w = NULL;
        size_t i;

        ck_assert_msg(command_words(line, &w) == 1, "%s: should run without the shell", line);
        for (i = 0; want[i]; i++) {
                ck_assert_msg(w[i], "%s: word %zu missing", line, i);
                ck_assert_str_eq(w[i], want[i]);
        }
        ck_assert_msg(!w[i], "%s: extra word '%s'", line, w[i]);
}

static void expect_shell(const char *line) {
        char **w = NULL;

        ck_assert_msg(command_words(line, &w) == 0, "%s: should go to the shell", line);
        ck_assert_ptr_null(w);
}

START_TEST(test_plain_words) {
        expect_words("gzip -1 -c /var/lib/x/f00001", (const char *const[]) { "gzip", "-1", "-c", "/var/lib/x/f00001", NULL });
        expect_words("  a\tb  ", (const char *const[]) { "a", "b", NULL });
        expect_words("cut -d: -f1,3 a=b x@y 50% +1", (const char *const[]) { "cut", "-d:", "-f1,3", "a=b", "x@y", "50%", "+1", NULL });
}
END_TEST

START_TEST(test_quoted_words) {
        /* as sparkctl quotes an input: each ' written '\'' */
        expect_words("wc -c 'a b'", (const char *const[]) { "wc", "-c", "a b", NULL });
        expect_words("cat 'it'\\''s' ''", (const char *const[]) { "cat", "it's", "", NULL });
        expect_words("grep 'x;$(y)|`z`' f", (const char *const[]) { "grep", "x;$(y)|`z`", "f", NULL });
        expect_words("/bin/prog a'b c'd", (const char *const[]) { "/bin/prog", "ab cd", NULL });
}
END_TEST

START_TEST(test_shell_needed) {
        expect_shell("");
        expect_shell("   ");
        expect_shell("true");
        expect_shell("echo a");
        expect_shell("'echo' a");
        expect_shell("cd /");
        expect_shell("exit 3");
        expect_shell("if");
        expect_shell("A=1 prog");
        expect_shell("prog $HOME");
        expect_shell("prog \"a\"");
        expect_shell("prog `x`");
        expect_shell("prog > out");
        expect_shell("prog < in");
        expect_shell("a | b");
        expect_shell("a; b");
        expect_shell("a && b");
        expect_shell("a &");
        expect_shell("prog *.c");
        expect_shell("prog ?");
        expect_shell("prog [ab]");
        expect_shell("prog ~");
        expect_shell("prog # comment");
        expect_shell("prog {a,b}");
        expect_shell("prog 'unterminated");
        expect_shell("prog a\\ b");
        expect_shell("prog\nother");
        expect_shell("(sub)");
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_plain_words,
                test_quoted_words,
                test_shell_needed,
                NULL,
        };

        return check_run_tests("command-words", NULL, tests);
}
