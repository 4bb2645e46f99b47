/* The workers' pooled capacity that fair share reads (cluster-pool.h) and
 * the placement view of each worker (worker-table.h): kept as workers
 * register, drain, come back, get lost, and as executors come and go, they
 * always equal what a fresh walk over the workers makes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-run.h"
#include "cluster-internal.h"
#include "log.h"
#include "macro.h"
#include "test-cluster-helpers.h"

static void assert_pool_is_sum(Cluster *c) {
        const ClusterPool *kept = cluster_pool(c);
        ClusterPool sum = cluster_pool_sum(cluster_workers(c));

        ck_assert(cluster_worker_table_ok(c));

        ck_assert_int_eq(kept->cores, sum.cores);
        ck_assert_int_eq(kept->cores_used, sum.cores_used);
        ck_assert_int_eq(kept->memory_mb, sum.memory_mb);
        ck_assert_int_eq(kept->memory_used_mb, sum.memory_used_mb);
        ck_assert_uint_eq(kept->n_offering_resources, sum.n_offering_resources);
        for (size_t s = 0; s < CLUSTER_WORKER_STATES; s++)
                ck_assert_uint_eq(kept->workers_by_state[s], sum.workers_by_state[s]);
}

/* The workers by state, as /metrics reports them. */
static void assert_workers(Cluster *c, size_t alive, size_t lost, size_t draining_or_drained) {
        const size_t *n = cluster_pool(c)->workers_by_state;

        assert_pool_is_sum(c);
        ck_assert_uint_eq(n[SPARK__WORKER_STATE__WORKER_ALIVE], alive);
        ck_assert_uint_eq(n[SPARK__WORKER_STATE__WORKER_LOST], lost);
        ck_assert_uint_eq(n[SPARK__WORKER_STATE__WORKER_DRAINING] + n[SPARK__WORKER_STATE__WORKER_DRAINED],
                          draining_or_drained);
        ck_assert_uint_eq(n[SPARK__WORKER_STATE__WORKER_STATE_UNKNOWN], 0);
}

static void assert_pool(Cluster *c, int64_t cores, int64_t cores_used, int64_t memory_mb, size_t offering) {
        const ClusterPool *p = cluster_pool(c);

        assert_pool_is_sum(c);
        ck_assert_int_eq(p->cores, cores);
        ck_assert_int_eq(p->cores_used, cores_used);
        ck_assert_int_eq(p->memory_mb, memory_mb);
        ck_assert_int_eq(p->memory_used_mb, cores_used * 512);  /* 1-core executors of 512 MiB */
        ck_assert_uint_eq(p->n_offering_resources, offering);
}

/* Some executor of a, not ended; NULL if none. */
START_TEST(test_pool_follows_workers) {
        Cluster *c = new_cluster(false);
        char id[64], ep[64];
        App *a;

        assert_pool(c, 0, 0, 0, 0);
        ck_assert_int_eq(register_worker(c, 1, 4, 4096, false, NULL, 0), 0);
        ck_assert_int_eq(register_worker(c, 2, 2, 2048, true, NULL, 0), 0);
        assert_pool(c, 6, 0, 6144, 1);
        assert_workers(c, 2, 0, 0);

        a = add_app(c, 3, 1, false, 0);
        ck_assert_int_eq(a->n_live_executors, 3);
        assert_pool(c, 6, 3, 6144, 1);

        /* a draining worker takes no executors: out of the pool, and back */
        worker_id(2, id, ep);
        ck_assert_int_eq(cluster_drain_worker(c, id, 0, 0), 0);
        {
                char id1[64];
                worker_id(1, id1, ep);
                assert_pool(c, 4, cluster_worker(c, id1)->cores_used, 4096, 0);
        }
        assert_workers(c, 1, 0, 1);
        ck_assert_int_eq(cluster_undrain_worker(c, id), 0);
        assert_pool(c, 6, 3, 6144, 1);
        assert_workers(c, 2, 0, 0);

        /* an executor that ends gives its core back */
        {
                ClusterExecutor *e = some_live_executor(a, 0);
                ck_assert_int_eq(cluster_executor_state_changed(c, e->worker->id, a->id, e->id,
                                                                SPARK__EXECUTOR_STATE__EXECUTOR_EXITED, "done", 0, 0),
                                 0);
        }
        assert_pool_is_sum(c);

        /* a lost worker leaves it, with its executors */
        cluster_worker_lost(c, cluster_worker(c, id), "test");
        ck_assert_int_eq(cluster_pool(c)->cores, 4);
        ck_assert_uint_eq(cluster_pool(c)->n_offering_resources, 0);
        assert_workers(c, 1, 0, 0); /* and the table: spark_workers_lost_total counts it */

        /* a worker that registers again with other cores counts them */
        ck_assert_int_ge(register_worker(c, 1, 8, 8192, false, NULL, 0), 0);
        ck_assert_int_eq(cluster_pool(c)->cores, 8);
        assert_workers(c, 1, 0, 0);
        cluster_free(c);
}
END_TEST

/* A master restarted from its saved state: the restored workers and the
 * sizes of their restored executors (which may differ from the app's
 * current size) are in the pool. */
START_TEST(test_pool_after_restore) {
        Cluster *c = new_cluster(true);
        char id1[64], id2[64], ep[64];
        WorkerRegistration reg = { id1, "host", ep, "tcp://h:7082", 8, 8192, NULL, 0, NULL, 0 };
        AppRegistration ar = { .app_id = "app-20261129172233-0001", .name = "t", .driver_url = "tcp://d:7091",
                               .cores_per_executor = 1, .executor_memory_mb = 512, .executor_key = test_key,
                               .executor_key_len = sizeof(test_key), .weight = 1 };
        App *a = NULL;

        worker_id(1, id1, ep);
        ck_assert_int_eq(cluster_restore_worker(c, &reg, SPARK__WORKER_STATE__WORKER_ALIVE, 0, 0), 0);
        worker_id(2, id2, ep);
        reg.id = id2;
        ck_assert_int_eq(cluster_restore_worker(c, &reg, SPARK__WORKER_STATE__WORKER_DRAINING, 0, 0), 0);
        ck_assert_int_eq(cluster_restore_app(c, &ar, SPARK__APP_STATE__APP_RUNNING, 3, 2, 0, 0, &a), 0);
        ck_assert_int_eq(cluster_restore_executor(c, a, 1, id1, 3, 1536, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, 0),
                         0);
        ck_assert_int_eq(cluster_restore_executor(c, a, 2, id2, 2, 1024, SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, 0),
                         0);
        /* the draining worker is not in the pool, whatever it holds */
        assert_pool(c, 8, 3, 8192, 0);
        cluster_free(c);
}
END_TEST

/* Every change the master's state machine makes, in a random order many
 * times over: the kept pool never drifts from the sum. */
START_TEST(test_pool_never_drifts) {
        unsigned seed = 20261202;

        for (int round = 0; round < 20; round++) {
                Cluster *c = new_cluster(round % 2 == 0);
                char apps[RANDOM_APPS][APP_ID_MAX] = {};

                for (int step = 0; step < 300; step++) {
                        random_cluster_change(c, &seed, step, apps);
                        cluster_schedule(c);
                        assert_pool_is_sum(c);
                }
                cluster_free(c);
        }
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_pool_follows_workers,
                test_pool_after_restore,
                test_pool_never_drifts,
                NULL,
        };

        log_set_max_level(LOG_ERR);
        return check_run_tests("cluster-pool", NULL, tests);
}
