/* sparkctl status: the master's ClusterState as tables or as one JSON object. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "call.h"

/* How a worker id shows in the tables (see status.c); JSON keeps it whole. */
const char *worker_id_short(const Spark__ClusterState *cs, const char *id);
/* Every master of cluster.master and its role (docs/ha.md). */
typedef struct MasterRoleInfo {
        const char *url;
        const char *role;   /* "leader", "standby" or "unreachable" */
        const char *detail; /* e.g. "suspended: no ZooKeeper connection"; may be NULL */
} MasterRoleInfo;

int status_print_tables(const Spark__ClusterState *cs, FILE *f);
void status_print_json(const Spark__ClusterState *cs, FILE *f);
/* The same, with the masters (n may be 0). */
int status_print_tables_masters(const Spark__ClusterState *cs, const MasterRoleInfo *masters, size_t n, FILE *f);
void status_print_json_masters(const Spark__ClusterState *cs, const MasterRoleInfo *masters, size_t n, FILE *f);

/* Returns the exit status. */
int run_status(const Daemon *master, bool json, bool all, FILE *out);
