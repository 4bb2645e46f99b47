/* nng-util: the error translation table and the small socket helpers. */
#include <check.h>

#include <nng/nng.h>

#include "check-run.h"
#include "codec.h"
#include "macro.h"
#include "nng-util.h"

START_TEST(test_nng_util) {
        nng_msg *m = NULL;

        ck_assert_int_eq(nng_errno(0), 0);
        ck_assert_int_eq(nng_errno(NNG_ETIMEDOUT), -ETIMEDOUT);
        ck_assert_int_eq(nng_errno(NNG_ECONNREFUSED), -ECONNREFUSED);
        ck_assert_int_eq(nng_errno(NNG_ECLOSED), -ESHUTDOWN);
        ck_assert_int_eq(nng_errno(NNG_ENOMEM), -ENOMEM);
        ck_assert_int_eq(nng_errno(NNG_EINVAL), -EINVAL);
        ck_assert_int_eq(nng_errno(NNG_EMSGSIZE), -EMSGSIZE);
        ck_assert_int_eq(nng_errno(NNG_EADDRINUSE), -EADDRINUSE);
        ck_assert_int_eq(nng_errno(NNG_ECANCELED), -ECANCELED);
        ck_assert_int_eq(nng_errno(NNG_ECONNRESET), -ECONNRESET);
        ck_assert_int_eq(nng_errno(NNG_ECONNSHUT), -ECONNRESET);
        ck_assert_int_eq(nng_errno(NNG_EADDRINVAL), -EINVAL);
        ck_assert_int_eq(nng_errno(NNG_ENOENT), -ENOENT);
        ck_assert_int_eq(nng_errno(NNG_EPROTO), -EPROTO);
        ck_assert_int_eq(nng_errno(NNG_ECRYPTO), -EKEYREJECTED);
        ck_assert_int_eq(nng_errno(NNG_EPEERAUTH), -EKEYREJECTED);
        ck_assert_int_eq(nng_errno(NNG_ESYSERR | EPIPE), -EPIPE);
        ck_assert_int_eq(nng_errno(NNG_ETRANERR | 5), -EIO);
        ck_assert_int_eq(nng_errno(999), -EIO);
        ck_assert_int_eq(nng_errno(-EAGAIN), -EAGAIN);

        ck_assert_int_eq(nng_util_check_url("tcp://127.0.0.1:7077"), 0);
        ck_assert_int_eq(nng_util_check_url("ipc:///run/spark/master.sock"), 0);
        ck_assert_int_eq(nng_util_check_url("tls+tcp://master:7077"), 0);
        ck_assert_int_eq(nng_util_check_url("http://x:1"), -EPROTONOSUPPORT);
        ck_assert_int_eq(nng_util_check_url("no scheme"), -EINVAL);
        ck_assert_int_eq(nng_util_check_url(""), -EINVAL);
        ck_assert_int_eq(nng_util_check_url(NULL), -EINVAL);

        ck_assert_int_eq(nng_util_msg_from_buf("abc", 3, &m), 0);
        ck_assert_uint_eq(nng_msg_len(m), 3);
        nng_msg_free(m);
        {
                Envelope empty = ENVELOPE_INIT;
                ck_assert_int_eq(nng_util_msg_from_envelope(&empty, &m), -EINVAL);
        }
        ck_assert_int_eq(nng_util_remaining_ms(0), 0);
        ck_assert_int_gt(nng_util_remaining_ms(nng_util_now_ms() + 10000), 9000);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_nng_util,
                NULL,
        };

        return check_run_tests("nng-util", NULL, tests);
}
