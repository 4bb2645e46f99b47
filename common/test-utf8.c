/* UTF-8 text checks. */
#include <check.h>

#include "check-run.h"
#include "utf8.h"

START_TEST(test_text) {
        ck_assert(utf8_text_is_valid("", false));
        ck_assert(utf8_text_is_valid("plain ascii", false));
        ck_assert(utf8_text_is_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", false));
        ck_assert(!utf8_text_is_valid("a\tb", false));
        ck_assert(utf8_text_is_valid("a\tb", true));
        ck_assert(!utf8_text_is_valid("line\nbreak", true));
        ck_assert(!utf8_text_is_valid("del\x7f", true));
        ck_assert(!utf8_text_is_valid("\xc0\xaf", false));          /* overlong '/' */
        ck_assert(!utf8_text_is_valid("\xe0\x80\xaf", false));      /* overlong, 3 bytes */
        ck_assert(!utf8_text_is_valid("\xed\xa0\x80", false));      /* a surrogate */
        ck_assert(!utf8_text_is_valid("\xf4\x90\x80\x80", false));  /* beyond U+10FFFF */
        ck_assert(!utf8_text_is_valid("\xc3", false));              /* truncated */
        ck_assert(!utf8_text_is_valid("\xff", false));
        ck_assert(!utf8_text_is_valid("\x80", false));              /* a lone continuation */
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_text,
                NULL,
        };

        return check_run_tests("utf8", NULL, tests);
}
