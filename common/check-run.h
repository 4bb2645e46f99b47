/* The end of every libcheck test program's main(): run the suite and turn
 * the failures into the exit status (0: all passed). */
#pragma once

#include <check.h>

static inline int check_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? 0 : 1;
}
