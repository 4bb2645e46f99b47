/* The master's history (spark-master(8), "History"): the most recent
 * finished applications and lost workers, kept after they left the live
 * tables so that `sparkctl status --all` and a chargeback can still see
 * them.  Bounded by master.retained_apps and master.retained_workers; kept
 * packed (one protobuf AppInfo or WorkerInfo each), oldest first, and saved
 * in state.pb with the rest of the state. */
#pragma once

#include <stddef.h>

#include "spark.pb-c.h"

typedef struct HistoryList {
        ProtobufCBinaryData *items;   /* packed, oldest first */
        size_t n, allocated;
} HistoryList;

typedef struct History {
        HistoryList apps;     /* Spark__AppInfo */
        HistoryList workers;  /* Spark__WorkerInfo */
} History;

/* Appends a copy; the oldest go beyond max.  -ENOMEM leaves the list as it was. */
int history_add_app(History *h, const Spark__AppInfo *ai, size_t max);
int history_add_worker(History *h, const Spark__WorkerInfo *wi, size_t max);
/* Drops the oldest beyond the limits (after a reload lowered them). */
void history_trim(History *h, size_t max_apps, size_t max_workers);
void history_done(History *h);

/* Unpacked copies, for a reply or the state file: *ret holds n pointers,
 * freed with history_unpacked_free().  An entry that does not unpack (it
 * cannot: we packed it) is left out. */
int history_unpack_apps(const History *h, Spark__AppInfo ***ret, size_t *ret_n);
int history_unpack_workers(const History *h, Spark__WorkerInfo ***ret, size_t *ret_n);
void history_apps_free(Spark__AppInfo **v, size_t n);
void history_workers_free(Spark__WorkerInfo **v, size_t n);

/* A late report of what an executor of a finished application used: added
 * to its entry.  Returns 1 when that was the last executor it waited for
 * (*ret then holds the entry, unpacked: free with
 * spark__app_info__free_unpacked()), 0 when it waits for more or the app is
 * not in the history, -ENOMEM. */
int history_app_usage(History *h, const char *app_id, uint64_t cpu_usage_ns, uint64_t memory_peak_bytes,
                      Spark__AppInfo **ret);
