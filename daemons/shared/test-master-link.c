/* MasterLink's choice of master: a standby's answer is followed, a silent
 * master is left after misses_max calls without an answer, or after one when
 * its connection is known to be gone, and a standby that still names the
 * master just left is not followed back to it. */
#include <check.h>
#include <errno.h>

#include "check-run.h"
#include "endpoint-list.h"
#include "macro.h"
#include "master-link.h"

#define M1 "tcp://127.0.0.1:7001"
#define M2 "tcp://127.0.0.1:7002"
#define M3 "tcp://127.0.0.1:7003"

/* An Error envelope as a master sends it (message is not copied). */
static const Envelope *error_reply(Envelope *env, Spark__Error *err, int code, const char *message) {
        *env = (Envelope) ENVELOPE_INIT;
        *err = (Spark__Error) SPARK__ERROR__INIT;
        err->code = code;
        err->message = (char *) message;
        ENVELOPE_SET(env, ERROR, error, err);
        return env;
}

static const Envelope *standby_naming(Envelope *env, Spark__Error *err, const char *leader) {
        static char msg[ENDPOINT_LIST_URL_MAX + 32];

        snprintf(msg, sizeof(msg), STANDBY_LEADER_PREFIX "%s", leader);
        return error_reply(env, err, -EREMCHG, msg);
}

START_TEST(test_timeouts_without_loss_take_two) {
        MasterLink l;

        ck_assert_int_eq(master_link_init(&l, M1 "," M2), 0);
        ck_assert_str_eq(master_link_url(&l), M1);
        ck_assert(!master_link_update(&l, -ETIMEDOUT, NULL, false));
        ck_assert_str_eq(master_link_url(&l), M1);
        ck_assert(master_link_update(&l, -ETIMEDOUT, NULL, false));
        ck_assert_str_eq(master_link_url(&l), M2);
        master_link_done(&l);
}
END_TEST

START_TEST(test_answer_resets_the_misses) {
        Envelope env = ENVELOPE_INIT;
        Spark__HeartbeatReply hr = SPARK__HEARTBEAT_REPLY__INIT;
        MasterLink l;

        ENVELOPE_SET(&env, HEARTBEAT_REPLY, heartbeat_reply, &hr);
        ck_assert_int_eq(master_link_init(&l, M1 "," M2), 0);
        ck_assert(!master_link_update(&l, -ETIMEDOUT, NULL, false));
        ck_assert(!master_link_update(&l, 0, &env, false));
        ck_assert(!master_link_update(&l, -ETIMEDOUT, NULL, false));
        ck_assert_str_eq(master_link_url(&l), M1);
        master_link_done(&l);
}
END_TEST

START_TEST(test_lost_connection_and_timeout_moves_at_once) {
        MasterLink l;

        ck_assert_int_eq(master_link_init(&l, M1 "," M2 "," M3), 0);
        ck_assert(master_link_update(&l, -ETIMEDOUT, NULL, true));
        ck_assert_str_eq(master_link_url(&l), M2);
        /* a call that failed otherwise, with the connection gone */
        ck_assert(master_link_update(&l, -ECONNRESET, NULL, true));
        ck_assert_str_eq(master_link_url(&l), M3);
        /* round the list */
        ck_assert(master_link_update(&l, -ETIMEDOUT, NULL, true));
        ck_assert_str_eq(master_link_url(&l), M1);
        master_link_done(&l);
}
END_TEST

START_TEST(test_lost_connection_alone_does_not_move) {
        Envelope env = ENVELOPE_INIT, err_env;
        Spark__HeartbeatReply hr = SPARK__HEARTBEAT_REPLY__INIT;
        Spark__Error err;
        MasterLink l;

        ck_assert_int_eq(master_link_init(&l, M1 "," M2), 0);
        /* an answer is an answer, whatever the pipe events said */
        ENVELOPE_SET(&env, HEARTBEAT_REPLY, heartbeat_reply, &hr);
        ck_assert(!master_link_update(&l, 0, &env, true));
        /* so is a refusal, and a suspended leader's -EAGAIN */
        ck_assert(!master_link_update(&l, -EINVAL, error_reply(&err_env, &err, -EINVAL, "bad"), true));
        ck_assert(!master_link_update(&l, -EAGAIN, error_reply(&err_env, &err, -EAGAIN, "leader suspended"), true));
        /* a call cancelled by our own client's end is nobody's miss */
        ck_assert(!master_link_update(&l, -ECANCELED, NULL, true));
        ck_assert_str_eq(master_link_url(&l), M1);
        ck_assert_uint_eq(l.misses, 0);
        master_link_done(&l);
}
END_TEST

START_TEST(test_single_master_never_moves) {
        MasterLink l;

        ck_assert_int_eq(master_link_init(&l, M1), 0);
        for (int i = 0; i < 5; i++)
                ck_assert(!master_link_update(&l, -ETIMEDOUT, NULL, true));
        ck_assert_str_eq(master_link_url(&l), M1);
        master_link_done(&l);
}
END_TEST

START_TEST(test_standby_not_followed_back_to_the_dead_leader) {
        Envelope env;
        Spark__Error err;
        MasterLink l;

        ck_assert_int_eq(master_link_init(&l, M1 "," M2 "," M3), 0);
        /* M1 was killed: one call, its connection gone, and the link moves */
        ck_assert(master_link_update(&l, -ETIMEDOUT, NULL, true));
        ck_assert_str_eq(master_link_url(&l), M2);
        /* M2 still names M1 (its session has not expired): stay, ask again */
        ck_assert(!master_link_update(&l, -EREMCHG, standby_naming(&env, &err, M1), false));
        ck_assert(!master_link_update(&l, -EREMCHG, standby_naming(&env, &err, M1), false));
        ck_assert_str_eq(master_link_url(&l), M2);
        /* then M3 is elected and M2 names it */
        ck_assert(master_link_update(&l, -EREMCHG, standby_naming(&env, &err, M3), false));
        ck_assert_str_eq(master_link_url(&l), M3);
        master_link_done(&l);
}
END_TEST

START_TEST(test_standby_followed_to_the_leader) {
        Envelope env;
        Spark__Error err;
        MasterLink l;

        ck_assert_int_eq(master_link_init(&l, M1 "," M2 "," M3), 0);
        ck_assert(master_link_update(&l, -EREMCHG, standby_naming(&env, &err, M3), false));
        ck_assert_str_eq(master_link_url(&l), M3);
        /* a leader the list does not hold is not dialled: the next */
        ck_assert(master_link_update(&l, -EREMCHG, standby_naming(&env, &err, "tcp://evil:1"), false));
        ck_assert_str_eq(master_link_url(&l), M1);
        /* a standby that knows no leader: the next */
        ck_assert(master_link_update(&l, -EREMCHG, error_reply(&env, &err, -EREMCHG, "standby, no leader elected yet"),
                                     false));
        ck_assert_str_eq(master_link_url(&l), M2);
        master_link_done(&l);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_timeouts_without_loss_take_two,
                test_answer_resets_the_misses,
                test_lost_connection_and_timeout_moves_at_once,
                test_lost_connection_alone_does_not_move,
                test_single_master_never_moves,
                test_standby_not_followed_back_to_the_dead_leader,
                test_standby_followed_to_the_leader,
                NULL,
        };

        return check_run_tests("master-link", NULL, tests);
}
