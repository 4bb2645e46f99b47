/* Named resources and labels in the master's cluster table: what a worker
 * offers, what an application's executors need, which executor holds which
 * address (docs/resources.md).  Pure: no I/O, called from cluster.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ids.h"
#include "resources.h"
#include "spark.pb-c.h"

typedef struct Worker Worker;
typedef struct App App;
typedef struct ClusterExecutor ClusterExecutor;

/* A registration's view of one named resource: its addresses. */
typedef struct ClusterResourceOffer {
        const char *name;
        const char *const *addresses;
        size_t n_addresses;
} ClusterResourceOffer;

/* An app's need: amount addresses of name for each executor. */
typedef struct ClusterResourceAmount {
        char name[RESOURCE_NAME_MAX + 1];
        int amount;
} ClusterResourceAmount;

/* One named resource of a worker, and who holds each address: the
 * executor (app id and executor id) until its unit is gone, which may be
 * after the master has given the executor up (a killed app's units stop
 * later). */
typedef struct ClusterResource {
        char name[RESOURCE_NAME_MAX + 1];
        char **addresses;
        size_t n_addresses, n_free;
        char (*holder_app)[APP_ID_MAX];  /* "": free */
        int *holder_executor;
        Spark__ResourceAddresses wire;   /* name and addresses, pointing into the above */
} ClusterResource;

/* What an executor was given of one named resource. */
typedef struct ClusterGrant {
        char name[RESOURCE_NAME_MAX + 1];
        char **addresses;
        size_t n_addresses;
        Spark__ResourceAddresses wire;   /* pointing into the above */
} ClusterGrant;

/* Checks a registration's labels and offers (names, addresses, counts,
 * duplicates); 0 or -EINVAL. */
int cluster_offer_check(const char *const *labels, size_t n_labels, const ClusterResourceOffer *offers,
                        size_t n_offers);
/* The same for an app's constraints and amounts. */
int cluster_wants_check(const char *const *constraints, size_t n_constraints, const ClusterResourceAmount *wants,
                        size_t n_wants);

/* Replaces w's labels and resources with a (checked) registration's; holds
 * of addresses still offered are kept.  0 or -ENOMEM (w unchanged). */
int cluster_worker_set_offer(Worker *w, const char *const *labels, size_t n_labels,
                             const ClusterResourceOffer *offers, size_t n_offers);
void cluster_worker_resources_free(Worker *w);

int cluster_app_set_wants(App *a, const char *const *constraints, size_t n_constraints,
                          const ClusterResourceAmount *wants, size_t n_wants);
void cluster_app_wants_free(App *a);

/* How many more executors of a fit on w by its labels and free addresses:
 * 0 if a label is missing or an address short, INT_MAX if a asks for
 * neither. */
int cluster_resource_fit(const Worker *w, const App *a);
/* Gives e (just placed on w) its addresses, the first free ones; -ENOSPC
 * if w has too few (placement checked it has enough). */
int cluster_resource_assign(Worker *w, ClusterExecutor *e);
/* Restore: e was given these addresses on its worker (checked against what
 * the worker offers now; addresses it no longer offers are dropped). */
int cluster_resource_restore(Worker *w, ClusterExecutor *e, const ClusterResourceOffer *grants, size_t n_grants);
/* The unit of app_id/executor_id on w is gone: its addresses are free.
 * Returns how many were freed. */
size_t cluster_resource_release(Worker *w, const char *app_id, int executor_id);
/* After w re-registered: holds of executors it neither reported nor runs
 * for the master are freed (their units are gone), and every live
 * executor's grants are held. */
struct ReportedExecutor;
void cluster_resource_reconcile(Worker *w, const struct ReportedExecutor *reported, size_t n_reported);
void cluster_executor_grants_free(ClusterExecutor *e);

/* The wire's view of a repeated ResourceAddresses / ResourceAmount field,
 * bounded: -E2BIG beyond RESOURCE_KINDS_MAX entries or
 * RESOURCE_ADDRESSES_MAX addresses, -EINVAL for a name too long.  *ret
 * points into v (free() it only). */
int cluster_offers_from_wire(Spark__ResourceAddresses *const *v, size_t n, ClusterResourceOffer **ret);
int cluster_amounts_from_wire(Spark__ResourceAmount *const *v, size_t n, ClusterResourceAmount **ret);

/* Why no worker of the table can take a's next executor, into buf; NULL
 * if some worker can, or a asks for no label and no resource. */
const char *cluster_app_waiting_reason(Worker *const *workers, size_t n_workers, const App *a, char *buf,
                                       size_t size);
