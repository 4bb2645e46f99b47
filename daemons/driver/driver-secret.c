/* The executor secret check (common/executor-secret.h): every
 * RegisterExecutor and every Poll must carry the secret of the executor id
 * it names.  It is checked before anything else in the request is looked
 * at, so that a refused request changes nothing. */
#include "driver.h"
#include "log.h"

int driver_executor_key_init(Driver *d) {
        return executor_key_generate(d->executor_key);
}

bool driver_executor_secret_ok(Driver *d, const DriverExecutor *ex, int executor_id, const ProtobufCBinaryData *given,
                               const char *what) {
        uint8_t expected[EXECUTOR_SECRET_SIZE];
        int r;

        /* A registered executor's was computed once, at its registration. */
        if (ex && ex->id == executor_id)
                r = executor_secret_check(ex->secret, given->data, given->len);
        else {
                r = executor_secret_compute(d->executor_key, d->app_id, executor_id, expected);
                if (r >= 0)
                        r = executor_secret_check(expected, given->data, given->len);
                explicit_bzero(expected, sizeof(expected));
        }
        if (r >= 0)
                return true;

        log_struct(LOG_WARNING,
                   LOG_FIELDS(.app_id = d->app_id, .executor_id = executor_id,
                              .message_id = SPARK_MESSAGE_EXECUTOR_REFUSED),
                   "Refused %s as executor %d of %s: %s executor secret", what, executor_id, d->app_id,
                   given->len == 0 ? "no" : "a wrong");
        return false;
}

int driver_executor_secret_set(Driver *d, DriverExecutor *ex) {
        return executor_secret_compute(d->executor_key, d->app_id, ex->id, ex->secret);
}
