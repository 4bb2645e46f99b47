/* What cluster.c shares with cluster-drain.c and nothing else. */
#pragma once

#include "cluster.h"

const ClusterEffects *cluster_effects(Cluster *c, void **ret_userdata);
/* Placement is due: now, or through fx.schedule_needed. */
void cluster_schedule_soon(Cluster *c);

/* cluster-drain.c: an executor left w (it ended, or moved away). */
void cluster_drain_progress(Cluster *c, Worker *w);
/* Kills what still runs on DRAINING workers past their deadline; lowers
 * *next to the earliest deadline still ahead. */
void cluster_check_drains(Cluster *c, usec_t now, usec_t *next);
