/* What the cluster model tests (test-cluster-pool.c,
 * test-cluster-wanting.c) build their clusters with: a cluster without
 * effects, workers by number, apps, a live executor to act on, and one
 * random change of the many the master's state machine makes. */
#pragma once

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "cluster-internal.h"
#include "macro.h"

static const uint8_t test_key[EXECUTOR_KEY_SIZE] = { 1, 2, 3 };
static const ClusterEffects no_effects = {};

static inline Cluster *new_cluster(bool fair) {
        ClusterConfig cfg = { .worker_timeout = 3600 * USEC_PER_SEC, .spread_out = true, .max_executor_retries = 3,
                              .fair = fair, .preemption_timeout = USEC_PER_SEC };
        Cluster *c = NULL;

        ck_assert_int_eq(cluster_new(&cfg, &no_effects, NULL, 1795972953, &c), 0);
        return c;
}

static inline void worker_id(int i, char id[static 64], char ep[static 64]) {
        snprintf(id, 64, "worker-20261129172233-host%d-7081", i);
        snprintf(ep, 64, "tcp://h%d:7081", i);
}

/* Registers worker i (again, with its executors, if reported is given); with
 * gpus, it offers two addresses of "gpu". */
static inline int register_worker(Cluster *c, int i, int cores, int64_t memory_mb, bool gpus,
                                  const ReportedExecutor *reported, size_t n_reported) {
        static const char *const addresses[] = { "0", "1" };
        const ClusterResourceOffer gpu = { "gpu", addresses, 2 };
        char id[64], ep[64];
        WorkerRegistration reg = { id, "host", ep, "tcp://h:7082", cores, memory_mb, NULL, 0,
                                   gpus ? &gpu : NULL, gpus ? 1 : 0 };
        bool kill[16];

        ck_assert_uint_le(n_reported, ELEMENTSOF(kill));
        worker_id(i, id, ep);
        return cluster_register_worker(c, &reg, reported, n_reported, 0, kill, NULL);
}

/* An app of 512 MiB executors; elastic: with a limit of initial executors. */
static inline App *add_app(Cluster *c, int max_cores, int cores_per_executor, bool elastic, int initial) {
        AppRegistration reg = { .name = "t", .driver_url = "tcp://d:7091", .max_cores = max_cores,
                                .cores_per_executor = cores_per_executor, .executor_memory_mb = 512,
                                .executor_key = test_key, .executor_key_len = sizeof(test_key), .weight = 1,
                                .dynamic_allocation = elastic, .initial_executors = initial };
        App *a = NULL;

        ck_assert_int_eq(cluster_register_app(c, &reg, 0, &a), 0);
        return a;
}

static inline ClusterExecutor *some_live_executor(App *a, unsigned pick) {
        for (size_t k = 0; k < a->n_executors_allocated; k++) {
                ClusterExecutor *e = a->executors[(k + pick) % a->n_executors_allocated];
                if (e && !executor_state_is_terminal(e->state))
                        return e;
        }
        return NULL;
}

#define RANDOM_APPS 5

/* One change the master makes, picked with seed: workers come, go, drain
 * and beat; apps come, ask, release and go; executors start, fail, are
 * killed and reported by a restarted worker.  apps holds the ids of the
 * apps made here, by slot (the state machine may end an app itself: too
 * many failed executors).  The caller checks what it keeps after each. */
static inline void random_cluster_change(Cluster *c, unsigned *seed, int step, char apps[RANDOM_APPS][APP_ID_MAX]) {
        int w = (int) (rand_r(seed) % 6) + 1;
        App *a = cluster_app(c, apps[rand_r(seed) % RANDOM_APPS]);
        ClusterExecutor *e = a && app_is_live(a) ? some_live_executor(a, (unsigned) rand_r(seed)) : NULL;
        char *slot = apps[step % RANDOM_APPS];
        char id[64], ep[64];

        worker_id(w, id, ep);
        switch (rand_r(seed) % 12) {
        case 0:
                (void) register_worker(c, w, 1 + (int) (rand_r(seed) % 8), 8192, w % 3 == 0, NULL, 0);
                break;
        case 1:
                if (!cluster_app(c, slot) || !app_is_live(cluster_app(c, slot)))
                        snprintf(slot, APP_ID_MAX, "%s",
                                 add_app(c, (int) (rand_r(seed) % 13), 1 + (int) (rand_r(seed) % 3), rand_r(seed) % 2,
                                         (int) (rand_r(seed) % 4))
                                         ->id);
                break;
        case 2:
                if (a)
                        (void) cluster_request_executors(c, a->id, (int) (rand_r(seed) % 6));
                break;
        case 3:
                if (e) {
                        int32_t ids[] = { e->id };
                        int bad;
                        (void) cluster_release_executors(c, a->id, ids, 1, "test", &bad);
                }
                break;
        case 4:
                (void) cluster_drain_worker(c, id, 0, 0);
                break;
        case 5:
                (void) cluster_undrain_worker(c, id);
                break;
        case 6:
                if (cluster_worker(c, id))
                        cluster_worker_lost(c, cluster_worker(c, id), "test");
                break;
        case 7: {
                /* 226: systemd could not start it, which puts the worker in
                 * launch backoff */
                static const int exit_codes[] = { 1, 0, 226 };

                if (e && e->worker)
                        (void) cluster_executor_state_changed(c, e->worker->id, a->id, e->id,
                                                              rand_r(seed) % 2 ? SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING
                                                                               : SPARK__EXECUTOR_STATE__EXECUTOR_FAILED,
                                                              "test", exit_codes[rand_r(seed) % 3], 0);
                break;
        }
        case 8:
                if (e)
                        (void) cluster_kill_executor(c, a->id, e->id, "test");
                break;
        case 9:
                /* a restarted worker reports what it holds */
                if (e && e->worker) {
                        ReportedExecutor r = { a->id, e->id };
                        (void) register_worker(c, w, 1 + (int) (rand_r(seed) % 8), 8192, false, &r, 1);
                }
                break;
        case 10:
                if (a)
                        (void) cluster_remove_app(c, a->id, SPARK__APP_STATE__APP_FINISHED, "test");
                break;
        case 11:
                /* a heartbeat after its backoff ends it */
                (void) cluster_heartbeat(c, id, 100 * USEC_PER_SEC);
                break;
        }
}
