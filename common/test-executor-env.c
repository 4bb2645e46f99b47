/* The names an app's executor_env may not set (executor-env.c). */
#include <check.h>
#include <string.h>

#include "check-run.h"
#include "executor-env.h"
#include "macro.h"

static bool reserved(const char *name) {
        return executor_env_name_is_reserved(name, strlen(name));
}

START_TEST(test_worker_names) {
        const char *names[] = {
                EXECUTOR_ENV_APP_ID, EXECUTOR_ENV_EXECUTOR_ID, EXECUTOR_ENV_WORKER_ID,
                EXECUTOR_ENV_DRIVER_URL, EXECUTOR_ENV_CORES, EXECUTOR_ENV_MEMORY_MB,
                TLS_CA_FILE_ENV, TLS_CERT_FILE_ENV, TLS_KEY_FILE_ENV,
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                ck_assert_msg(reserved(names[i]), "%s is not reserved", names[i]);
        ck_assert(reserved("SPARK_APP_ID"));
        ck_assert(reserved("SPARK_EXECUTOR_CORES"));
        ck_assert(reserved("SPARK_EXECUTOR_MEMORY_MB"));
        /* the whole prefix: a later TLS setting is the worker's too */
        ck_assert(reserved("SPARK_TLS_"));
        ck_assert(reserved("SPARK_TLS_CRL_FILE"));
        /* the named resources' addresses are the worker's to give */
        ck_assert(reserved("SPARK_RESOURCE_GPU"));
        ck_assert(reserved("SPARK_RESOURCE_"));
        ck_assert(!reserved("SPARK_RESOURCE"));
}
END_TEST

START_TEST(test_other_names) {
        ck_assert(!reserved(""));
        ck_assert(!reserved("PATH"));
        ck_assert(!reserved("SPARK_FAKE_MODE"));  /* SPARK_ alone is not the worker's */
        ck_assert(!reserved("SPARK_"));
        ck_assert(!reserved("SPARK_TLS"));
        ck_assert(!reserved("SPARK_APP_I"));
        ck_assert(!reserved("SPARK_APP_IDX"));
        ck_assert(!reserved("SPARK_EXECUTOR"));
        ck_assert(!reserved("spark_app_id"));     /* names are case-sensitive */
        ck_assert(!reserved("spark_tls_ca_file"));
        ck_assert(!reserved("X_SPARK_APP_ID"));
        ck_assert(!executor_env_name_is_reserved(NULL, 0));
}
END_TEST

/* "NAME=value" with the name's length, as the master and the worker ask. */
START_TEST(test_length) {
        ck_assert(executor_env_name_is_reserved("SPARK_APP_ID=app-1", strlen("SPARK_APP_ID")));
        ck_assert(executor_env_name_is_reserved("SPARK_TLS_KEY_FILE=/k", strlen("SPARK_TLS_KEY_FILE")));
        ck_assert(!executor_env_name_is_reserved("SPARK_APP_ID=app-1", strlen("SPARK_APP")));
        ck_assert(!executor_env_name_is_reserved("SPARK_APP_IDX=1", strlen("SPARK_APP_IDX")));
        ck_assert(!executor_env_name_is_reserved("SPARK_TLS_=1", strlen("SPARK_TLS")));
        /* a name shorter than len (its NUL comes first) is not read beyond */
        ck_assert(!executor_env_name_is_reserved("SPARK_APP", strlen("SPARK_APP_ID")));
        ck_assert(!executor_env_name_is_reserved("SPARK_TLS", strlen("SPARK_TLS_")));
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_worker_names,
                test_other_names,
                test_length,
                NULL,
        };

        return check_run_tests("executor-env", NULL, tests);
}
