/* What the cluster model tests (test-cluster-pool.c,
 * test-cluster-wanting.c) build their clusters with: a cluster without
 * effects, workers by number, apps, and a live executor to act on. */
#pragma once

#include <check.h>
#include <stdio.h>

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
