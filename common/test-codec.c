/* Codec: round trips and every kind of bad input. */
#include <check.h>

#include "check-run.h"
#include "codec.h"

static void encode_heartbeat(const char *id, void **buf, size_t *len) {
        Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
        Envelope env = ENVELOPE_INIT;

        hb.worker_id = (char *) id;
        ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);
        ck_assert_int_eq(envelope_encode(&env, buf, len), 0);
}

START_TEST(test_round_trip) {
        _cleanup_free_ void *buf = NULL;
        size_t len;
        Envelope *env = NULL;

        encode_heartbeat("worker-20261129172233-host-7081", &buf, &len);
        ck_assert_int_eq(envelope_decode(buf, len, SPARK_MAX_MESSAGE_BYTES, &env), 0);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_HEARTBEAT);
        ck_assert_str_eq(env->heartbeat->worker_id, "worker-20261129172233-host-7081");
        ck_assert_str_eq(envelope_body_name(env), "heartbeat");
        envelope_free(env);
}
END_TEST

START_TEST(test_nested_round_trip) {
        Spark__RegisterWorker rw = SPARK__REGISTER_WORKER__INIT;
        Spark__ExecutorInfo e1 = SPARK__EXECUTOR_INFO__INIT, *execs[1] = { &e1 };
        Envelope env = ENVELOPE_INIT, *out = NULL;
        _cleanup_free_ void *buf = NULL;
        size_t len;

        rw.worker_id = (char *) "w";
        rw.cores = 8;
        rw.memory_mb = 1LL << 40;
        e1.app_id = (char *) "app-20261129172233-0001";
        e1.executor_id = 3;
        e1.state = SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING;
        rw.n_executors = 1;
        rw.executors = execs;
        ENVELOPE_SET(&env, REGISTER_WORKER, register_worker, &rw);
        ck_assert_int_eq(envelope_encode(&env, &buf, &len), 0);
        ck_assert_int_eq(envelope_decode(buf, len, SPARK_MAX_MESSAGE_BYTES, &out), 0);
        ck_assert_int_eq(out->register_worker->cores, 8);
        ck_assert(out->register_worker->memory_mb == 1LL << 40);
        ck_assert_uint_eq(out->register_worker->n_executors, 1);
        ck_assert_int_eq(out->register_worker->executors[0]->executor_id, 3);
        envelope_free(out);
}
END_TEST

START_TEST(test_every_truncation_rejected_or_consistent) {
        _cleanup_free_ void *buf = NULL;
        size_t len;

        encode_heartbeat("worker-20261129172233-host-7081", &buf, &len);
        for (size_t l = 0; l < len; l++) {
                Envelope *env = NULL;
                int r = envelope_decode(buf, l, SPARK_MAX_MESSAGE_BYTES, &env);
                /* a prefix is either malformed or lacks the version/body */
                ck_assert_msg(r < 0, "truncation to %zu bytes accepted", l);
        }
}
END_TEST

START_TEST(test_garbage) {
        static const uint8_t junk[][8] = {
                { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
                { 0x0a, 0x7f, 0x01, 0x02, 0x03, 0, 0, 0 },          /* length past the end */
                { 0x08, 0x01, 0xa2, 0x01, 0x05, 0x0a, 0x01, 0x41 },  /* body length past end */
        };
        for (size_t i = 0; i < ELEMENTSOF(junk); i++) {
                Envelope *env = NULL;
                ck_assert_int_eq(envelope_decode(junk[i], sizeof(junk[i]), 1024, &env), -EBADMSG);
                ck_assert_ptr_null(env);
        }
}
END_TEST

START_TEST(test_oversized) {
        _cleanup_free_ void *buf = NULL;
        size_t len;
        Envelope *env = NULL;

        encode_heartbeat("w", &buf, &len);
        ck_assert_int_eq(envelope_decode(buf, len, len - 1, &env), -EMSGSIZE);
        ck_assert_int_eq(envelope_decode(buf, len, len, &env), 0);
        envelope_free(env);
}
END_TEST

START_TEST(test_wrong_version) {
        /* version = 2, ack = {} */
        static const uint8_t v2[] = { 0x08, 0x02, 0x52, 0x00 };
        static const uint8_t v1[] = { 0x08, 0x01, 0x52, 0x00 };
        Envelope *env = NULL;

        ck_assert_int_eq(envelope_decode(v2, sizeof(v2), 1024, &env), -EPROTONOSUPPORT);
        ck_assert_int_eq(envelope_decode(v1, sizeof(v1), 1024, &env), 0);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ACK);
        envelope_free(env);
}
END_TEST

START_TEST(test_unknown_type_and_unknown_fields) {
        /* version 1 and field 999 (an unknown body from a newer peer) */
        static const uint8_t unknown_body[] = { 0x08, 0x01, 0xba, 0x3e, 0x00 };
        /* version 1, ack, and an unknown varint field 15 = 1: ignored */
        static const uint8_t extra_field[] = { 0x08, 0x01, 0x52, 0x00, 0x78, 0x01 };
        static const uint8_t no_body[] = { 0x08, 0x01 };
        Envelope *env = NULL;

        ck_assert_int_eq(envelope_decode(unknown_body, sizeof(unknown_body), 1024, &env), -ENOMSG);
        ck_assert_int_eq(envelope_decode(no_body, sizeof(no_body), 1024, &env), -ENOMSG);
        ck_assert_int_eq(envelope_decode(extra_field, sizeof(extra_field), 1024, &env), 0);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_ACK);
        envelope_free(env);
}
END_TEST

START_TEST(test_encode_requires_body) {
        Envelope env = ENVELOPE_INIT;
        void *buf = NULL;
        size_t len;

        ck_assert_int_eq(envelope_encode(&env, &buf, &len), -EINVAL);
}
END_TEST

START_TEST(test_error_envelope) {
        ErrorEnvelope e;
        _cleanup_free_ void *buf = NULL;
        size_t len;
        Envelope *out = NULL;

        error_envelope_init(&e, -ENOENT, "unknown app '%s'", "app-x");
        ck_assert_int_eq(envelope_encode(&e.env, &buf, &len), 0);
        ck_assert_int_eq(envelope_decode(buf, len, 1024, &out), 0);
        ck_assert_int_eq(out->error->code, -ENOENT);
        ck_assert_str_eq(out->error->message, "unknown app 'app-x'");
        envelope_free(out);
}
END_TEST

START_TEST(test_wire_names) {
        ck_assert(wire_name_is_valid("app-20261129172233-0001", false));
        ck_assert(wire_name_is_valid("worker-1.example.com:7081", false));
        ck_assert(!wire_name_is_valid("", false));
        ck_assert(wire_name_is_valid("", true));
        ck_assert(!wire_name_is_valid("a/b", false));
        ck_assert(!wire_name_is_valid("..", false));
        ck_assert(!wire_name_is_valid("a b", false));
        ck_assert(!wire_name_is_valid("x;rm", false));
        ck_assert(!wire_name_is_valid("evil\n", false));
        char big[SPARK_MAX_NAME_LEN + 2];
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        ck_assert(!wire_name_is_valid(big, false));
        big[SPARK_MAX_NAME_LEN] = 0;
        ck_assert(wire_name_is_valid(big, false));
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_round_trip,
                test_nested_round_trip,
                test_every_truncation_rejected_or_consistent,
                test_garbage,
                test_oversized,
                test_wrong_version,
                test_unknown_type_and_unknown_fields,
                test_encode_requires_body,
                test_error_envelope,
                test_wire_names,
                NULL,
        };

        return check_run_tests("codec", NULL, tests);
}
