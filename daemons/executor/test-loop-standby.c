/* The loop's standby thread: a short lending leaves the loop where it is;
 * a long one has the loop run on the standby, which hands it back when the
 * owner reclaims it; never two threads in the loop at once; a loop that
 * ends on the standby waits for its owner, for a bounded time. */
#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check-run.h"
#include "loop-standby.h"

/* The "loop": each turn waits for a byte on a pipe (the wake), or 10 ms. */
typedef struct FakeLoop {
        int pipe[2];
        pthread_t owner;
        atomic_uint turns_elsewhere; /* turns run by another thread than the owner */
        atomic_int in_turn;          /* threads in a turn now */
        atomic_int max_in_turn;
        atomic_bool ended;           /* turns report the loop ended */
        LoopStandby *standby;
        atomic_int reclaimed_in_time; /* -1: not asked; 0/1: wait_reclaim's answer */
} FakeLoop;

static FakeLoop loop;

static bool fake_turn(void *userdata) {
        FakeLoop *l = userdata;
        struct pollfd p = { .fd = l->pipe[0], .events = POLLIN };
        int now = atomic_fetch_add(&l->in_turn, 1) + 1;
        char c;

        if (now > atomic_load(&l->max_in_turn))
                atomic_store(&l->max_in_turn, now);
        if (!pthread_equal(pthread_self(), l->owner))
                atomic_fetch_add(&l->turns_elsewhere, 1);
        if (poll(&p, 1, 10) > 0)
                (void) !read(l->pipe[0], &c, 1);
        atomic_fetch_sub(&l->in_turn, 1);
        if (atomic_load(&l->ended)) {
                atomic_store(&l->reclaimed_in_time, loop_standby_wait_reclaim(l->standby, 50 * 1000));
                return false;
        }
        return true;
}

static void fake_wake(void *userdata) {
        FakeLoop *l = userdata;

        (void) !write(l->pipe[1], "w", 1);
}

static void setup(void) {
        loop = (FakeLoop) { .owner = pthread_self(), .reclaimed_in_time = -1 };
        ck_assert_int_eq(pipe(loop.pipe), 0);
        ck_assert_int_eq(loop_standby_new(fake_turn, fake_wake, &loop, 1000, &loop.standby), 0);
}

static void teardown(void) {
        loop.standby = loop_standby_free(loop.standby);
        close(loop.pipe[0]);
        close(loop.pipe[1]);
}

START_TEST(test_short_lending_stays_home) {
        for (int i = 0; i < 100; i++) {
                loop_standby_lend(loop.standby);
                ck_assert(!loop_standby_reclaim(loop.standby));
        }
        usleep(20 * 1000); /* a timer left armed would fire by now */
        ck_assert_uint_eq(atomic_load(&loop.turns_elsewhere), 0);
}
END_TEST

START_TEST(test_long_lending_runs_the_loop_elsewhere) {
        for (int i = 0; i < 3; i++) {
                loop_standby_lend(loop.standby);
                usleep(30 * 1000);
                ck_assert_uint_ge(atomic_load(&loop.turns_elsewhere), 1);
                ck_assert(loop_standby_reclaim(loop.standby));
                /* back home: nobody runs a turn now */
                ck_assert_int_eq(atomic_load(&loop.in_turn), 0);
                atomic_store(&loop.turns_elsewhere, 0);
                usleep(20 * 1000);
                ck_assert_uint_eq(atomic_load(&loop.turns_elsewhere), 0);
        }
        ck_assert_int_eq(atomic_load(&loop.max_in_turn), 1);
}
END_TEST

START_TEST(test_loop_ending_elsewhere_waits_for_its_owner) {
        atomic_store(&loop.ended, true);
        loop_standby_lend(loop.standby);
        /* the standby's turn finds the loop ended and waits 50 ms for us */
        usleep(150 * 1000);
        ck_assert_int_eq(atomic_load(&loop.reclaimed_in_time), 0);
        /* it waits on, without turning, until we come back */
        ck_assert_int_eq(atomic_load(&loop.in_turn), 0);
        ck_assert(loop_standby_reclaim(loop.standby));
        ck_assert_int_eq(atomic_load(&loop.max_in_turn), 1);
}
END_TEST

START_TEST(test_owner_back_in_time_after_the_end) {
        atomic_store(&loop.ended, true);
        loop_standby_lend(loop.standby);
        usleep(30 * 1000); /* taken, and in a turn (10 ms each) */
        ck_assert(loop_standby_reclaim(loop.standby));
        ck_assert_int_eq(atomic_load(&loop.reclaimed_in_time), 1);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_short_lending_stays_home,
                test_long_lending_runs_the_loop_elsewhere,
                test_loop_ending_elsewhere_waits_for_its_owner,
                test_owner_back_in_time_after_the_end,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 60 };

        return check_run_tests("loop-standby", &options, tests);
}
