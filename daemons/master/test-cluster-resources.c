/* Labels and named resources in the master's state machine, without
 * sockets: placement by constraints and free addresses, one executor per
 * address, addresses freed only when the worker reports the unit gone,
 * re-registration, restore and the waiting reason (cluster-resources.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-run.h"
#include "cluster.h"
#include "macro.h"

typedef struct Recorder {
        int launches, kills;
        char addresses[32][64];   /* "worker:gpu=0,1" of each launch */
} Recorder;

static void on_launch(Cluster *c, Worker *w, ClusterExecutor *e, void *ud) {
        Recorder *r = ud;
        size_t n = 0;
        char *buf;

        (void) c;
        ck_assert_int_lt(r->launches, 32);
        buf = r->addresses[r->launches++];
        n = (size_t) snprintf(buf, 64, "%s:", strstr(w->id, "host1") ? "w1" : "w2");
        for (size_t i = 0; i < e->n_grants; i++) {
                n += (size_t) snprintf(buf + n, 64 - n, "%s=", e->grants[i].name);
                for (size_t k = 0; k < e->grants[i].n_addresses; k++)
                        n += (size_t) snprintf(buf + n, 64 - n, "%s%s", k ? "," : "", e->grants[i].addresses[k]);
        }
}

static void on_kill(Cluster *c, Worker *w, ClusterExecutor *e, const char *reason, void *ud) {
        (void) c, (void) w, (void) e, (void) reason;
        ((Recorder *) ud)->kills++;
}

static const ClusterEffects effects = {
        .launch_executor = on_launch,
        .kill_executor = on_kill,
};

#define W1 "worker-20261129172233-host1-7081"
#define W2 "worker-20261129172233-host2-7081"

static Cluster *setup(Recorder *rec) {
        ClusterConfig cfg = { .worker_timeout = 10 * USEC_PER_SEC, .spread_out = true, .max_executor_retries = 3 };
        Cluster *c = NULL;

        memset(rec, 0, sizeof(*rec));
        ck_assert_int_eq(cluster_new(&cfg, &effects, rec, 1795972953, &c), 0);
        return c;
}

static const char *const gpus[] = { "0", "1", "2" };

static int add_worker(Cluster *c, const char *id, const char *endpoint, const char *label, size_t n_gpus,
                      const ReportedExecutor *reported, size_t n_reported) {
        const char *labels[] = { label };
        ClusterResourceOffer offer = { "gpu", gpus, n_gpus };
        WorkerRegistration reg = {
                .id = id, .host = "host", .endpoint = endpoint, .events_endpoint = "tcp://h:7082", .cores = 8,
                .memory_mb = 8192, .labels = labels, .n_labels = label ? 1 : 0, .resources = &offer,
                .n_resources = n_gpus ? 1 : 0,
        };
        bool kill[8] = {};

        return cluster_register_worker(c, &reg, reported, n_reported, 0, kill, NULL);
}

static const uint8_t test_key[EXECUTOR_KEY_SIZE] = { 1, 2, 3 };

static int add_app(Cluster *c, const char *constraint, int gpu, App **ret) {
        const char *constraints[] = { constraint };
        ClusterResourceAmount want = { "gpu", gpu };
        AppRegistration reg = {
                .name = "t", .driver_url = "tcp://d:7091", .max_cores = 0, .cores_per_executor = 1,
                .executor_memory_mb = 256, .executor_key = test_key, .executor_key_len = sizeof(test_key),
                .constraints = constraints, .n_constraints = constraint ? 1 : 0, .wants = &want,
                .n_wants = gpu ? 1 : 0,
        };

        return cluster_register_app(c, &reg, 0, ret);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(a, b);
}

START_TEST(test_constraints_and_addresses) {
        Recorder rec;
        Cluster *c = setup(&rec);
        char why[256];
        App *a;

        ck_assert_int_eq(add_worker(c, W1, "tcp://h1:7081", "ssd", 2, NULL, 0), 0);
        ck_assert_int_eq(add_worker(c, W2, "tcp://h2:7081", NULL, 3, NULL, 0), 0);
        /* only on the labelled worker, one executor per free gpu, distinct */
        ck_assert_int_eq(add_app(c, "ssd", 1, &a), 0);
        ck_assert_int_eq(rec.launches, 2);
        qsort(rec.addresses, 2, sizeof(rec.addresses[0]), cmp_str);
        ck_assert_str_eq(rec.addresses[0], "w1:gpu=0");
        ck_assert_str_eq(rec.addresses[1], "w1:gpu=1");
        ck_assert_int_eq(cluster_worker(c, W1)->resources[0].n_free, 0);
        ck_assert_str_eq(cluster_app_waiting_reason(NULL, 0, a, why, sizeof(why)), "no worker carries the labels ssd");

        /* the master gives an executor up: its address stays held until the
         * worker says its unit is gone */
        ck_assert_int_eq(cluster_remove_app(c, a->id, SPARK__APP_STATE__APP_FINISHED, "done"), 0);
        ck_assert_int_eq(rec.kills, 2);
        ck_assert_int_eq(cluster_worker(c, W1)->resources[0].n_free, 0);
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, "app-20261129172233-0001", 1,
                                                       SPARK__EXECUTOR_STATE__EXECUTOR_KILLED, "stopped", 0, 0),
                         -ENOENT);
        ck_assert_int_eq(cluster_worker(c, W1)->resources[0].n_free, 1);
        /* a report from another worker frees nothing there */
        ck_assert_int_eq(cluster_executor_state_changed(c, W2, "app-20261129172233-0001", 2,
                                                       SPARK__EXECUTOR_STATE__EXECUTOR_KILLED, "stopped", 0, 0),
                         -ENOENT);
        ck_assert_int_eq(cluster_worker(c, W1)->resources[0].n_free, 1);
        cluster_free(c);
}
END_TEST

START_TEST(test_two_per_executor) {
        Recorder rec;
        Cluster *c = setup(&rec);
        ClusterExecutor *e;
        App *a;

        ck_assert_int_eq(add_worker(c, W1, "tcp://h1:7081", NULL, 3, NULL, 0), 0);
        ck_assert_int_eq(add_app(c, NULL, 2, &a), 0);
        /* 3 addresses, 2 each: one executor */
        ck_assert_int_eq(rec.launches, 1);
        ck_assert_str_eq(rec.addresses[0], "w1:gpu=0,1");
        e = cluster_executor(c, a->id, 1);
        ck_assert_uint_eq(e->n_grants, 1);
        ck_assert_ptr_nonnull(e->grant_ptrs);
        ck_assert_str_eq(e->grant_ptrs[0]->name, "gpu");
        ck_assert_uint_eq(e->grant_ptrs[0]->n_addresses, 2);

        /* its end frees both; the next executor takes them */
        ck_assert_int_eq(cluster_executor_state_changed(c, W1, a->id, 1, SPARK__EXECUTOR_STATE__EXECUTOR_FAILED,
                                                       "crashed", 1, 0),
                         0);
        ck_assert_int_eq(rec.launches, 2);
        ck_assert_str_eq(rec.addresses[1], "w1:gpu=0,1");
        cluster_free(c);
}
END_TEST

START_TEST(test_waiting_reason) {
        Recorder rec;
        Cluster *c = setup(&rec);
        Worker *ws[2];
        char why[256];
        App *a, *b, *d;

        ck_assert_int_eq(add_worker(c, W1, "tcp://h1:7081", "ssd", 1, NULL, 0), 0);
        ws[0] = cluster_worker(c, W1);
        ck_assert_int_eq(add_app(c, "nvme", 0, &a), 0);
        ck_assert_int_eq(rec.launches, 0);
        ck_assert_str_eq(cluster_app_waiting_reason(ws, 1, a, why, sizeof(why)), "no worker carries the labels nvme");
        ck_assert_int_eq(add_app(c, "ssd", 2, &b), 0);
        ck_assert_int_eq(rec.launches, 0);
        ck_assert_str_eq(cluster_app_waiting_reason(ws, 1, b, why, sizeof(why)),
                         "no worker with its labels offers 2 gpu per executor");
        ck_assert_int_eq(add_app(c, NULL, 1, &d), 0);
        ck_assert_int_eq(rec.launches, 1);
        /* the one gpu is held: another such app waits for it */
        ck_assert_int_eq(add_app(c, NULL, 1, &a), 0);
        ck_assert_int_eq(rec.launches, 1);
        ck_assert_str_eq(cluster_app_waiting_reason(ws, 1, a, why, sizeof(why)),
                         "waiting for free addresses of its resources");

        /* a worker with the label comes: the waiting app is placed */
        ck_assert_int_eq(add_worker(c, W2, "tcp://h2:7081", "nvme", 0, NULL, 0), 0);
        ck_assert_int_ge(rec.launches, 2);
        cluster_free(c);
}
END_TEST

START_TEST(test_reregister_and_restore) {
        Recorder rec;
        Cluster *c = setup(&rec);
        ReportedExecutor held = { "app-20261129172233-0001", 1 };
        ClusterResourceOffer grant = { "gpu", gpus + 1, 1 };
        ClusterExecutor *e;
        App *a;

        ck_assert_int_eq(add_worker(c, W1, "tcp://h1:7081", NULL, 2, NULL, 0), 0);
        ck_assert_int_eq(add_app(c, NULL, 1, &a), 0);
        ck_assert_int_eq(rec.launches, 2);
        /* the worker restarts holding executor 1 only: executor 2's unit is
         * gone and its address free, then taken by a new executor */
        ck_assert_int_eq(add_worker(c, W1, "tcp://h1:7081", NULL, 2, &held, 1), 1);
        ck_assert_int_eq(rec.launches, 3);
        ck_assert_int_eq(cluster_worker(c, W1)->resources[0].n_free, 0);

        /* restore: an executor's addresses are held again */
        cluster_free(c);
        c = setup(&rec);
        {
                WorkerRegistration reg = { .id = W1, .host = "host", .endpoint = "tcp://h1:7081",
                                           .events_endpoint = "tcp://h:7082", .cores = 8, .memory_mb = 8192,
                                           .resources = &(ClusterResourceOffer) { "gpu", gpus, 2 },
                                           .n_resources = 1 };
                ClusterResourceAmount want = { "gpu", 1 };
                AppRegistration ar = { .app_id = "app-20261129172233-0001", .name = "t",
                                       .driver_url = "tcp://d:7091", .cores_per_executor = 1,
                                       .executor_memory_mb = 256, .executor_key = test_key,
                                       .executor_key_len = sizeof(test_key), .wants = &want, .n_wants = 1 };

                ck_assert_int_eq(cluster_restore_worker(c, &reg, SPARK__WORKER_STATE__WORKER_ALIVE, 0, 0), 0);
                ck_assert_int_eq(cluster_restore_app(c, &ar, SPARK__APP_STATE__APP_RUNNING, 2, INT32_MAX, 0, 0, &a),
                                 0);
                ck_assert_int_eq(cluster_restore_executor(c, a, 1, W1, 1, 256,
                                                          SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, 0),
                                 0);
                e = cluster_executor(c, a->id, 1);
                ck_assert_int_eq(cluster_resource_restore(e->worker, e, &grant, 1), 0);
        }
        ck_assert_int_eq(cluster_worker(c, W1)->resources[0].n_free, 1);
        cluster_schedule(c);
        ck_assert_int_eq(rec.launches, 1);
        ck_assert_str_eq(rec.addresses[0], "w1:gpu=0");
        cluster_free(c);
}
END_TEST

START_TEST(test_hostile_registrations) {
        Recorder rec;
        Cluster *c = setup(&rec);
        const char *bad_labels[] = { "a b" };
        const char *dup[] = { "0", "0" };
        const char *bad_addr[] = { "0,1" };
        ClusterResourceOffer offers[2] = { { "gpu", dup, 2 }, { "gpu", gpus, 1 } };
        WorkerRegistration reg = { .id = W1, .host = "host", .endpoint = "tcp://h1:7081",
                                   .events_endpoint = "tcp://h:7082", .cores = 8, .memory_mb = 8192 };
        ClusterResourceAmount want = { "GPU", 1 };
        App *a;

        reg.labels = bad_labels, reg.n_labels = 1;
        ck_assert_int_eq(cluster_register_worker(c, &reg, NULL, 0, 0, NULL, NULL), -EINVAL);
        reg.n_labels = 0;
        reg.resources = offers, reg.n_resources = 1;
        ck_assert_int_eq(cluster_register_worker(c, &reg, NULL, 0, 0, NULL, NULL), -EINVAL);
        offers[0].addresses = bad_addr, offers[0].n_addresses = 1;
        ck_assert_int_eq(cluster_register_worker(c, &reg, NULL, 0, 0, NULL, NULL), -EINVAL);
        offers[0].addresses = gpus, offers[0].n_addresses = 1;
        reg.n_resources = 2; /* the same name twice */
        ck_assert_int_eq(cluster_register_worker(c, &reg, NULL, 0, 0, NULL, NULL), -EINVAL);
        ck_assert_ptr_null(cluster_worker(c, W1));

        ck_assert_int_eq(add_app(c, "a b", 0, &a), -EINVAL);
        ck_assert_int_eq(add_app(c, NULL, 65, &a), -EINVAL);
        ck_assert_int_eq(add_app(c, NULL, -1, &a), -EINVAL);
        {
                AppRegistration ar = { .name = "t", .driver_url = "tcp://d:7091", .cores_per_executor = 1,
                                       .executor_memory_mb = 256, .executor_key = test_key,
                                       .executor_key_len = sizeof(test_key), .wants = &want, .n_wants = 1 };
                ck_assert_int_eq(cluster_register_app(c, &ar, 0, &a), -EINVAL);
        }
        ck_assert_ptr_null(cluster_apps(c));
        cluster_free(c);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_constraints_and_addresses,
                test_two_per_executor,
                test_waiting_reason,
                test_reregister_and_restore,
                test_hostile_registrations,
                NULL,
        };

        return check_run_tests("cluster-resources", NULL, tests);
}
