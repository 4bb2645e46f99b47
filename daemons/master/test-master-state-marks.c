/* The fair-share marks in the master's state file (master-state.c): an
 * executor being taken back, one released by its driver, an app's time
 * starved and its regrowth pause are written and read back, so that a
 * restarted master goes on where it was (docs/DESIGN.md "Fair share"). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "check-run.h"
#include "log.h"
#include "master.h"
#include "rm-rf.h"
#include "test-master-conf.h"

#define TIMEOUT_MS 60000
#define TIMEOUT ((usec_t) TIMEOUT_MS * USEC_PER_MSEC)

static char tmpdir[256];
static const uint8_t test_key[EXECUTOR_KEY_SIZE] = { 7, 7, 7 };

static Master *master_at(const char *name) {
        char settings[128];

        snprintf(settings, sizeof(settings), "http_listen = \"\"; scheduling = \"fair\"; preemption_timeout_ms = %d;",
                 TIMEOUT_MS);
        return test_master_new(tmpdir, name, settings);
}

static App *add_app(Master *m) {
        AppRegistration reg = { .name = "t", .driver_url = "ipc:///nonexistent/d.sock", .cores_per_executor = 1,
                                .executor_memory_mb = 64, .executor_key = test_key,
                                .executor_key_len = sizeof(test_key), .weight = 1 };
        App *a = NULL;

        ck_assert_int_eq(cluster_register_app(m->cluster, &reg, now_mono_usec(), &a), 0);
        while (cluster_schedule_step(m->cluster, 1000))
                ;
        return a;
}

START_TEST(test_marks_round_trip) {
        WorkerRegistration reg = { "worker-20261202000000-h1-1", "h1", "ipc:///nonexistent/w.sock", "", 4, 4096,
                                   NULL, 0, NULL, 0 };
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len = 0, n_exec = 0, n_apps = 0;
        Master *m, *m2;
        App *a, *b, *a2, *b2;
        usec_t now, next, left;
        int32_t one = 1;

        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-master-state-marks.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        m = master_at("m1");
        ck_assert_int_ge(cluster_register_worker(m->cluster, &reg, NULL, 0, now_mono_usec(), NULL, NULL), 0);
        a = add_app(m);
        ck_assert_int_eq(a->n_live_executors, 4);
        for (int id = 1; id <= 4; id++)
                ck_assert_int_eq(cluster_executor_state_changed(m->cluster, reg.id, a->id, id,
                                                                SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0,
                                                                now_mono_usec()),
                                 0);
        /* its driver gives executor 1 back */
        ck_assert_int_eq(cluster_release_executors(m->cluster, a->id, &one, 1, "idle", NULL), 1);
        b = add_app(m);
        ck_assert_int_ne(b->starved_since, 0);
        /* a timeout later, executors of a are taken back for b */
        now = b->starved_since + TIMEOUT;
        cluster_check_workers(m->cluster, now, &next);
        ck_assert_int_eq(a->n_preempting, 2);
        ck_assert(!cluster_executor(m->cluster, a->id, 1)->preempting);   /* released: not taken */
        ck_assert(cluster_executor(m->cluster, a->id, 4)->preempting);
        ck_assert(cluster_executor(m->cluster, a->id, 3)->preempting);
        ck_assert_uint_gt(a->regrow_after, now_mono_usec());

        ck_assert_int_eq(master_state_pack(m, &buf, &len, &n_exec), 0);
        ck_assert_uint_eq(n_exec, 4);

        m2 = master_at("m2");
        now = now_mono_usec();
        ck_assert_int_eq(master_state_restore_packed(m2, buf, len, &n_apps, &n_exec), 0);
        ck_assert_uint_eq(n_apps, 2);
        ck_assert_uint_eq(n_exec, 4);
        a2 = cluster_app(m2->cluster, a->id);
        b2 = cluster_app(m2->cluster, b->id);
        ck_assert_ptr_nonnull(a2);
        ck_assert_ptr_nonnull(b2);
        ck_assert(cluster_executor(m2->cluster, a->id, 1)->released);
        ck_assert(!cluster_executor(m2->cluster, a->id, 2)->released);
        ck_assert(cluster_executor(m2->cluster, a->id, 4)->preempting);
        ck_assert(cluster_executor(m2->cluster, a->id, 3)->preempting);
        ck_assert(!cluster_executor(m2->cluster, a->id, 2)->preempting);
        ck_assert(!cluster_executor(m2->cluster, a->id, 1)->preempting);
        ck_assert_int_eq(a2->n_preempting, 2);
        /* the deadline was a whole timeout off (the test's clock ran
         * ahead): what was left of it, at most a timeout */
        left = cluster_executor(m2->cluster, a->id, 4)->preempt_deadline - now;
        ck_assert_uint_le(left, TIMEOUT + USEC_PER_SEC);
        ck_assert_uint_gt(left, 0);
        /* b was starved already: the restarted master does not start its
         * timeout again */
        ck_assert_uint_ne(b2->starved_since, 0);
        ck_assert_uint_le(b2->starved_since, now);
        ck_assert_uint_gt(a2->regrow_after, now);
        ck_assert_uint_le(a2->regrow_after, now_mono_usec() + TIMEOUT);
        /* nothing more is taken back: those on their way cover b */
        cluster_check_workers(m2->cluster, b2->starved_since + TIMEOUT, &next);
        ck_assert_int_eq(a2->n_preempting, 2);

        master_free(m2);
        master_free(m);
        (void) rm_rf_at(AT_FDCWD, tmpdir);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_marks_round_trip,
                NULL,
        };
        const CheckOptions options = { .timeout = 30 };

        return check_run_tests("master-state-marks", &options, tests);
}
