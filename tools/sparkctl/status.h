/* sparkctl status: the master's ClusterState as tables or as one JSON object. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "call.h"

/* How a worker id shows in the tables (see status.c); JSON keeps it whole. */
const char *worker_id_short(const Spark__ClusterState *cs, const char *id);

int status_print_tables(const Spark__ClusterState *cs, FILE *f);
void status_print_json(const Spark__ClusterState *cs, FILE *f);

/* Returns the exit status. */
int run_status(const Daemon *master, bool json, bool all, FILE *out);
