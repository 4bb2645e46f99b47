/* See cluster-resources.h.  An address is held by (app id, executor id)
 * rather than by a pointer: the hold outlives the executor's record when
 * the master gives an executor up before its worker says the unit is gone
 * (an application removed, its units still stopping). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cluster-resources.h"
#include "macro.h"

static char **strv_free_n(char **l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                free(l[i]);
        free(l);
        return NULL;
}

static char **strv_dup_n(const char *const *l, size_t n) {
        char **c = calloc(n + 1, sizeof(char *));

        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(l[i])))
                        return strv_free_n(c, i);
        return c;
}

int cluster_offer_check(const char *const *labels, size_t n_labels, const ClusterResourceOffer *offers,
                        size_t n_offers) {
        if (n_labels > LABELS_MAX || n_offers > RESOURCE_KINDS_MAX || (n_labels && !labels) || (n_offers && !offers))
                return -EINVAL;
        for (size_t i = 0; i < n_labels; i++)
                if (!resource_label_is_valid(labels[i]))
                        return -EINVAL;
        for (size_t i = 0; i < n_offers; i++) {
                const ClusterResourceOffer *o = offers + i;

                if (!resource_name_is_valid(o->name) || o->n_addresses > RESOURCE_ADDRESSES_MAX ||
                    (o->n_addresses && !o->addresses))
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (streq(offers[j].name, o->name))
                                return -EINVAL;
                for (size_t k = 0; k < o->n_addresses; k++) {
                        if (!resource_address_is_valid(o->addresses[k]))
                                return -EINVAL;
                        for (size_t j = 0; j < k; j++)
                                if (streq(o->addresses[j], o->addresses[k]))
                                        return -EINVAL;
                }
        }
        return 0;
}

int cluster_wants_check(const char *const *constraints, size_t n_constraints, const ClusterResourceAmount *wants,
                        size_t n_wants) {
        if (n_constraints > LABELS_MAX || n_wants > RESOURCE_KINDS_MAX || (n_constraints && !constraints) ||
            (n_wants && !wants))
                return -EINVAL;
        for (size_t i = 0; i < n_constraints; i++)
                if (!resource_label_is_valid(constraints[i]))
                        return -EINVAL;
        for (size_t i = 0; i < n_wants; i++) {
                if (!resource_name_is_valid(wants[i].name) || wants[i].amount < 1 ||
                    wants[i].amount > RESOURCE_AMOUNT_MAX)
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (streq(wants[j].name, wants[i].name))
                                return -EINVAL;
        }
        return 0;
}

static void resource_done(ClusterResource *r) {
        strv_free_n(r->addresses, r->n_addresses);
        free(r->holder_app);
        free(r->holder_executor);
        *r = (ClusterResource) {};
}

static void resources_free(ClusterResource *r, size_t n) {
        for (size_t i = 0; r && i < n; i++)
                resource_done(r + i);
        free(r);
}

void cluster_worker_resources_free(Worker *w) {
        free(w->resource_ptrs);
        w->resource_ptrs = NULL;
        resources_free(w->resources, w->n_resources);
        w->resources = NULL;
        w->n_resources = 0;
        w->labels = strv_free_n(w->labels, w->n_labels);
        w->n_labels = 0;
}

static ClusterResource *worker_resource(const Worker *w, const char *name) {
        for (size_t i = 0; i < w->n_resources; i++)
                if (streq(w->resources[i].name, name))
                        return w->resources + i;
        return NULL;
}

static ssize_t resource_address_index(const ClusterResource *r, const char *address) {
        for (size_t i = 0; i < r->n_addresses; i++)
                if (streq(r->addresses[i], address))
                        return (ssize_t) i;
        return -1;
}

static void hold(ClusterResource *r, size_t i, const char *app_id, int executor_id) {
        if (r->holder_app[i][0] == '\0')
                r->n_free--;
        snprintf(r->holder_app[i], APP_ID_MAX, "%s", app_id);
        r->holder_executor[i] = executor_id;
}

static void unhold(ClusterResource *r, size_t i) {
        if (r->holder_app[i][0] != '\0')
                r->n_free++;
        r->holder_app[i][0] = '\0';
        r->holder_executor[i] = 0;
}

int cluster_worker_set_offer(Worker *w, const char *const *labels, size_t n_labels,
                             const ClusterResourceOffer *offers, size_t n_offers) {
        ClusterResource *res = NULL;
        Spark__ResourceAddresses **ptrs;
        char **l = NULL;

        if (cluster_offer_check(labels, n_labels, offers, n_offers) < 0)
                return -EINVAL;
        l = strv_dup_n(labels, n_labels);
        if (!l)
                return -ENOMEM;
        ptrs = calloc(n_offers + 1, sizeof(*ptrs));
        if (!ptrs)
                goto oom;
        if (n_offers > 0) {
                res = calloc(n_offers, sizeof(*res));
                if (!res)
                        goto oom;
        }
        for (size_t i = 0; i < n_offers; i++) {
                ClusterResource *r = res + i;
                const ClusterResource *old = worker_resource(w, offers[i].name);

                snprintf(r->name, sizeof(r->name), "%s", offers[i].name);
                r->addresses = strv_dup_n(offers[i].addresses, offers[i].n_addresses);
                r->holder_app = calloc(offers[i].n_addresses + 1, sizeof(*r->holder_app));
                r->holder_executor = calloc(offers[i].n_addresses + 1, sizeof(*r->holder_executor));
                if (!r->addresses || !r->holder_app || !r->holder_executor) {
                        resources_free(res, i + 1);
                        res = NULL;
                        goto oom;
                }
                r->n_addresses = r->n_free = offers[i].n_addresses;
                spark__resource_addresses__init(&r->wire);
                r->wire.name = r->name;
                r->wire.addresses = r->addresses;
                r->wire.n_addresses = r->n_addresses;
                ptrs[i] = &r->wire;
                /* an address held before stays held: its unit may run */
                for (size_t k = 0; old && k < r->n_addresses; k++) {
                        ssize_t o = resource_address_index(old, r->addresses[k]);
                        if (o >= 0 && old->holder_app[o][0] != '\0')
                                hold(r, k, old->holder_app[o], old->holder_executor[o]);
                }
        }
        cluster_worker_resources_free(w);
        w->labels = l;
        w->n_labels = n_labels;
        w->resources = res;
        w->n_resources = n_offers;
        w->resource_ptrs = ptrs;
        return 0;
oom:
        free(ptrs);
        strv_free_n(l, n_labels);
        return -ENOMEM;
}

void cluster_app_wants_free(App *a) {
        a->constraints = strv_free_n(a->constraints, a->n_constraints);
        a->n_constraints = 0;
        free(a->wants);
        free(a->wants_wire);
        free(a->wants_ptrs);
        a->wants = NULL;
        a->wants_wire = NULL;
        a->wants_ptrs = NULL;
        a->n_wants = 0;
}

int cluster_app_set_wants(App *a, const char *const *constraints, size_t n_constraints,
                          const ClusterResourceAmount *wants, size_t n_wants) {
        ClusterResourceAmount *w = NULL;
        Spark__ResourceAmount *wire = NULL, **ptrs = NULL;
        char **c;

        if (cluster_wants_check(constraints, n_constraints, wants, n_wants) < 0)
                return -EINVAL;
        c = strv_dup_n(constraints, n_constraints);
        if (!c)
                return -ENOMEM;
        if (n_wants > 0) {
                w = calloc(n_wants, sizeof(*w));
                if (!w) {
                        strv_free_n(c, n_constraints);
                        return -ENOMEM;
                }
                memcpy(w, wants, n_wants * sizeof(*w));
                wire = calloc(n_wants, sizeof(*wire));
                ptrs = calloc(n_wants + 1, sizeof(*ptrs));
                if (!wire || !ptrs) {
                        free(wire);
                        free(ptrs);
                        free(w);
                        strv_free_n(c, n_constraints);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < n_wants; i++) {
                        spark__resource_amount__init(&wire[i]);
                        wire[i].name = w[i].name;
                        wire[i].amount = w[i].amount;
                        ptrs[i] = &wire[i];
                }
        }
        cluster_app_wants_free(a);
        a->wants_wire = wire;
        a->wants_ptrs = ptrs;
        a->constraints = c;
        a->n_constraints = n_constraints;
        a->wants = w;
        a->n_wants = n_wants;
        return 0;
}

static bool worker_has_label(const Worker *w, const char *label) {
        for (size_t i = 0; i < w->n_labels; i++)
                if (streq(w->labels[i], label))
                        return true;
        return false;
}

static bool worker_has_labels(const Worker *w, const App *a) {
        for (size_t i = 0; i < a->n_constraints; i++)
                if (!worker_has_label(w, a->constraints[i]))
                        return false;
        return true;
}

int cluster_resource_fit(const Worker *w, const App *a) {
        int fit = INT_MAX;

        if (!worker_has_labels(w, a))
                return 0;
        for (size_t i = 0; i < a->n_wants; i++) {
                const ClusterResource *r = worker_resource(w, a->wants[i].name);
                int n = r ? (int) (r->n_free / (size_t) a->wants[i].amount) : 0;

                fit = MIN(fit, n);
        }
        return fit;
}

void cluster_executor_grants_free(ClusterExecutor *e) {
        for (size_t i = 0; i < e->n_grants; i++)
                strv_free_n(e->grants[i].addresses, e->grants[i].n_addresses);
        free(e->grant_ptrs);
        e->grant_ptrs = NULL;
        free(e->grants);
        e->grants = NULL;
        e->n_grants = 0;
}

/* e->grants is set: its wire view. */
static int grants_wire(ClusterExecutor *e) {
        e->grant_ptrs = calloc(e->n_grants + 1, sizeof(*e->grant_ptrs));
        if (!e->grant_ptrs)
                return -ENOMEM;
        for (size_t i = 0; i < e->n_grants; i++) {
                ClusterGrant *g = e->grants + i;

                spark__resource_addresses__init(&g->wire);
                g->wire.name = g->name;
                g->wire.addresses = g->addresses;
                g->wire.n_addresses = g->n_addresses;
                e->grant_ptrs[i] = &g->wire;
        }
        return 0;
}

int cluster_resource_assign(Worker *w, ClusterExecutor *e) {
        const App *a = e->app;
        ClusterGrant *g;

        if (a->n_wants == 0)
                return 0;
        if (cluster_resource_fit(w, a) < 1)
                return -ENOSPC;
        g = calloc(a->n_wants, sizeof(*g));
        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_wants; i++) {
                ClusterResource *r = worker_resource(w, a->wants[i].name);
                size_t n = 0;

                snprintf(g[i].name, sizeof(g[i].name), "%s", a->wants[i].name);
                g[i].addresses = calloc((size_t) a->wants[i].amount + 1, sizeof(char *));
                if (!g[i].addresses)
                        goto oom;
                for (size_t k = 0; k < r->n_addresses && n < (size_t) a->wants[i].amount; k++)
                        if (r->holder_app[k][0] == '\0') {
                                g[i].addresses[n] = strdup(r->addresses[k]);
                                if (!g[i].addresses[n])
                                        goto oom;
                                g[i].n_addresses = ++n;
                        }
        }
        /* all allocated: now take them */
        for (size_t i = 0; i < a->n_wants; i++) {
                ClusterResource *r = worker_resource(w, g[i].name);
                for (size_t k = 0; k < g[i].n_addresses; k++)
                        hold(r, (size_t) resource_address_index(r, g[i].addresses[k]), a->id, e->id);
        }
        e->grants = g;
        e->n_grants = a->n_wants;
        return grants_wire(e);
oom:
        for (size_t i = 0; i < a->n_wants; i++)
                strv_free_n(g[i].addresses, g[i].n_addresses);
        free(g);
        return -ENOMEM;
}

int cluster_resource_restore(Worker *w, ClusterExecutor *e, const ClusterResourceOffer *grants, size_t n_grants) {
        ClusterGrant *g;
        size_t n = 0;

        if (cluster_offer_check(NULL, 0, grants, n_grants) < 0)
                return -EINVAL;
        if (n_grants == 0)
                return 0;
        g = calloc(n_grants, sizeof(*g));
        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < n_grants; i++) {
                ClusterResource *r = worker_resource(w, grants[i].name);

                snprintf(g[n].name, sizeof(g[n].name), "%s", grants[i].name);
                g[n].addresses = calloc(grants[i].n_addresses + 1, sizeof(char *));
                if (!g[n].addresses) {
                        e->grants = g;
                        e->n_grants = n + 1;
                        cluster_executor_grants_free(e);
                        return -ENOMEM;
                }
                for (size_t k = 0; r && k < grants[i].n_addresses; k++) {
                        ssize_t x = resource_address_index(r, grants[i].addresses[k]);
                        if (x < 0)
                                continue;
                        g[n].addresses[g[n].n_addresses] = strdup(grants[i].addresses[k]);
                        if (!g[n].addresses[g[n].n_addresses])
                                break;
                        g[n].n_addresses++;
                        hold(r, (size_t) x, e->app->id, e->id);
                }
                n++;
        }
        cluster_executor_grants_free(e);
        e->grants = g;
        e->n_grants = n;
        return grants_wire(e);
}

size_t cluster_resource_release(Worker *w, const char *app_id, int executor_id) {
        size_t freed = 0;

        for (size_t i = 0; w && app_id && i < w->n_resources; i++) {
                ClusterResource *r = w->resources + i;
                for (size_t k = 0; k < r->n_addresses; k++)
                        if (r->holder_executor[k] == executor_id && streq(r->holder_app[k], app_id)) {
                                unhold(r, k);
                                freed++;
                        }
        }
        return freed;
}

static bool holder_is_live_here(const Worker *w, const char *app_id, int executor_id) {
        for (const ClusterExecutor *e = w->executors; e; e = e->worker_next)
                if (e->id == executor_id && streq(e->app->id, app_id))
                        return true;
        return false;
}

void cluster_resource_reconcile(Worker *w, const ReportedExecutor *reported, size_t n_reported) {
        for (size_t i = 0; i < w->n_resources; i++) {
                ClusterResource *r = w->resources + i;

                for (size_t k = 0; k < r->n_addresses; k++) {
                        bool keep = false;

                        if (r->holder_app[k][0] == '\0')
                                continue;
                        keep = holder_is_live_here(w, r->holder_app[k], r->holder_executor[k]);
                        for (size_t j = 0; j < n_reported && !keep; j++)
                                keep = reported[j].executor_id == r->holder_executor[k] &&
                                       streq(reported[j].app_id, r->holder_app[k]);
                        if (!keep)
                                unhold(r, k);
                }
        }
        /* executors that moved here, or were restored before the worker came back */
        for (ClusterExecutor *e = w->executors; e; e = e->worker_next)
                for (size_t i = 0; i < e->n_grants; i++) {
                        ClusterResource *r = worker_resource(w, e->grants[i].name);
                        for (size_t k = 0; r && k < e->grants[i].n_addresses; k++) {
                                ssize_t x = resource_address_index(r, e->grants[i].addresses[k]);
                                if (x >= 0 && r->holder_app[x][0] == '\0')
                                        hold(r, (size_t) x, e->app->id, e->id);
                        }
                }
}

const char *cluster_app_waiting_reason(Worker *const *workers, size_t n_workers, const App *a, char *buf,
                                       size_t size) {
        size_t labelled = 0;

        if (a->n_constraints == 0 && a->n_wants == 0)
                return NULL;
        for (size_t i = 0; i < n_workers; i++) {
                if (!worker_is_up(workers[i]) || !worker_has_labels(workers[i], a))
                        continue;
                labelled++;
                if (cluster_resource_fit(workers[i], a) > 0)
                        return NULL;
        }
        if (labelled == 0) {
                size_t n = (size_t) snprintf(buf, size, "no worker carries the labels");
                for (size_t i = 0; i < a->n_constraints && n < size; i++)
                        n += (size_t) snprintf(buf + n, size - n, "%s%s", i ? ", " : " ", a->constraints[i]);
                if (a->n_constraints == 0)
                        snprintf(buf, size, "no worker is up");
                return buf;
        }
        for (size_t i = 0; i < a->n_wants; i++) {
                bool offered = false;
                for (size_t j = 0; j < n_workers && !offered; j++) {
                        const ClusterResource *r;
                        if (!worker_is_up(workers[j]) || !worker_has_labels(workers[j], a))
                                continue;
                        r = worker_resource(workers[j], a->wants[i].name);
                        offered = r && r->n_addresses >= (size_t) a->wants[i].amount;
                }
                if (!offered) {
                        snprintf(buf, size, "no worker%s offers %d %s per executor",
                                 a->n_constraints ? " with its labels" : "", a->wants[i].amount, a->wants[i].name);
                        return buf;
                }
        }
        snprintf(buf, size, "waiting for free addresses of its resources");
        return buf;
}

int cluster_offers_from_wire(Spark__ResourceAddresses *const *v, size_t n, ClusterResourceOffer **ret) {
        ClusterResourceOffer *o;

        if (n > RESOURCE_KINDS_MAX)
                return -E2BIG;
        for (size_t i = 0; i < n; i++)
                if (!v[i] || v[i]->n_addresses > RESOURCE_ADDRESSES_MAX)
                        return -E2BIG;
        o = calloc(n + 1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                o[i] = (ClusterResourceOffer) {
                        .name = v[i]->name,
                        .addresses = (const char *const *) v[i]->addresses,
                        .n_addresses = v[i]->n_addresses,
                };
        *ret = o;
        return 0;
}

int cluster_amounts_from_wire(Spark__ResourceAmount *const *v, size_t n, ClusterResourceAmount **ret) {
        ClusterResourceAmount *a;

        if (n > RESOURCE_KINDS_MAX)
                return -E2BIG;
        a = calloc(n + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!v[i] || !v[i]->name || strlen(v[i]->name) > RESOURCE_NAME_MAX) {
                        free(a);
                        return -EINVAL;
                }
                snprintf(a[i].name, sizeof(a[i].name), "%s", v[i]->name);
                a[i].amount = v[i]->amount;
        }
        *ret = a;
        return 0;
}
