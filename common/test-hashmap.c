/* Hash map: against a plain array as the model, with many removals. */
#include <check.h>
#include <stdio.h>

#include "check-run.h"
#include "macro.h"
#include "hashmap.h"

#define N 20000

START_TEST(test_model) {
        static char keys[N][24];
        static bool present[N];
        Hashmap *h = NULL;
        unsigned seed = 1;

        ck_assert_int_eq(hashmap_new(&h), 0);
        for (int i = 0; i < N; i++)
                snprintf(keys[i], sizeof(keys[i]), "worker-%d", i);

        for (int round = 0; round < 200000; round++) {
                int i = (int) (rand_r(&seed) % N);
                if (present[i]) {
                        ck_assert_ptr_eq(hashmap_get(h, keys[i]), keys[i]);
                        ck_assert_int_eq(hashmap_put(h, keys[i], keys[i]), -EEXIST);
                        if (rand_r(&seed) % 2) {
                                ck_assert_ptr_eq(hashmap_remove(h, keys[i]), keys[i]);
                                present[i] = false;
                        }
                } else {
                        ck_assert_ptr_null(hashmap_get(h, keys[i]));
                        ck_assert_ptr_null(hashmap_remove(h, keys[i]));
                        ck_assert_int_eq(hashmap_put(h, keys[i], keys[i]), 0);
                        present[i] = true;
                }
        }

        size_t count = 0, it = 0;
        void *v;
        for (int i = 0; i < N; i++)
                count += present[i];
        ck_assert_uint_eq(hashmap_size(h), count);

        size_t seen = 0;
        while (hashmap_iterate(h, &it, &v, NULL)) {
                int i;
                ck_assert_int_eq(sscanf(v, "worker-%d", &i), 1);
                ck_assert(present[i]);
                seen++;
        }
        ck_assert_uint_eq(seen, count);
        for (int i = 0; i < N; i++)
                ck_assert_ptr_eq(hashmap_get(h, keys[i]), present[i] ? keys[i] : NULL);

        /* cleared, it is empty and usable again */
        hashmap_clear(h);
        ck_assert_uint_eq(hashmap_size(h), 0);
        it = 0;
        ck_assert(!hashmap_iterate(h, &it, &v, NULL));
        for (int i = 0; i < N; i++)
                ck_assert_ptr_null(hashmap_get(h, keys[i]));
        ck_assert_int_eq(hashmap_put(h, keys[7], keys[7]), 0);
        ck_assert_ptr_eq(hashmap_get(h, keys[7]), keys[7]);
        ck_assert_uint_eq(hashmap_size(h), 1);
        hashmap_free(h);
}
END_TEST

START_TEST(test_null_safe) {
        ck_assert_ptr_null(hashmap_free(NULL));
        ck_assert_ptr_null(hashmap_get(NULL, "x"));
        ck_assert_uint_eq(hashmap_size(NULL), 0);
        hashmap_clear(NULL);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_model,
                test_null_safe,
                NULL,
        };

        /* the model's 200,000 rounds take seconds under ASan, past
         * libcheck's default of 4 s on a busy machine */
        const CheckOptions options = { .timeout = 60 };

        return check_run_tests("hashmap", &options, tests);
}
