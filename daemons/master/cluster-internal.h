/* What cluster.c shares with cluster-drain.c and nothing else. */
#pragma once

#include "cluster.h"

const ClusterEffects *cluster_effects(Cluster *c, void **ret_userdata);
const ClusterConfig *cluster_config(Cluster *c);
/* The workers' pooled capacity (cluster-pool.h, cluster_pool()) and
 * placement view (worker-table.h) are kept as workers change: after a
 * change of a worker's state, size, use or launch backoff outside
 * cluster.c, call cluster_worker_changed(). */
void cluster_worker_changed(Cluster *c, Worker *w);
/* After a change outside cluster.c to what says whether an app may take
 * more executors (its executor limit, state, cap or live executors):
 * keeps the list a placement pass walks (cluster-wanting.h) and the sums
 * of what the apps want (cluster-fair-demand.h). */
void cluster_app_demand_changed(Cluster *c, App *a);
/* Whether that list holds exactly the apps that want more, oldest first. */
bool cluster_apps_wanting_ok(Cluster *c);
/* The head of that list, linked by wanting_next. */
App *cluster_apps_wanting(Cluster *c);
/* Whether every live app's whole demand fits in the workers' pooled
 * capacity, from the sums kept with that list (cluster-fair-demand.h). */
bool cluster_fair_demand_fits(Cluster *c);
/* Whether both match the workers as they are (worker_table_matches()). */
bool cluster_worker_table_ok(Cluster *c);
/* Placement is due: now, or through fx.schedule_needed. */
void cluster_schedule_soon(Cluster *c);

/* Places at most budget executors of a on the workers of the placement
 * table, whose scratch cluster_schedule_step() has made room in; returns
 * how many it placed. */
int cluster_schedule_app(Cluster *c, App *a, int budget);

/* cluster-fair.c (docs/DESIGN.md "Fair share"): placement by weighted DRF,
 * as cluster_schedule_step() (true: stopped at budget); and the preemption
 * check, which lowers *next to its next deadline. */
bool cluster_fair_schedule(Cluster *c, int budget);
void cluster_fair_check(Cluster *c, usec_t now, usec_t *next);

/* cluster-drain.c: an executor left w (it ended, or moved away). */
void cluster_drain_progress(Cluster *c, Worker *w);
/* Kills what still runs on DRAINING workers past their deadline; lowers
 * *next to the earliest deadline still ahead. */
void cluster_check_drains(Cluster *c, usec_t now, usec_t *next);
