/* file-syncer.c: syncs run on their own thread and are reported on the
 * loop, in order, each covering every ticket before it; a failed sync is
 * reported as one; freeing waits for what was asked; a minimum interval
 * between syncs gathers the asks that come within it. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check-run.h"
#include "file-syncer.h"
#include "log.h"
#include "time-util.h"

typedef struct Seen {
        uint64_t last;
        int error;
        unsigned calls;
        bool out_of_order;
} Seen;

static void on_done(FileSyncer *s, uint64_t ticket, int error, void *userdata) {
        Seen *seen = userdata;
        (void) s;

        if (ticket <= seen->last)
                seen->out_of_order = true;
        seen->last = ticket;
        seen->error = error;
        seen->calls++;
}

static int temp_file(void) {
        char path[] = "/var/tmp/test-file-syncer.XXXXXX";
        int fd = mkostemp(path, O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        (void) unlink(path);
        return fd;
}

static void run_until(sd_event *e, Seen *seen, uint64_t ticket) {
        usec_t end = now_mono_usec() + 10 * USEC_PER_SEC;

        while (seen->last < ticket && now_mono_usec() < end)
                ck_assert_int_ge(sd_event_run(e, 100 * USEC_PER_MSEC), 0);
        ck_assert_uint_ge(seen->last, ticket);
}

START_TEST(test_sync_reported_on_loop) {
        sd_event *e = NULL;
        FileSyncer *s = NULL;
        Seen seen = {};
        uint64_t t1, t2, t3;
        int fd = temp_file();

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(file_syncer_new(e, on_done, &seen, &s), 0);
        ck_assert_int_eq(write(fd, "a", 1), 1);
        ck_assert_int_eq(file_syncer_request(s, fd, &t1), 0);
        ck_assert_uint_eq(t1, 1);
        /* reported on the loop, never from the request */
        ck_assert_uint_eq(seen.calls, 0);
        run_until(e, &seen, t1);
        ck_assert_int_eq(seen.error, 0);
        ck_assert_uint_eq(file_syncer_completed(s), seen.last);

        /* asks in a row: the last ticket is reported, maybe with fewer calls */
        ck_assert_int_eq(file_syncer_request(s, fd, &t2), 0);
        ck_assert_int_eq(file_syncer_request(s, fd, &t3), 0);
        ck_assert_uint_gt(t3, t2);
        ck_assert_uint_eq(file_syncer_requested(s), t3);
        run_until(e, &seen, t3);
        ck_assert_uint_eq(seen.last, t3);
        ck_assert_uint_le(seen.calls, 3);
        ck_assert(!seen.out_of_order);

        file_syncer_free(s);
        sd_event_unref(e);
        close(fd);
}
END_TEST

START_TEST(test_failed_sync_reported) {
        sd_event *e = NULL;
        FileSyncer *s = NULL;
        Seen seen = {};
        uint64_t t;
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(file_syncer_new(e, on_done, &seen, &s), 0);
        ck_assert_int_eq(file_syncer_request(s, -1, &t), -EINVAL);
        /* a pipe cannot be synced */
        ck_assert_int_eq(file_syncer_request(s, p[1], &t), 0);
        run_until(e, &seen, t);
        ck_assert_int_eq(seen.error, -EINVAL);
        file_syncer_free(s);
        sd_event_unref(e);
        close(p[0]);
        close(p[1]);
}
END_TEST

START_TEST(test_free_waits_and_reports) {
        sd_event *e = NULL;
        FileSyncer *s = NULL;
        Seen seen = {};
        uint64_t t;
        int fd = temp_file();

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(file_syncer_new(e, on_done, &seen, &s), 0);
        ck_assert_int_eq(write(fd, "b", 1), 1);
        ck_assert_int_eq(file_syncer_request(s, fd, &t), 0);
        file_syncer_free(s);
        ck_assert_uint_eq(seen.last, t);
        ck_assert_int_eq(seen.error, 0);
        sd_event_unref(e);
        close(fd);
}
END_TEST

/* With a minimum interval, a sync asked right after another waits for the
 * interval to pass, and what is asked meanwhile joins that one sync. */
START_TEST(test_min_interval) {
        sd_event *e = NULL;
        FileSyncer *s = NULL;
        Seen seen = {};
        uint64_t t1, t2, t3, t4;
        unsigned calls;
        usec_t after_first;
        int fd = temp_file();

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(file_syncer_new(e, on_done, &seen, &s), 0);
        file_syncer_set_min_interval(s, 200 * USEC_PER_MSEC);
        ck_assert_int_eq(write(fd, "c", 1), 1);
        ck_assert_int_eq(file_syncer_request(s, fd, &t1), 0);
        run_until(e, &seen, t1);
        after_first = now_mono_usec();
        calls = seen.calls;

        ck_assert_int_eq(file_syncer_request(s, fd, &t2), 0);
        ck_assert_int_eq(file_syncer_request(s, fd, &t3), 0);
        ck_assert_int_eq(file_syncer_request(s, fd, &t4), 0);
        run_until(e, &seen, t4);
        ck_assert_uint_ge(now_mono_usec() - after_first, 150 * USEC_PER_MSEC);
        ck_assert_uint_eq(seen.calls, calls + 1);
        ck_assert_uint_eq(seen.last, t4);
        ck_assert_int_eq(seen.error, 0);
        (void) t2, (void) t3;

        file_syncer_free(s);
        sd_event_unref(e);
        close(fd);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_sync_reported_on_loop,
                test_failed_sync_reported,
                test_free_waits_and_reports,
                test_min_interval,
                NULL,
        };
        const CheckOptions options = { .timeout = 30 };

        return check_run_tests("file-syncer", &options, tests);
}
