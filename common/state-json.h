/* The JSON of the cluster's and a driver's state, one producer for both
 * `sparkctl ... --json` and the daemons' /api/v1/ (docs/observability.md):
 * the same messages give the same JSON, whoever asks. */
#pragma once

#include "json-writer.h"
#include "spark.pb-c.h"

/* {"master_id":..,"workers":[..],"apps":[..],"executors":[..]} */
void cluster_state_json(Json *j, const Spark__ClusterState *cs);
/* The same with only some of the arrays (/api/v1/workers, ...). */
enum {
        CLUSTER_JSON_WORKERS = 1u << 0,
        CLUSTER_JSON_APPS = 1u << 1,
        CLUSTER_JSON_EXECUTORS = 1u << 2,
        CLUSTER_JSON_ALL = 7u,
};
void cluster_state_json_parts(Json *j, const Spark__ClusterState *cs, unsigned parts);
/* The same parts as members of an object the caller has begun (after its
 * master_id). */
void cluster_state_json_members(Json *j, const Spark__ClusterState *cs, unsigned parts);
/* {"jobs":[..]} */
void job_list_json(Json *j, const Spark__JobList *list);
/* One job's object, as the member key (NULL inside an array or at the top). */
void job_info_json(Json *j, const char *key, const Spark__JobInfo *info);
