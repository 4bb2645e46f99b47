/* The master's state machine, driven without sockets. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-run.h"
#include "cluster.h"
#include "log.h"
#include "macro.h"

typedef struct Recorder {
        int launches, kills, added, updated, workers_lost, apps_removed;
        char last_launch_worker[WORKER_ID_MAX];
        int per_worker[2];
        AppState last_removed_state;
        char last_removed_reason[512];
} Recorder;

static void on_launch(Cluster *c, Worker *w, ClusterExecutor *e, void *ud) {
        Recorder *r = ud;
        (void) c, (void) e;
        r->launches++;
        snprintf(r->last_launch_worker, sizeof(r->last_launch_worker), "%s", w->id);
        r->per_worker[strstr(w->id, "host1") ? 0 : 1]++;
}
static void on_kill(Cluster *c, Worker *w, ClusterExecutor *e, const char *reason, void *ud) {
        (void) c, (void) w, (void) e, (void) reason;
        ((Recorder *) ud)->kills++;
}
static void on_added(Cluster *c, ClusterExecutor *e, void *ud) {
        (void) c, (void) e;
        ((Recorder *) ud)->added++;
}
static void on_updated(Cluster *c, ClusterExecutor *e, void *ud) {
        (void) c, (void) e;
        ((Recorder *) ud)->updated++;
}
static void on_worker_lost(Cluster *c, Worker *w, const char *reason, void *ud) {
        (void) c, (void) w, (void) reason;
        ((Recorder *) ud)->workers_lost++;
}
static void on_app_removed(Cluster *c, App *a, void *ud) {
        Recorder *r = ud;
        (void) c;
        r->apps_removed++;
        r->last_removed_state = a->state;
        snprintf(r->last_removed_reason, sizeof(r->last_removed_reason), "%s", a->reason ? a->reason : "");
}

static const ClusterEffects effects = {
        .launch_executor = on_launch,
        .kill_executor = on_kill,
        .executor_added = on_added,
        .executor_updated = on_updated,
        .worker_lost = on_worker_lost,
        .app_removed = on_app_removed,
};

#define W1 "worker-20261129172233-host1-7081"
#define W2 "worker-20261129172233-host2-7081"

static Cluster *setup(Recorder *rec, bool spread) {
        ClusterConfig cfg = { .worker_timeout = 10 * USEC_PER_SEC, .spread_out = spread, .max_executor_retries = 3 };
        Cluster *c = NULL;

        memset(rec, 0, sizeof(*rec));
        ck_assert_int_eq(cluster_new(&cfg, &effects, rec, 1795972953, &c), 0);
        return c;
}

static void add_worker(Cluster *c, const char *id, const char *endpoint, int cores, usec_t now) {
        WorkerRegistration reg = { id, "host", endpoint, "tcp://h:7082", cores, 8192, NULL, 0, NULL, 0 };
        ck_assert_int_eq(cluster_register_worker(c, &reg, NULL, 0, now, NULL, NULL), 0);
}

static const uint8_t test_key[EXECUTOR_KEY_SIZE] = { 1, 2, 3 };

static App *add_app(Cluster *c, int max_cores) {
        AppRegistration reg = { .name = "t", .driver_url = "tcp://d:7091", .max_cores = max_cores,
                                .cores_per_executor = 1, .executor_memory_mb = 1024,
                                .executor_key = test_key, .executor_key_len = sizeof(test_key) };
        App *a = NULL;
        ck_assert_int_eq(cluster_register_app(c, &reg, 0, &a), 0);
        return a;
}

/* add_app(), with the app's id kept in app_id: it outlives an app the
 * test has removed. */
static App *add_app_keep_id(Cluster *c, int max_cores, char app_id[static APP_ID_MAX]) {
        App *a = add_app(c, max_cores);

        snprintf(app_id, APP_ID_MAX, "%s", a->id);
        return a;
}

/* W1 with one core, and an app on it (its id in app_id) whose executors
 * 1 to 3 each start at *t and end a second later as end says, two seconds
 * apart: the app fails after the third (the cluster's
 * max_executor_retries). */
static void fail_app_by_three_starts(Cluster *c, const Recorder *rec, ExecutorState end, const char *reason,
                                     int exit_code, char app_id[static APP_ID_MAX], usec_t *t) {
        add_worker(c, W1, "tcp://h1:7081", 1, 0);
        add_app_keep_id(c, 1, app_id);
        for (int id = 1; id <= 3; id++, *t += 2000) {
                ck_assert_int_eq(rec->apps_removed, 0);
                ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, id, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING,
                                                                "running", 0, *t),
                                 0);
                ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, id, end, reason, exit_code, *t + 1000), 0);
        }
        ck_assert_int_eq(rec->apps_removed, 1);
        ck_assert_int_eq(rec->last_removed_state, SPARK__APP_STATE__APP_FAILED);
        ck_assert_ptr_null(cluster_app(c, app_id));
}

START_TEST(test_spread_placement_and_ids) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a;

        add_worker(c, W1, "tcp://h1:7081", 4, 0);
        add_worker(c, W2, "tcp://h2:7081", 4, 0);
        a = add_app(c, 4);
        ck_assert_str_eq(a->id, "app-20261129172233-0001");
        ck_assert_int_eq(rec.launches, 4);
        ck_assert_int_eq(rec.added, 4);
        ck_assert_int_eq(rec.per_worker[0], 2);
        ck_assert_int_eq(rec.per_worker[1], 2);
        ck_assert_int_eq(a->cores_granted, 4);
        ck_assert_ptr_nonnull(cluster_executor(c, a->id, 1));
        ck_assert_ptr_nonnull(cluster_executor(c, a->id, 4));
        ck_assert_ptr_null(cluster_executor(c, a->id, 5));
        ck_assert_int_eq(cluster_worker(c, W1)->cores_used, 2);
        /* a second app gets the remaining cores */
        App *b = add_app(c, 0);
        ck_assert_str_eq(b->id, "app-20261129172233-0002");
        ck_assert_int_eq(b->cores_granted, 4);
        ck_assert_int_eq(rec.launches, 8);
        cluster_free(c);
}
END_TEST

START_TEST(test_consolidate) {
        Recorder rec;
        Cluster *c = setup(&rec, false);

        add_worker(c, W1, "tcp://h1:7081", 4, 0);
        add_worker(c, W2, "tcp://h2:7081", 4, 0);
        add_app(c, 4);
        ck_assert_int_eq(rec.launches, 4);
        ck_assert(rec.per_worker[0] == 4 || rec.per_worker[1] == 4);
        cluster_free(c);
}
END_TEST

/* Placement looks only at the workers that may have room (cluster.c): on a
 * full cluster of many workers, room that appears anywhere — an executor
 * gone, a new worker, a drain ended — is found. */
START_TEST(test_room_found_on_a_full_cluster) {
        char ids[100][WORKER_ID_MAX], endpoint[64], app_a[APP_ID_MAX];
        const char *where = NULL;
        ClusterExecutor *e = NULL;
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a, *b;

        for (int i = 0; i < 100; i++) {
                snprintf(ids[i], sizeof(ids[i]), "worker-20261129172233-h%d-7081", i);
                snprintf(endpoint, sizeof(endpoint), "tcp://h%d:7081", i);
                add_worker(c, ids[i], endpoint, 2, 0);
        }
        /* all but one core taken; the next app's executor goes there */
        a = add_app_keep_id(c, 199, app_a);
        ck_assert_int_eq(rec.launches, 199);
        for (int i = 0; i < 100; i++)
                if (cluster_worker(c, ids[i])->cores_used == 1)
                        where = ids[i];
        ck_assert_ptr_nonnull(where);
        b = add_app(c, 1);
        ck_assert_int_eq(rec.launches, 200);
        ck_assert_str_eq(rec.last_launch_worker, where);
        ck_assert_int_eq(b->cores_granted, 1);

        /* full: an app more waits */
        (void) add_app(c, 1);
        ck_assert_int_eq(rec.launches, 200);

        /* an executor of the first app fails on worker 57: the waiting app
         * takes that core, or the first app's replacement does */
        for (ClusterExecutor *x = cluster_worker(c, ids[57])->executors; x; x = x->worker_next)
                if (x->app == a)
                        e = x;
        ck_assert_ptr_nonnull(e);
        ck_assert_int_eq(cluster_executor_state_changed(c, ids[57], app_a, e->id, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED,
                                                        "exit-code 3", 3, 0),
                         0);
        ck_assert_int_eq(rec.launches, 201);
        ck_assert_str_eq(rec.last_launch_worker, ids[57]);

        /* a new worker: room there */
        add_worker(c, "worker-20261129172233-new-7081", "tcp://new:7081", 1, 0);
        ck_assert_int_eq(rec.launches, 202);
        ck_assert_str_eq(rec.last_launch_worker, "worker-20261129172233-new-7081");

        /* a drained worker with room takes executors again once undrained */
        add_worker(c, "worker-20261129172233-dr-7081", "tcp://dr:7081", 1, 0);
        ck_assert_int_eq(rec.launches, 202); /* nobody waits */
        ck_assert_int_eq(cluster_drain_worker(c, "worker-20261129172233-dr-7081", 0, 0), 0);
        (void) add_app(c, 1);
        ck_assert_int_eq(rec.launches, 202);
        ck_assert_int_eq(cluster_undrain_worker(c, "worker-20261129172233-dr-7081"), 0);
        ck_assert_int_eq(rec.launches, 203);
        ck_assert_str_eq(rec.last_launch_worker, "worker-20261129172233-dr-7081");
        cluster_free(c);
}
END_TEST

START_TEST(test_failed_executor_replaced_then_app_fails) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a;
        char app_id[APP_ID_MAX];

        add_worker(c, W1, "tcp://h1:7081", 1, 0);
        a = add_app_keep_id(c, 1, app_id);
        ck_assert_int_eq(rec.launches, 1);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, 0), 0);
        ck_assert_int_eq(a->state, SPARK__APP_STATE__APP_RUNNING);
        /* a report from the wrong worker is refused */
        ck_assert_int_eq(cluster_executor_state_changed(c, W2, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "x", 1, 0), -ESTALE);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, 9, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "x", 1, 0), -ENOENT);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, 1, 99, "x", 1, 0), -EINVAL);

        /* failures in a row: replaced twice, the third fails the app */
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "exit-code 3", 3, 0), 0);
        ck_assert_int_eq(rec.launches, 2);
        /* resent report changes nothing */
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "exit-code 3", 3, 0), 0);
        ck_assert_int_eq(rec.launches, 2);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, 2, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "exit-code 3", 3, 0), 0);
        ck_assert_int_eq(rec.launches, 3);
        ck_assert_int_eq(rec.apps_removed, 0);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, app_id, 3, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "signal KILL", 0, 0), 0);
        ck_assert_int_eq(rec.apps_removed, 1);
        ck_assert_int_eq(rec.last_removed_state, SPARK__APP_STATE__APP_FAILED);
        ck_assert_msg(strstr(rec.last_removed_reason, "signal KILL"), "reason: %s", rec.last_removed_reason);
        ck_assert_ptr_null(cluster_app(c, app_id));
        ck_assert_int_eq(cluster_worker(c, W1)->cores_used, 0);
        ck_assert_uint_eq(cluster_n_executors(c), 0);
        cluster_free(c);
}
END_TEST

/* A worker that cannot start executors (a full work_dir: launches refused;
 * systemd failing before exec) is left alone for a while, so the others
 * take the app's executors instead of a launch storm on it. */
START_TEST(test_start_failure_backs_off) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        ClusterExecutor *on_w1 = NULL;
        App *a;
        int launches, id;

        add_worker(c, W1, "tcp://h1:7081", 4, 0);
        add_worker(c, W2, "tcp://h2:7081", 4, 0);
        a = add_app(c, 4);
        for (id = 1; id <= 4; id++) {
                ClusterExecutor *e = cluster_executor(c, a->id, id);
                cluster_executor_state_changed(c, e->worker->id, a->id, id, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING,
                                               "", 0, 0);
                if (streq(e->worker->id, W1))
                        on_w1 = e;
        }
        ck_assert_ptr_nonnull(on_w1);

        /* an executor that ran and crashed: replaced on the same worker, no backoff */
        cluster_executor_state_changed(c, W1, a->id, on_w1->id, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "signal KILL",
                                       137, USEC_PER_SEC);
        ck_assert_int_eq(rec.launches, 5);
        ck_assert_str_eq(rec.last_launch_worker, W1);
        ck_assert_int_eq(cluster_worker(c, W1)->launch_backoff_until, 0);

        /* its replacement is refused: the next one goes to W2 */
        cluster_executor_state_changed(c, W1, a->id, 5, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED,
                                       "launch refused by worker: No space left on device", 0, USEC_PER_SEC);
        ck_assert_int_eq(rec.launches, 6);
        ck_assert_str_eq(rec.last_launch_worker, W2);
        ck_assert_int_eq(cluster_worker(c, W1)->start_failures, 1);

        /* W2 fails before exec too: nowhere to launch until a backoff ends */
        cluster_executor_state_changed(c, W2, a->id, 6, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED,
                                       "start failed: exit-code 200/CHDIR", 200, USEC_PER_SEC);
        launches = rec.launches;
        ck_assert_int_eq(launches, 6);
        ck_assert_int_eq(cluster_heartbeat(c, W1, USEC_PER_SEC + LAUNCH_BACKOFF_MIN_USEC / 2), 0);
        ck_assert_int_eq(rec.launches, launches);
        ck_assert_int_eq(cluster_heartbeat(c, W1, USEC_PER_SEC + LAUNCH_BACKOFF_MIN_USEC), 0);
        ck_assert_int_eq(rec.launches, launches + 1);
        ck_assert_str_eq(rec.last_launch_worker, W1);

        /* failing again doubles the backoff; starting one resets the count */
        cluster_executor_state_changed(c, W1, a->id, 7, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "start failed: x", 0,
                                       3 * USEC_PER_SEC);
        ck_assert_int_eq(cluster_worker(c, W1)->start_failures, 2);
        ck_assert_int_eq(cluster_worker(c, W1)->launch_backoff_until, 3 * USEC_PER_SEC + 2 * LAUNCH_BACKOFF_MIN_USEC);
        ck_assert_int_eq(cluster_heartbeat(c, W1, 6 * USEC_PER_SEC), 0);
        ck_assert_int_eq(rec.launches, launches + 2);
        cluster_executor_state_changed(c, W1, a->id, 8, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0,
                                       6 * USEC_PER_SEC);
        ck_assert_int_eq(cluster_worker(c, W1)->start_failures, 0);
        cluster_free(c);
}
END_TEST

/* A crash-looping executor becomes RUNNING (its unit is active as soon as the
 * process is exec'd) before it fails: that must not restart the count. */
START_TEST(test_crash_loop_through_running) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t t = USEC_PER_SEC;
        char app_id[APP_ID_MAX];
        App *a;

        fail_app_by_three_starts(c, &rec, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "exit-code 3", 3, app_id, &t);
        ck_assert_int_eq(rec.launches, 3);
        ck_assert_msg(strstr(rec.last_removed_reason, "3 executors failed in a row, last: exit-code 3"), "reason: %s",
                      rec.last_removed_reason);

        /* an executor that ran for a while before it failed starts a new count */
        a = add_app_keep_id(c, 1, app_id);
        cluster_executor_state_changed(c, W1, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, t);
        cluster_executor_state_changed(c, W1, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "x", 1, t + 1);
        cluster_executor_state_changed(c, W1, app_id, 2, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "x", 1, t + 2);
        t += 10;
        cluster_executor_state_changed(c, W1, app_id, 3, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, t);
        t += EXECUTOR_STABLE_USEC;
        cluster_executor_state_changed(c, W1, app_id, 3, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "x", 1, t);
        ck_assert_int_eq(a->retry_count, 1);
        cluster_executor_state_changed(c, W1, app_id, 4, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "x", 1, t + 1);
        ck_assert_int_eq(rec.apps_removed, 1);
        cluster_executor_state_changed(c, W1, app_id, 5, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED, "y", 1, t + 2);
        ck_assert_int_eq(rec.apps_removed, 2);
        ck_assert_msg(strstr(rec.last_removed_reason, "last: y"), "reason: %s", rec.last_removed_reason);
        cluster_free(c);
}
END_TEST

START_TEST(test_exit_zero_at_once_is_a_failed_start) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        usec_t t = USEC_PER_SEC;
        char app_id[APP_ID_MAX];
        App *a;

        /* exit 0 right after starting, again and again: not for ever */
        fail_app_by_three_starts(c, &rec, SPARK__EXECUTOR_STATE__EXECUTOR_EXITED, "exit-code 0", 0, app_id, &t);
        ck_assert_msg(strstr(rec.last_removed_reason, "last: exit-code 0"), "reason: %s", rec.last_removed_reason);

        /* one that ran long and then exited 0 is simply replaced */
        a = add_app_keep_id(c, 1, app_id);
        cluster_executor_state_changed(c, W1, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, t);
        t += EXECUTOR_STABLE_USEC;
        cluster_executor_state_changed(c, W1, app_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_EXITED, "exit-code 0", 0, t);
        ck_assert_int_eq(a->retry_count, 0);
        ck_assert_ptr_nonnull(cluster_executor(c, app_id, 2));
        cluster_free(c);
}
END_TEST

START_TEST(test_gone_executor_that_runs_is_killed) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        WorkerRegistration reg = { W1, "host1", "tcp://h1:7081", "tcp://h1:7082", 2, 8192, NULL, 0, NULL, 0 };
        App *a;

        add_worker(c, W1, "tcp://h1:7081", 2, 0);
        a = add_app(c, 1);
        /* the worker restarts before it reports executor 1 (still LAUNCHING) */
        ck_assert_int_eq(cluster_register_worker(c, &reg, NULL, 0, 1, NULL, NULL), 1);
        ck_assert_int_eq(cluster_executor(c, a->id, 1)->state, SPARK__EXECUTOR_STATE__EXECUTOR_LOST);
        ck_assert_int_eq(rec.launches, 2);  /* replaced */
        /* the resent launch started it after all: the master has it stopped */
        ck_assert_int_eq(rec.kills, 0);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, a->id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING,
                                                        "running", 0, 2), 0);
        ck_assert_int_eq(rec.kills, 1);
        ck_assert_int_eq(cluster_executor(c, a->id, 1)->state, SPARK__EXECUTOR_STATE__EXECUTOR_LOST);
        cluster_free(c);
}
END_TEST

START_TEST(test_worker_timeout_replaces_executors) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a;
        usec_t next = 0;

        add_worker(c, W1, "tcp://h1:7081", 2, 0);
        a = add_app(c, 2);
        ck_assert_int_eq(rec.launches, 2);
        add_worker(c, W2, "tcp://h2:7081", 2, 5 * USEC_PER_SEC);
        ck_assert_int_eq(rec.launches, 2);  /* app already has its cores */

        ck_assert_int_eq(cluster_check_workers(c, 9 * USEC_PER_SEC, &next), 0);
        ck_assert(next == 10 * USEC_PER_SEC);
        ck_assert_int_eq(cluster_heartbeat(c, W2, 9 * USEC_PER_SEC), 0);
        ck_assert_int_eq(cluster_check_workers(c, 10 * USEC_PER_SEC, &next), 1);
        ck_assert_int_eq(rec.workers_lost, 1);
        ck_assert_ptr_null(cluster_worker(c, W1));
        ck_assert_int_eq(cluster_executor(c, a->id, 1)->state, SPARK__EXECUTOR_STATE__EXECUTOR_LOST);
        /* replaced on W2 */
        ck_assert_int_eq(rec.launches, 4);
        ck_assert_str_eq(rec.last_launch_worker, W2);
        ck_assert_int_eq(a->cores_granted, 2);
        /* the lost worker must register again */
        ck_assert_int_eq(cluster_heartbeat(c, W1, 11 * USEC_PER_SEC), -ENOENT);
        cluster_free(c);
}
END_TEST

START_TEST(test_reregistration_reconciles) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a;
        WorkerRegistration reg = { W1, "host1", "tcp://h1:7081", "tcp://h1:7082", 2, 8192, NULL, 0, NULL, 0 };
        bool kill[3];

        add_worker(c, W1, "tcp://h1:7081", 2, 0);
        a = add_app(c, 2);
        cluster_executor_state_changed(c, W1, a->id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, 0);
        cluster_executor_state_changed(c, W1, a->id, 2, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, 0);

        /* another host claiming the same id is refused */
        WorkerRegistration dup = reg;
        dup.endpoint = "tcp://h9:7081";
        ck_assert_int_eq(cluster_register_worker(c, &dup, NULL, 0, 0, NULL, NULL), -EEXIST);

        /* restarted worker holds executor 1 and a unit of an unknown app; executor 2 died meanwhile */
        ReportedExecutor held[] = { { a->id, 1 }, { "app-20261129172233-0099", 1 }, { a->id, 7 } };
        ck_assert_int_eq(cluster_register_worker(c, &reg, held, 3, 1, kill, NULL), 1);
        ck_assert(!kill[0]);
        ck_assert(kill[1]);
        ck_assert(kill[2]);
        ck_assert_int_eq(cluster_executor(c, a->id, 1)->state, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING);
        ck_assert_int_eq(cluster_executor(c, a->id, 2)->state, SPARK__EXECUTOR_STATE__EXECUTOR_LOST);
        /* the lost one is replaced, not duplicated: 2 cores granted in all */
        ck_assert_int_eq(a->cores_granted, 2);
        ck_assert_int_eq(cluster_worker(c, W1)->cores_used, 2);
        ck_assert_int_eq(rec.launches, 3);
        cluster_free(c);
}
END_TEST

static void assert_counts_match_walk(Cluster *c);

/* Worker W1 of 4 cores, and app 0007 of 1-core executors of 256 MiB, as
 * a saved state or a registration holds them. */
static const WorkerRegistration w1_registration = { W1, "host1", "tcp://h1:7081", "tcp://h1:7082", 4, 8192,
                                                    NULL, 0, NULL, 0 };
#define APP7 "app-20261129172233-0007"
static AppRegistration app7_registration(int max_cores) {
        return (AppRegistration) { .app_id = APP7, .name = "t", .driver_url = "tcp://d:7091", .max_cores = max_cores,
                                   .cores_per_executor = 1, .executor_memory_mb = 256, .executor_key = test_key,
                                   .executor_key_len = sizeof(test_key) };
}

/* A new leader (or a master restarted from an older state) knows the app
 * but not the executors launched just before: a worker that registers with
 * them keeps those the app wants, as running; the rest are killed, and no
 * launch reuses their ids. */
START_TEST(test_unknown_executors_of_a_known_app_taken_back) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        WorkerRegistration wr = w1_registration;
        AppRegistration ar = app7_registration(2);
        ReportedExecutor held[] = { { APP7, 1 }, { APP7, 2 }, { APP7, 3 }, { "app-20261129172233-0099", 1 },
                                    { APP7, 99999999 } };
        bool kill[5];
        App *a = NULL;

        ck_assert_int_eq(cluster_restore_app(c, &ar, SPARK__APP_STATE__APP_WAITING, 1, INT32_MAX, 0, 0, &a), 0);
        ck_assert_int_eq(cluster_register_worker(c, &wr, held, 5, 0, kill, NULL), 0);
        ck_assert(!kill[0]);
        ck_assert(!kill[1]);
        ck_assert(kill[2]);  /* the app wants 2 (max 2 cores, 1 each) */
        ck_assert(kill[3]);  /* an unknown app's */
        ck_assert(kill[4]);  /* no recent launch: its id would grow the app's table */
        ck_assert_int_eq(cluster_executor(c, a->id, 1)->state, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING);
        ck_assert_int_eq(cluster_executor(c, a->id, 2)->state, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING);
        ck_assert_ptr_null(cluster_executor(c, a->id, 3));
        ck_assert_int_eq(a->state, SPARK__APP_STATE__APP_RUNNING);
        ck_assert_uint_eq(a->n_live_executors, 2);
        ck_assert_int_eq(a->cores_granted, 2);
        ck_assert_int_eq(cluster_worker(c, W1)->cores_used, 2);
        ck_assert_int_eq(cluster_worker(c, W1)->memory_used_mb, 512);
        ck_assert_int_eq(a->next_executor_id, 4);
        ck_assert_int_eq(rec.launches, 0);
        assert_counts_match_walk(c);

        /* one of them ends: its replacement gets a new id, not 3 */
        cluster_executor_state_changed(c, W1, a->id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_EXITED, "", 1, 0);
        cluster_schedule_step(c, 100);
        ck_assert_int_eq(rec.launches, 1);
        ck_assert_ptr_nonnull(cluster_executor(c, a->id, 4));
        cluster_free(c);
}
END_TEST

/* A worker of the restored state is asked to register again, however
 * often it beats, until it does: the state may lack executors it runs
 * (launched just before the master died), which its registration reports
 * and the master takes back, under their own ids.  A launch under way
 * that it does not report yet stays under way: it is being sent again. */
START_TEST(test_restored_worker_registers_again) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        WorkerRegistration wr = w1_registration;
        AppRegistration ar = app7_registration(3);
        ReportedExecutor held[] = { { APP7, 4 }, { APP7, 5 } };
        bool kill[2];
        usec_t next;
        App *a = NULL;

        /* the last save held the worker, the app and a launch of
         * executor 3, not executors 4 and 5 launched after it */
        ck_assert_int_eq(cluster_restore_worker(c, &wr, SPARK__WORKER_STATE__WORKER_ALIVE, 0, 0), 0);
        ck_assert_int_eq(cluster_restore_app(c, &ar, SPARK__APP_STATE__APP_RUNNING, 4, INT32_MAX, 0, 0, &a), 0);
        ck_assert_int_eq(cluster_restore_executor(c, a, 3, W1, 1, 256, SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING, 0), 0);
        ck_assert_int_eq(cluster_heartbeat(c, W1, 1 * USEC_PER_SEC), -ESTALE);
        ck_assert_int_eq(cluster_heartbeat(c, W1, 2 * USEC_PER_SEC), -ESTALE);
        /* heard, though: it is not lost while it beats (restored at 0,
         * a timeout of 10 s) */
        ck_assert_int_eq(cluster_check_workers(c, 11 * USEC_PER_SEC, &next), 0);

        ck_assert_int_eq(cluster_register_worker(c, &wr, held, 2, 3 * USEC_PER_SEC, kill, NULL), 1);
        ck_assert(!kill[0]);
        ck_assert(!kill[1]);
        ck_assert_int_eq(cluster_heartbeat(c, W1, 4 * USEC_PER_SEC), 0);
        ck_assert_int_eq(cluster_executor(c, a->id, 3)->state, SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING);
        ck_assert_int_eq(cluster_executor(c, a->id, 4)->state, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING);
        ck_assert_int_eq(cluster_executor(c, a->id, 5)->state, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING);
        ck_assert_uint_eq(a->n_live_executors, 3);
        ck_assert_int_eq(a->next_executor_id, 6);
        cluster_schedule_step(c, 100);
        ck_assert_int_eq(rec.launches, 0);
        assert_counts_match_walk(c);

        /* registering again later, the worker restarted: a launch it does
         * not hold died with it */
        ck_assert_int_eq(cluster_register_worker(c, &wr, held, 2, 5 * USEC_PER_SEC, kill, NULL), 1);
        ck_assert_int_eq(cluster_executor(c, a->id, 3)->state, SPARK__EXECUTOR_STATE__EXECUTOR_LOST);

        /* one registered anew (not from the state) beats as ever */
        add_worker(c, W2, "tcp://h2:7081", 4, 0);
        ck_assert_int_eq(cluster_heartbeat(c, W2, 6 * USEC_PER_SEC), 0);
        cluster_free(c);
}
END_TEST

START_TEST(test_remove_app_kills_executors) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        char id[APP_ID_MAX];

        add_worker(c, W1, "tcp://h1:7081", 4, 0);
        add_app_keep_id(c, 3, id);
        ck_assert_int_eq(cluster_remove_app(c, id, SPARK__APP_STATE__APP_FINISHED, "driver stopped"), 0);
        ck_assert_int_eq(rec.kills, 3);
        ck_assert_int_eq(rec.apps_removed, 1);
        ck_assert_int_eq(cluster_worker(c, W1)->cores_used, 0);
        ck_assert_int_eq(cluster_remove_app(c, id, SPARK__APP_STATE__APP_FINISHED, ""), -ENOENT);
        cluster_free(c);
}
END_TEST

START_TEST(test_hostile_registrations) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        WorkerRegistration bad[] = {
                { "worker-a/../b", "h", "tcp://h:1", "", 2, 100, NULL, 0, NULL, 0 },
                { W1, "h", "tcp://h:1", "", -1, 100, NULL, 0, NULL, 0 },
                { W1, "h", "tcp://h:1", "", 2, 0, NULL, 0, NULL, 0 },
                { W1, "h", "", "", 2, 100, NULL, 0, NULL, 0 },
        };
        const char *evil_env[] = { "A=1\nExecStart=/bin/evil" };
        const char *bad_name_env[] = { "1A=1" };
        /* what a worker refuses in a unit: the app would fail at every launch */
        const char *reserved_env[] = { "SPARK_APP_ID=app-20261129172233-0009" };
        const char *reserved_env2[] = { "SPARK_EXECUTOR_MEMORY_MB=1" };
        const char *reserved_env3[] = { "SPARK_EXECUTOR_CORES=64" };
        const char *reserved_env4[] = { "SPARK_TLS_CA_FILE=/tmp/mine.pem" };
        const char *control_env[] = { "A=x\001y" };
        const char *bad_utf8_env[] = { "A=\xff\xfe" };
        char long_entry[4200];
        AppRegistration apps[] = {
                { .driver_url = "tcp://d:1", .cores_per_executor = -1, .executor_memory_mb = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = INT64_MAX },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .max_cores = -5 },
                { .driver_url = "", .cores_per_executor = 1, .executor_memory_mb = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = evil_env, .n_env = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = bad_name_env, .n_env = 1 },
                { .app_id = "app-x/..", .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = reserved_env, .n_env = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = reserved_env2, .n_env = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = reserved_env3, .n_env = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = reserved_env4, .n_env = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = control_env, .n_env = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1, .env = bad_utf8_env, .n_env = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1,
                  .env = (const char *[]) { long_entry }, .n_env = 1 },
                { .driver_url = "ipc:///run/d$HOME", .cores_per_executor = 1, .executor_memory_mb = 1 },
                { .driver_url = "tcp://d'x:1", .cores_per_executor = 1, .executor_memory_mb = 1 },
                /* the key: missing, or of another length than 32 bytes */
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1 },
                { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1 },
        };
        size_t n_key_cases = 3;
        const char *fine_env[] = { "SPARK_FAKE_MODE=exit:3", "B=tab\there", "C=gr\xc3\xbc\xc3\x9f" "e", "D=" };
        AppRegistration fine = { .driver_url = "tcp://d:1", .cores_per_executor = 1, .executor_memory_mb = 1,
                                 .env = fine_env, .n_env = ELEMENTSOF(fine_env),
                                 .executor_key = test_key, .executor_key_len = sizeof(test_key) };

        memset(long_entry, 'a', sizeof(long_entry) - 1);
        long_entry[0] = 'L';
        long_entry[1] = '=';
        long_entry[sizeof(long_entry) - 1] = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_int_eq(cluster_register_worker(c, &bad[i], NULL, 0, 0, NULL, NULL), -EINVAL);
        /* each wrong in one way only: a good key but for the last cases */
        for (size_t i = 0; i < ELEMENTSOF(apps) - n_key_cases; i++) {
                apps[i].executor_key = test_key;
                apps[i].executor_key_len = sizeof(test_key);
        }
        apps[ELEMENTSOF(apps) - 2].executor_key = test_key;
        apps[ELEMENTSOF(apps) - 2].executor_key_len = sizeof(test_key) - 1;
        apps[ELEMENTSOF(apps) - 1].executor_key = (const uint8_t[EXECUTOR_KEY_SIZE + 1]) {};
        apps[ELEMENTSOF(apps) - 1].executor_key_len = EXECUTOR_KEY_SIZE + 1;
        for (size_t i = 0; i < ELEMENTSOF(apps); i++)
                ck_assert_int_eq(cluster_register_app(c, &apps[i], 0, NULL), -EINVAL);
        ck_assert_uint_eq(hashmap_size(cluster_workers(c)), 0);
        ck_assert_ptr_null(cluster_apps(c));
        ck_assert_int_eq(cluster_request_executors(c, "app-20261129172233-0001", 1), -ENOENT);
        ck_assert_int_eq(cluster_register_app(c, &fine, 0, NULL), 0);
        cluster_free(c);
}
END_TEST

START_TEST(test_executor_limit) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        App *a;

        add_worker(c, W1, "tcp://h1:7081", 8, 0);
        a = add_app(c, 0);
        ck_assert_int_eq(rec.launches, 8);
        ck_assert_int_eq(cluster_request_executors(c, a->id, 8), 0);
        ck_assert_int_eq(cluster_kill_executor(c, a->id, 1, "asked"), 0);
        ck_assert_int_eq(rec.kills, 1);
        cluster_free(c);
}
END_TEST

/* Elastic executors: an app registered with dynamic allocation starts at
 * its initial count (0 here: nothing placed), grows by RequestExecutors,
 * and a release stops exactly the executors named, which are not replaced;
 * a bad id or another app's executor refuses the whole request. */
START_TEST(test_elastic_release) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        AppRegistration reg = { .name = "e", .driver_url = "tcp://d:7091", .cores_per_executor = 1,
                                .executor_memory_mb = 1024, .executor_key = test_key,
                                .executor_key_len = sizeof(test_key), .dynamic_allocation = true,
                                .initial_executors = 0 };
        const int32_t two[] = { 1, 3 }, bad[] = { 2, 99 }, other[] = { 1 }, again[] = { 3, 1 };
        App *a = NULL, *b;
        int at = -1;

        add_worker(c, W1, "tcp://h1:7081", 8, 0);
        ck_assert_int_eq(cluster_register_app(c, &reg, 0, &a), 0);
        ck_assert(a->dynamic_allocation);
        ck_assert_int_eq(a->executor_limit, 0);
        ck_assert_int_eq(rec.launches, 0);
        ck_assert_int_eq(cluster_request_executors(c, a->id, 4), 0);
        ck_assert_int_eq(rec.launches, 4);
        b = add_app(c, 1);  /* a static app, with executor 1 of its own */
        ck_assert_int_eq(rec.launches, 5);

        /* an unknown id: nothing released, the id named */
        ck_assert_int_eq(cluster_release_executors(c, a->id, bad, 2, "idle", &at), -ENOENT);
        ck_assert_int_eq(at, 99);
        ck_assert_int_eq(rec.kills, 0);
        ck_assert_int_eq(a->executor_limit, 4);
        ck_assert_int_eq(cluster_release_executors(c, "app-20261129172233-0099", two, 2, "idle", &at), -ENOENT);

        ck_assert_int_eq(cluster_release_executors(c, a->id, two, 2, "idle", &at), 2);
        ck_assert_int_eq(rec.kills, 2);
        ck_assert_int_eq(a->executor_limit, 2);
        /* resent: changes nothing */
        ck_assert_int_eq(cluster_release_executors(c, a->id, again, 2, "idle", &at), 0);
        ck_assert_int_eq(rec.kills, 2);
        ck_assert_int_eq(a->executor_limit, 2);
        /* the units end: none is placed in their stead */
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, a->id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED,
                                                        "stopped", 0, 0), 0);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, a->id, 3, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED,
                                                        "stopped", 0, 0), 0);
        ck_assert_int_eq(rec.launches, 5);
        ck_assert_int_eq((int) a->n_live_executors, 2);
        /* the other app's executor 1 is its own: released only by it */
        ck_assert_int_eq(cluster_release_executors(c, b->id, other, 1, "idle", &at), 1);
        ck_assert_int_eq(b->executor_limit, 0);
        ck_assert_int_eq(rec.kills, 3);
        ck_assert_int_eq(cluster_executor(c, a->id, 2)->released, false);
        /* growing again places new ones */
        ck_assert_int_eq(cluster_request_executors(c, a->id, 3), 0);
        ck_assert_int_eq(rec.launches, 6);
        ck_assert_int_eq(cluster_request_executors(c, a->id, -1), -EINVAL);
        cluster_free(c);
}
END_TEST

/* With fx.schedule_needed the cluster places nothing by itself: it asks
 * once, and the caller places in slices of at most N launches, oldest app
 * first. */
static int schedule_requests;

static void on_schedule_needed(Cluster *c, void *ud) {
        (void) c, (void) ud;
        schedule_requests++;
}

START_TEST(test_deferred_placement_in_slices) {
        ClusterConfig cfg = { .worker_timeout = 10 * USEC_PER_SEC, .spread_out = true, .max_executor_retries = 3 };
        ClusterEffects fx = effects;
        Recorder rec = {};
        Cluster *c = NULL;
        App *a, *b;
        int steps = 0;

        schedule_requests = 0;
        fx.schedule_needed = on_schedule_needed;
        ck_assert_int_eq(cluster_new(&cfg, &fx, &rec, 1795972953, &c), 0);
        add_worker(c, W1, "tcp://h1:7081", 8, 0);
        add_worker(c, W2, "tcp://h2:7081", 8, 0);
        ck_assert_int_eq(schedule_requests, 1);   /* asked once, not per change */
        a = add_app(c, 10);
        b = add_app(c, 3);
        ck_assert_int_eq(schedule_requests, 1);
        ck_assert_int_eq(rec.launches, 0);        /* recorded, nothing placed yet */
        ck_assert_int_eq(a->cores_granted, 0);

        /* the first slice goes to the oldest app */
        ck_assert(cluster_schedule_step(c, 4));
        ck_assert_int_eq(rec.launches, 4);
        ck_assert_int_eq(a->cores_granted, 4);
        ck_assert_int_eq(b->cores_granted, 0);
        ck_assert_int_eq(rec.per_worker[0], 2);   /* spread out within the slice */
        ck_assert_int_eq(rec.per_worker[1], 2);
        while (cluster_schedule_step(c, 4))
                ck_assert_int_lt(++steps, 10);
        ck_assert_int_eq(a->cores_granted, 10);
        ck_assert_int_eq(b->cores_granted, 3);
        ck_assert_int_eq(rec.launches, 13);
        ck_assert_int_eq(rec.per_worker[0] + rec.per_worker[1], 13);
        ck_assert_int_le(abs(rec.per_worker[0] - rec.per_worker[1]), 1);

        /* a change after a finished step asks again */
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, a->id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_EXITED, "done",
                                                        0, 20 * USEC_PER_SEC),
                         0);
        ck_assert_int_eq(schedule_requests, 2);
        ck_assert(!cluster_schedule_step(c, 100));
        ck_assert_int_eq(a->cores_granted, 10);   /* replaced */
        ck_assert_int_eq(rec.launches, 14);
        cluster_free(c);
}
END_TEST

/* Drain: nothing new on the worker, its executors flagged (updated), then
 * each one's end brings DRAINED and a replacement elsewhere; the deadline
 * kills what is left; undrain makes it usable again. */
START_TEST(test_drain_worker) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        Worker *w1;
        App *a;

        add_worker(c, W1, "tcp://h1:7081", 2, 0);
        add_worker(c, W2, "tcp://h2:7081", 2, 0);
        a = add_app(c, 2);
        ck_assert_int_eq(rec.per_worker[0], 1);
        ck_assert_int_eq(rec.per_worker[1], 1);
        w1 = cluster_worker(c, W1);
        ck_assert_int_eq(cluster_drain_worker(c, "worker-nosuch", 0, 0), -ENOENT);

        rec.updated = 0;
        ck_assert_int_eq(cluster_drain_worker(c, W1, 5 * USEC_PER_SEC, USEC_PER_SEC), 0);
        ck_assert_int_eq(w1->state, SPARK__WORKER_STATE__WORKER_DRAINING);
        ck_assert(worker_is_draining(w1));
        ck_assert_int_eq(rec.updated, 1);   /* its one executor, flagged */
        ck_assert_int_eq(worker_drain_left_ms(w1, 2 * USEC_PER_SEC), 4000);
        /* heartbeats go on while it drains */
        ck_assert_int_eq(cluster_heartbeat(c, W1, 2 * USEC_PER_SEC), 0);

        /* the driver releases it: the kill goes out, the end comes back */
        ClusterExecutor *e = w1->executors;
        ck_assert_ptr_nonnull(e);
        ck_assert_int_eq(cluster_kill_executor(c, a->id, e->id, "drained: idle"), 0);
        ck_assert_int_eq(rec.kills, 1);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, a->id, e->id, SPARK__EXECUTOR_STATE__EXECUTOR_KILLED,
                                                        "stopped", 0, 3 * USEC_PER_SEC),
                         0);
        ck_assert_int_eq(w1->state, SPARK__WORKER_STATE__WORKER_DRAINED);
        ck_assert_int_eq(worker_drain_left_ms(w1, 3 * USEC_PER_SEC), 0);
        /* replaced on the other worker, nothing on the drained one */
        ck_assert_int_eq(rec.per_worker[0], 1);
        ck_assert_int_eq(rec.per_worker[1], 2);
        ck_assert_int_eq(a->retry_count, 0);
        ck_assert_int_eq(cluster_drain_worker(c, W1, 0, 4 * USEC_PER_SEC), 0);
        ck_assert_int_eq(w1->state, SPARK__WORKER_STATE__WORKER_DRAINED);
        /* a restart of the drained worker keeps it drained */
        WorkerRegistration again = { W1, "host", "tcp://h1:7081", "tcp://h:7082", 2, 8192, NULL, 0, NULL, 0 };
        ck_assert_int_eq(cluster_register_worker(c, &again, NULL, 0, 5 * USEC_PER_SEC, NULL, NULL), 1);
        ck_assert_int_eq(w1->state, SPARK__WORKER_STATE__WORKER_DRAINED);

        /* the other worker, with a deadline: its executors are killed then */
        Worker *w2 = cluster_worker(c, W2);
        usec_t next = 0;
        rec.kills = 0;
        ck_assert_int_eq(cluster_drain_worker(c, W2, 2 * USEC_PER_SEC, 6 * USEC_PER_SEC), 0);
        ck_assert_int_eq(cluster_check_workers(c, 7 * USEC_PER_SEC, &next), 0);
        ck_assert_int_eq(next, 8 * USEC_PER_SEC);
        ck_assert_int_eq(rec.kills, 0);
        ck_assert_int_eq(cluster_heartbeat(c, W1, 8 * USEC_PER_SEC), 0);
        ck_assert_int_eq(cluster_heartbeat(c, W2, 8 * USEC_PER_SEC), 0);
        ck_assert_int_eq(cluster_check_workers(c, 8 * USEC_PER_SEC, &next), 0);
        ck_assert_int_eq(rec.kills, 2);
        ck_assert_int_eq(cluster_check_workers(c, 9 * USEC_PER_SEC, &next), 0);
        ck_assert_int_eq(rec.kills, 2);  /* once */
        ck_assert_int_eq(w2->state, SPARK__WORKER_STATE__WORKER_DRAINING);

        /* undrain the first: the app's executors go there */
        rec.launches = 0;
        ck_assert_int_eq(cluster_undrain_worker(c, W1), 0);
        ck_assert_int_eq(w1->state, SPARK__WORKER_STATE__WORKER_ALIVE);
        while (w2->executors)
                ck_assert_int_eq(cluster_executor_state_changed(c, W2, a->id, w2->executors->id,
                                                                SPARK__EXECUTOR_STATE__EXECUTOR_KILLED, "stopped", 0,
                                                                10 * USEC_PER_SEC),
                                 0);
        ck_assert_int_eq(w2->state, SPARK__WORKER_STATE__WORKER_DRAINED);
        ck_assert_int_eq(rec.launches, 2);
        ck_assert_uint_eq(w1->n_executors, 2);
        cluster_free(c);
}
END_TEST

/* The executors' counts by state that /metrics reads are the cluster's
 * own, kept as executors change: they must stay what a walk over every
 * held app's executors finds. */
static void assert_counts_match_walk(Cluster *c) {
        size_t kept[CLUSTER_EXECUTOR_STATES], walked[CLUSTER_EXECUTOR_STATES] = {};

        for (App *a = cluster_apps(c); a; a = a->next)
                for (size_t k = 0; k < a->n_executors_allocated; k++)
                        if (a->executors[k])
                                walked[a->executors[k]->state]++;
        cluster_executor_counts(c, kept);
        for (size_t s = 0; s < CLUSTER_EXECUTOR_STATES; s++)
                ck_assert_msg(kept[s] == walked[s], "state %zu: kept %zu, walked %zu", s, kept[s], walked[s]);
}

START_TEST(test_executor_counts_follow_changes) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        size_t n[CLUSTER_EXECUTOR_STATES];
        usec_t next = 0;
        App *a, *b;
        char a_id[APP_ID_MAX];

        add_worker(c, W1, "tcp://h1:7081", 3, 0);
        add_worker(c, W2, "tcp://h2:7081", 3, 5 * USEC_PER_SEC);
        a = add_app(c, 4);
        b = add_app(c, 2);
        snprintf(a_id, sizeof(a_id), "%s", a->id);
        cluster_executor_counts(c, n);
        ck_assert_uint_eq(n[SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING], 6);
        assert_counts_match_walk(c);

        for (int id = 1; id <= 4; id++) {
                ClusterExecutor *e = cluster_executor(c, a_id, id);
                ck_assert_int_eq(cluster_executor_state_changed(c, e->worker->id, a_id, id,
                                                                SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, "", 0, 0), 0);
        }
        /* a resent report moves nothing */
        ClusterExecutor *e1 = cluster_executor(c, a_id, 1);
        ck_assert_int_eq(cluster_executor_state_changed(c, e1->worker->id, a_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING,
                                                        "", 0, 0), 0);
        cluster_executor_counts(c, n);
        ck_assert_uint_eq(n[SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING], 4);
        assert_counts_match_walk(c);

        /* one exits, W1 goes silent: its executors are lost and replaced */
        ck_assert_int_eq(cluster_executor_state_changed(c, e1->worker->id, a_id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED,
                                                        "exit-code 1", 1, 0), 0);
        assert_counts_match_walk(c);
        ck_assert_int_eq(cluster_heartbeat(c, W2, 9 * USEC_PER_SEC), 0);
        ck_assert_int_eq(cluster_check_workers(c, 10 * USEC_PER_SEC, &next), 1);
        cluster_executor_counts(c, n);
        ck_assert_uint_gt(n[SPARK__EXECUTOR_STATE__EXECUTOR_LOST], 0);
        assert_counts_match_walk(c);

        /* a removed app's executors, ended or not, leave the counts */
        ck_assert_int_eq(cluster_remove_app(c, a_id, SPARK__APP_STATE__APP_FINISHED, "driver stopped"), 0);
        assert_counts_match_walk(c);
        ck_assert_int_eq(cluster_remove_app(c, b->id, SPARK__APP_STATE__APP_FINISHED, "driver stopped"), 0);
        cluster_executor_counts(c, n);
        for (size_t s = 0; s < CLUSTER_EXECUTOR_STATES; s++)
                ck_assert_uint_eq(n[s], 0);
        cluster_free(c);
}
END_TEST

START_TEST(test_executor_counts_after_restore) {
        Recorder rec;
        Cluster *c = setup(&rec, true);
        WorkerRegistration wr = w1_registration;
        AppRegistration ar = app7_registration(0);
        size_t n[CLUSTER_EXECUTOR_STATES];
        App *a = NULL;

        ck_assert_int_eq(cluster_restore_worker(c, &wr, SPARK__WORKER_STATE__WORKER_ALIVE, 0, 0), 0);
        ck_assert_int_eq(cluster_restore_app(c, &ar, SPARK__APP_STATE__APP_RUNNING, 3, INT32_MAX, 0, 0, &a), 0);
        ck_assert_int_eq(cluster_restore_executor(c, a, 1, W1, 1, 256, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, 0), 0);
        ck_assert_int_eq(cluster_restore_executor(c, a, 2, W1, 1, 256, SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING, 0), 0);
        cluster_executor_counts(c, n);
        ck_assert_uint_eq(n[SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING], 1);
        ck_assert_uint_eq(n[SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING], 1);
        assert_counts_match_walk(c);
        cluster_free(c);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_spread_placement_and_ids,
                test_consolidate,
                test_room_found_on_a_full_cluster,
                test_failed_executor_replaced_then_app_fails,
                test_start_failure_backs_off,
                test_crash_loop_through_running,
                test_exit_zero_at_once_is_a_failed_start,
                test_gone_executor_that_runs_is_killed,
                test_worker_timeout_replaces_executors,
                test_reregistration_reconciles,
                test_unknown_executors_of_a_known_app_taken_back,
                test_restored_worker_registers_again,
                test_remove_app_kills_executors,
                test_hostile_registrations,
                test_executor_limit,
                test_elastic_release,
                test_deferred_placement_in_slices,
                test_drain_worker,
                test_executor_counts_follow_changes,
                test_executor_counts_after_restore,
                NULL,
        };

        /* quiet unless SPARK_LOG_LEVEL asks otherwise */
        log_set_max_level(LOG_ERR);
        log_setup("test-cluster", LOG_TARGET_STDERR);

        return check_run_tests("cluster", NULL, tests);
}
