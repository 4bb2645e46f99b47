/* Fair share in the master's state machine (cluster-fair.c), without
 * sockets: placement by weighted DRF, preemption as a drain of executors,
 * no regrowth right after, and FIFO left as it was. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-run.h"
#include "cluster.h"
#include "macro.h"

#define TIMEOUT (2 * USEC_PER_SEC)

typedef struct Recorder {
        int launches, kills, updated_preempting, check_at;
        usec_t check_when;
} Recorder;

static void on_launch(Cluster *c, Worker *w, ClusterExecutor *e, void *ud) {
        (void) c, (void) w, (void) e;
        ((Recorder *) ud)->launches++;
}
static void on_kill(Cluster *c, Worker *w, ClusterExecutor *e, const char *reason, void *ud) {
        (void) c, (void) w, (void) e, (void) reason;
        ((Recorder *) ud)->kills++;
}
static void on_updated(Cluster *c, ClusterExecutor *e, void *ud) {
        (void) c;
        if (e->preempting && !executor_state_is_terminal(e->state))
                ((Recorder *) ud)->updated_preempting++;
}
static void on_check_at(Cluster *c, usec_t when, void *ud) {
        Recorder *r = ud;
        (void) c;
        r->check_at++;
        r->check_when = when;
}

static const ClusterEffects effects = {
        .launch_executor = on_launch,
        .kill_executor = on_kill,
        .executor_updated = on_updated,
        .check_at = on_check_at,
};

static const uint8_t test_key[EXECUTOR_KEY_SIZE] = { 1, 2, 3 };

static Cluster *setup(Recorder *rec, bool fair) {
        ClusterConfig cfg = { .worker_timeout = 3600 * USEC_PER_SEC, .spread_out = true, .max_executor_retries = 3,
                              .fair = fair, .preemption_timeout = TIMEOUT };
        Cluster *c = NULL;

        memset(rec, 0, sizeof(*rec));
        ck_assert_int_eq(cluster_new(&cfg, &effects, rec, 1795972953, &c), 0);
        return c;
}

/* Worker i, host<i>, with cores cores and the named resources of offer. */
static void add_worker_offering(Cluster *c, int i, int cores, const ClusterResourceOffer *offer, usec_t now) {
        char id[64], ep[64];
        WorkerRegistration reg = { .id = id, .host = "host", .endpoint = ep, .events_endpoint = "tcp://h:7082",
                                   .cores = cores, .memory_mb = 65536, .resources = offer, .n_resources = offer ? 1 : 0 };

        snprintf(id, sizeof(id), "worker-20261129172233-host%d-7081", i);
        snprintf(ep, sizeof(ep), "tcp://h%d:7081", i);
        ck_assert_int_eq(cluster_register_worker(c, &reg, NULL, 0, now, NULL, NULL), 0);
}

static void add_worker(Cluster *c, int i, int cores, usec_t now) {
        add_worker_offering(c, i, cores, NULL, now);
}

/* Workers 1 to n, each of cores cores. */
static void add_workers(Cluster *c, int n, int cores, usec_t now) {
        for (int i = 1; i <= n; i++)
                add_worker(c, i, cores, now);
}

static App *add_app(Cluster *c, int max_cores, int cores_per_executor, int weight) {
        AppRegistration reg = { .name = "t", .driver_url = "tcp://d:7091", .max_cores = max_cores,
                                .cores_per_executor = cores_per_executor, .executor_memory_mb = 1024,
                                .executor_key = test_key, .executor_key_len = sizeof(test_key),
                                .weight = weight };
        App *a = NULL;
        ck_assert_int_eq(cluster_register_app(c, &reg, 0, &a), 0);
        return a;
}

/* The worker of a's executor id reports it running since at. */
static void executor_running(Cluster *c, App *a, int id, usec_t at) {
        ClusterExecutor *e = cluster_executor(c, a->id, id);

        ck_assert_int_eq(cluster_executor_state_changed(c, e->worker->id, a->id, id,
                                                        SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, at),
                         0);
}

/* The clock reaches the end of starved's preemption timeout and the
 * master looks again; returns that time. */
static usec_t at_preemption_timeout(Cluster *c, const App *starved, usec_t *ret_next) {
        usec_t now = starved->starved_since + TIMEOUT;

        cluster_check_workers(c, now, ret_next);
        return now;
}

/* The executors of a being taken back end, as their workers report. */
static int end_preempting(Cluster *c, App *a, usec_t now) {
        int n = 0;

        for (size_t i = 0; i < a->n_executors_allocated; i++) {
                ClusterExecutor *e = a->executors[i];
                if (!e || !e->preempting || executor_state_is_terminal(e->state))
                        continue;
                ck_assert_int_eq(cluster_executor_state_changed(c, e->worker->id, a->id, e->id,
                                                                SPARK__EXECUTOR_STATE__EXECUTOR_KILLED,
                                                                "drained: idle", 0, now),
                                 0);
                n++;
        }
        return n;
}

START_TEST(test_weighted_placement) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a = add_app(c, 0, 1, 1), *b = add_app(c, 0, 1, 2), *d = add_app(c, 0, 1, 3);

        /* the apps are there first: DRF divides the cluster when it comes */
        add_workers(c, 2, 6, now_mono_usec());
        ck_assert_int_eq(a->n_live_executors, 2);
        ck_assert_int_eq(b->n_live_executors, 4);
        ck_assert_int_eq(d->n_live_executors, 6);
        ck_assert_int_eq(cluster_app_fair_view(c, a).target, 2);
        ck_assert_int_eq(cluster_app_fair_view(c, d).target, 6);
        ck_assert_int_eq(a->weight, 1);
        ck_assert_int_eq(d->weight, 3);
        cluster_free(c);
}
END_TEST

/* Named resources count in the shares: two workers of 4 cores and 1 gpu;
 * A's executors each take a gpu, so its dominant share is the gpus' (1/2
 * an executor) and DRF gives it 2 executors and B 6, not 4 and 4. */
START_TEST(test_named_resource_share) {
        static const char *const gpu0[] = { "0" };
        ClusterResourceOffer offer = { "gpu", gpu0, 1 };
        ClusterResourceAmount want = { "gpu", 1 };
        AppRegistration areg = { .name = "t", .driver_url = "tcp://d:7091", .cores_per_executor = 1,
                                 .executor_memory_mb = 1024, .executor_key = test_key,
                                 .executor_key_len = sizeof(test_key), .weight = 1, .wants = &want, .n_wants = 1 };
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a = NULL, *b;

        ck_assert_int_eq(cluster_register_app(c, &areg, 0, &a), 0);
        b = add_app(c, 0, 1, 1);
        for (int i = 1; i <= 2; i++)
                add_worker_offering(c, i, 4, &offer, now_mono_usec());
        ck_assert_int_eq(cluster_app_fair_view(c, a).target, 2);
        ck_assert_int_eq(cluster_app_fair_view(c, b).target, 6);
        ck_assert_int_eq(a->n_live_executors, 2);
        ck_assert_int_eq(b->n_live_executors, 6);
        cluster_free(c);
}
END_TEST

/* FIFO: the first app keeps the cluster, the second gets nothing, and
 * nothing is ever taken back. */
START_TEST(test_fifo_unchanged) {
        Recorder rec;
        Cluster *c = setup(&rec, false);
        usec_t now = now_mono_usec();
        App *a, *b;
        usec_t next;

        add_workers(c, 2, 4, now);
        a = add_app(c, 0, 1, 1);
        b = add_app(c, 0, 1, 5);
        ck_assert_int_eq(a->n_live_executors, 8);
        ck_assert_int_eq(b->n_live_executors, 0);
        cluster_check_workers(c, now + 10 * TIMEOUT, &next);
        ck_assert_int_eq(a->n_preempting, 0);
        ck_assert_int_eq(rec.updated_preempting, 0);
        cluster_free(c);
}
END_TEST

START_TEST(test_preemption) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t now = now_mono_usec(), next;
        App *a, *b;

        add_workers(c, 2, 4, now);
        a = add_app(c, 0, 1, 1);
        ck_assert_int_eq(a->n_live_executors, 8);   /* alone: everything */
        b = add_app(c, 0, 1, 1);
        ck_assert_int_eq(b->n_live_executors, 0);
        ck_assert_int_eq(cluster_app_fair_view(c, a).target, 4);
        ck_assert_int_eq(cluster_app_fair_view(c, b).target, 4);
        ck_assert_int_ne(b->starved_since, 0);
        ck_assert_int_eq(rec.check_at, 1);
        ck_assert_uint_eq(rec.check_when, b->starved_since + TIMEOUT);

        /* before the timeout: nothing is taken */
        cluster_check_workers(c, b->starved_since + TIMEOUT - 1, &next);
        ck_assert_int_eq(a->n_preempting, 0);
        ck_assert_uint_eq(next, b->starved_since + TIMEOUT);

        /* at the timeout: four of a's executors drain for b */
        now = at_preemption_timeout(c, b, &next);
        ck_assert_int_eq(a->n_preempting, 4);
        ck_assert_int_eq(rec.updated_preempting, 4);
        ck_assert_int_eq(rec.kills, 0);                     /* gracefully: the drivers release them */
        /* asked again: the four on their way cover b */
        cluster_check_workers(c, now + 1, &next);
        ck_assert_int_eq(a->n_preempting, 4);

        /* a's driver releases them; b gets the cores, a does not */
        ck_assert_int_eq(end_preempting(c, a, now + 2), 4);
        ck_assert_int_eq(a->n_preempting, 0);
        ck_assert_int_eq(a->n_live_executors, 4);
        ck_assert_int_eq(b->n_live_executors, 4);
        ck_assert_int_eq(b->starved_since, 0);
        ck_assert_int_eq(a->retry_count, 0);               /* not failures */
        cluster_free(c);
}
END_TEST

/* An executor taken back and not released is stopped one timeout later. */
START_TEST(test_preemption_deadline) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t now = now_mono_usec(), next;
        App *a, *b;

        add_worker(c, 1, 2, now);
        a = add_app(c, 0, 1, 1);
        b = add_app(c, 0, 1, 1);
        now = at_preemption_timeout(c, b, &next);
        ck_assert_int_eq(a->n_preempting, 1);
        ck_assert_uint_eq(next, now + TIMEOUT);
        cluster_check_workers(c, now + TIMEOUT, &next);
        ck_assert_int_eq(rec.kills, 1);
        cluster_check_workers(c, now + TIMEOUT + 1, &next);
        ck_assert_int_eq(rec.kills, 1);                     /* once */
        cluster_free(c);
}
END_TEST

/* Capacity freed by preemption that the starved app cannot use (its
 * executors need two cores on one worker) is not given straight back to
 * the app it was taken from. */
START_TEST(test_no_regrowth_within_timeout) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t now = now_mono_usec(), next;
        App *a, *b;
        int launches;

        add_workers(c, 2, 4, now);
        a = add_app(c, 0, 1, 1);
        /* running, executors 4 (host1) and 8 (host2) the youngest: they
         * are taken back, one core on each worker */
        for (int id = 1; id <= 8; id++)
                executor_running(c, a, id, now + (usec_t) (id % 4 == 0 ? 100 + id : id));
        b = add_app(c, 2, 2, 1);                     /* one executor of 2 cores */
        ck_assert_int_eq(cluster_app_fair_view(c, b).target, 1);
        ck_assert_int_eq(cluster_app_fair_view(c, a).target, 6);
        now = at_preemption_timeout(c, b, &next);
        ck_assert_int_eq(a->n_preempting, 2);
        launches = rec.launches;
        ck_assert(cluster_executor(c, a->id, 4)->preempting);
        ck_assert(cluster_executor(c, a->id, 8)->preempting);
        ck_assert_int_eq(end_preempting(c, a, now + 1), 2);
        /* the freed cores are on two workers: b's executor fits on
         * neither, and a does not get them back */
        ck_assert_int_eq(b->n_live_executors, 0);
        ck_assert_int_eq(rec.launches, launches);
        ck_assert_int_eq(a->n_live_executors, 6);
        ck_assert_uint_gt(a->regrow_after, now);
        cluster_free(c);
}
END_TEST

START_TEST(test_bad_weight) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        AppRegistration reg = { .name = "t", .driver_url = "tcp://d:7091", .cores_per_executor = 1,
                                .executor_memory_mb = 1024, .executor_key = test_key,
                                .executor_key_len = sizeof(test_key), .weight = -1 };
        App *a = NULL;

        ck_assert_int_eq(cluster_register_app(c, &reg, 0, &a), -EINVAL);
        reg.weight = APP_WEIGHT_MAX + 1;
        ck_assert_int_eq(cluster_register_app(c, &reg, 0, &a), -EINVAL);
        reg.weight = 0;  /* an older driver: 1 */
        ck_assert_int_eq(cluster_register_app(c, &reg, 0, &a), 0);
        ck_assert_int_eq(a->weight, 1);
        cluster_free(c);
}
END_TEST

/* Four running executors on one worker; the driver reports how busy each
 * is.  b's executors take two of them back: the two with the fewest
 * running tasks, not the two youngest as without a report. */
static App *busy_app(Cluster *c, usec_t now, bool report) {
        static const int32_t ids[] = { 1, 2, 3, 4 }, counts[] = { 1, 0, 3, 2 };
        App *a;

        add_worker(c, 1, 8, now);
        a = add_app(c, 0, 2, 1);
        ck_assert_int_eq(a->n_live_executors, 4);
        for (int id = 1; id <= 4; id++)
                executor_running(c, a, id, now + (usec_t) id);
        if (report)
                ck_assert_int_eq(cluster_report_executor_load(c, a->id, ids, counts, 4, NULL), 4);
        return a;
}

/* busy_app() beside an app of one two-core executor that has waited a
 * whole timeout: two of the busy app's four executors are taken back for
 * it, those marked in taken[] (by executor id - 1). */
static void check_taken_for_a_newcomer(bool report, const bool taken[static 4]) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t next;
        App *a = busy_app(c, now_mono_usec(), report), *b = add_app(c, 0, 2, 1);

        ck_assert_int_eq(cluster_app_fair_view(c, a).target, 2);
        at_preemption_timeout(c, b, &next);
        ck_assert_int_eq(a->n_preempting, 2);
        for (int id = 1; id <= 4; id++)
                ck_assert_msg(cluster_executor(c, a->id, id)->preempting == taken[id - 1],
                              "executor %d: taken back %d, expected %d", id,
                              cluster_executor(c, a->id, id)->preempting, taken[id - 1]);
        cluster_free(c);
}

START_TEST(test_preempts_least_busy) {
        /* executor 2 runs no task, executor 1 one: those go */
        check_taken_for_a_newcomer(true, (const bool[]) { true, true, false, false });
}
END_TEST

/* No report (an older driver, or none yet): the youngest go, as before. */
START_TEST(test_preempts_youngest_without_report) {
        check_taken_for_a_newcomer(false, (const bool[]) { false, false, true, true });
}
END_TEST

/* A report is checked whole before anything changes; counts are clamped
 * to the executor's cores. */
START_TEST(test_load_report_checked) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t now = now_mono_usec();
        int32_t ids[8] = { 1, 2, 99 }, counts[8] = { 1, 1, 1 };
        App *a;
        int bad = 0;

        a = busy_app(c, now, true);
        ck_assert_int_eq(cluster_report_executor_load(c, "app-20261129172233-9999", ids, counts, 1, &bad), -ENOENT);
        /* an id not the app's: nothing changes, the id is named */
        ck_assert_int_eq(cluster_report_executor_load(c, a->id, ids, counts, 3, &bad), -ENOENT);
        ck_assert_int_eq(bad, 99);
        ck_assert_int_eq(cluster_executor(c, a->id, 2)->running_tasks, 0);
        ids[2] = -1;
        ck_assert_int_eq(cluster_report_executor_load(c, a->id, ids, counts, 3, &bad), -ENOENT);
        /* a negative count */
        ids[2] = 3;
        counts[2] = -5;
        ck_assert_int_eq(cluster_report_executor_load(c, a->id, ids, counts, 3, &bad), -EINVAL);
        ck_assert_int_eq(bad, 3);
        ck_assert_int_eq(cluster_executor(c, a->id, 2)->running_tasks, 0);
        /* more entries than the app ever had executors */
        for (int i = 0; i < 8; i++)
                ids[i] = 1 + i % 4, counts[i] = 0;
        ck_assert_int_eq(cluster_report_executor_load(c, a->id, ids, counts, 8, &bad), -EINVAL);
        /* clamped to the executor's 2 cores */
        ids[0] = 2;
        counts[0] = 1000000;
        ck_assert_int_eq(cluster_report_executor_load(c, a->id, ids, counts, 1, &bad), 1);
        ck_assert_int_eq(cluster_executor(c, a->id, 2)->running_tasks, 2);
        /* the same again changes nothing */
        ck_assert_int_eq(cluster_report_executor_load(c, a->id, ids, counts, 1, &bad), 0);
        cluster_free(c);
}
END_TEST

/* Marks restored after a master restart: the executor counts as being taken
 * back, nothing more is taken for it, and it is stopped at what was left of
 * its timeout. */
START_TEST(test_restored_marks) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t now = now_mono_usec(), next;
        App *a, *b;
        ClusterExecutor *e;

        a = busy_app(c, now, true);
        b = add_app(c, 0, 2, 1);
        e = cluster_executor(c, a->id, 3);
        cluster_restore_executor_marks(c, e, false, true, TIMEOUT / 2, false, now);
        ck_assert_int_eq(a->n_preempting, 1);
        ck_assert_uint_eq(e->preempt_deadline, now + TIMEOUT / 2);
        /* a restarted master was told b waited a whole timeout already */
        cluster_restore_app_marks(c, b, TIMEOUT, 0, now);
        ck_assert_uint_eq(b->starved_since, now - TIMEOUT);
        cluster_check_workers(c, now, &next);
        /* one more to take: executor 3 covers one of b's two */
        ck_assert_int_eq(a->n_preempting, 2);
        ck_assert(cluster_executor(c, a->id, 2)->preempting);
        ck_assert_int_eq(rec.kills, 0);
        cluster_check_workers(c, now + TIMEOUT / 2, &next);
        ck_assert_int_eq(rec.kills, 1);                     /* executor 3, at its restored deadline */
        ck_assert(e->preempt_killed);
        /* a pause longer than the timeout is cut to it */
        cluster_restore_app_marks(c, a, 0, 100 * TIMEOUT, now);
        ck_assert_uint_eq(a->regrow_after, now + TIMEOUT);
        cluster_free(c);
}
END_TEST

/* While every live app's whole demand fits, a pass looks only at the apps
 * that may take more; what status shows of the rest is worked out when
 * asked, and is what a full pass over every app finds. */
START_TEST(test_all_demand_fits) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t now = now_mono_usec(), next = UINT64_MAX;
        ClusterFairView va, vb;
        App *a, *b, *d, *e;

        add_workers(c, 2, 8, now);
        a = add_app(c, 4, 1, 1);  /* 4 executors of 1 core */
        b = add_app(c, 6, 2, 3);  /* 3 of 2 cores: 10 of the 16 cores in all */
        ck_assert_int_eq(a->n_live_executors, 4);
        ck_assert_int_eq(b->n_live_executors, 3);
        ck_assert(!a->wanting && !b->wanting);
        va = cluster_app_fair_view(c, a);
        vb = cluster_app_fair_view(c, b);
        ck_assert_int_eq(va.target, 4);
        ck_assert_int_eq(vb.target, 3);
        ck_assert_double_eq_tol(va.share, 4.0 / 16, 1e-12);
        ck_assert_double_eq_tol(va.dominant, 4.0 / 16, 1e-12);
        ck_assert_double_eq_tol(vb.share, 6.0 / 16, 1e-12);

        /* the preemption check's full pass stores the same */
        cluster_check_workers(c, now, &next);
        ck_assert_int_eq(a->fair_target, va.target);
        ck_assert_int_eq(b->fair_target, vb.target);
        ck_assert_double_eq_tol(a->fair_share, va.share, 1e-12);
        ck_assert_double_eq_tol(a->fair_dominant, va.dominant, 1e-12);
        ck_assert_double_eq_tol(b->fair_share, vb.share, 1e-12);

        /* apps with no cap: demand exceeds the cluster, DRF divides it (a
         * and b keep theirs: 2 of b's cores weigh as 2/3 of one of a's) */
        d = add_app(c, 0, 1, 1);
        ck_assert_int_eq(d->n_live_executors, 6);
        e = add_app(c, 0, 1, 1);
        ck_assert_int_eq(e->n_live_executors, 0);
        ck_assert_int_eq(cluster_app_fair_view(c, a).target, 4);
        ck_assert_int_eq(cluster_app_fair_view(c, b).target, 3);
        ck_assert_int_eq(cluster_app_fair_view(c, d).target, 3);
        ck_assert_int_eq(cluster_app_fair_view(c, e).target, 3);
        ck_assert_uint_ne(e->starved_since, 0);
        /* an app that may take no more is not starved */
        ck_assert_int_eq(cluster_request_executors(c, e->id, 0), 0);
        ck_assert_uint_eq(e->starved_since, 0);
        cluster_free(c);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_weighted_placement,
                test_fifo_unchanged,
                test_named_resource_share,
                test_preemption,
                test_preemption_deadline,
                test_no_regrowth_within_timeout,
                test_bad_weight,
                test_preempts_least_busy,
                test_preempts_youngest_without_report,
                test_load_report_checked,
                test_restored_marks,
                test_all_demand_fits,
                NULL,
        };

        return check_run_tests("cluster-fair", NULL, tests);
}
