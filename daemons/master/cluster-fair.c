/* Fair share (docs/DESIGN.md "Fair share"): with master.scheduling "fair",
 * placement gives free capacity to the application with the lowest weighted
 * dominant share that still wants executors, first up to what weighted DRF
 * gives it (its target, placement-fair.h), then beyond, so that nothing
 * stays idle that someone wants.  An application that wants more and has
 * been below its target for preemption_timeout gets executors back from
 * applications above theirs: they are drained, as on a draining worker
 * (cluster-drain.c), through the draining flag of each executor's record;
 * the driver gives such an executor no new task and releases it once it
 * holds none, and its running tasks are not counted as failures if it has
 * to be stopped first, one more timeout later.  An application something
 * was taken back from gets nothing beyond its target for one timeout: the
 * capacity goes where it was taken for, and shares settle instead of
 * swinging.
 *
 * Capacity is that of the workers that take executors (alive, not
 * draining), pooled: DRF divides the sum; placement then finds each
 * executor a worker, and what fits nowhere waits.  Named resources count
 * as their addresses, each name in a slot of its own (placement-fair.h),
 * the first FAIR_NAMED_MAX names met in a pass; a name an application
 * wants and no worker offers has a capacity of 0, so that application's
 * share is beyond any other's and it is given nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "cluster-internal.h"
#include "cluster-resources.h"
#include "log.h"
#include "placement-fair.h"

typedef struct FairState {
        App **apps;
        FairApp *fa;
        int *targets;
        bool *skip;
        size_t n;
        int64_t capacity[_FAIR_RESOURCES];
        int64_t used[_FAIR_RESOURCES];       /* on those workers */
        char names[FAIR_NAMED_MAX][RESOURCE_NAME_MAX + 1];  /* of the named slots */
        size_t n_names;
} FairState;

/* The slot of a named resource, given a new one if there is room; -1: none. */
static int fair_named_slot(FairState *s, const char *name) {
        for (size_t i = 0; i < s->n_names; i++)
                if (streq(s->names[i], name))
                        return FAIR_NAMED_FIRST + (int) i;
        if (s->n_names == FAIR_NAMED_MAX)
                return -1;
        snprintf(s->names[s->n_names], sizeof(s->names[0]), "%s", name);
        return FAIR_NAMED_FIRST + (int) s->n_names++;
}

static void fair_state_done(FairState *s) {
        free(s->apps);
        free(s->fa);
        free(s->targets);
        free(s->skip);
}

/* What an app holds for the fair share: its executors but those being taken back. */
static int app_held(const App *a) {
        return (int) a->n_live_executors - a->n_preempting;
}

/* The named resources of the workers that take executors, each name in a
 * slot of its own: a walk of every worker, done only while some offer any. */
static void fair_add_named_resources(Cluster *c, FairState *s) {
        size_t i = 0;
        void *v;

        while (hashmap_iterate(cluster_workers(c), &i, &v, NULL)) {
                Worker *w = v;
                if (w->state != SPARK__WORKER_STATE__WORKER_ALIVE)
                        continue;
                for (size_t k = 0; k < w->n_resources; k++) {
                        const ClusterResource *res = &w->resources[k];
                        int slot = fair_named_slot(s, res->name);

                        if (slot < 0)
                                continue;
                        s->capacity[slot] += (int64_t) res->n_addresses;
                        s->used[slot] += (int64_t) (res->n_addresses - res->n_free);
                }
        }
}

/* Cores and memory from the pool kept as workers change (cluster-pool.h,
 * checked against the workers before each placement in the sanitizer
 * build); named resources too unless with_named is false. */
static void fair_add_pool(Cluster *c, FairState *s, bool with_named) {
        const ClusterPool *pool = cluster_pool(c);

        s->capacity[FAIR_CORES] = pool->cores;
        s->capacity[FAIR_MEMORY_MB] = pool->memory_mb;
        s->used[FAIR_CORES] = pool->cores_used;
        s->used[FAIR_MEMORY_MB] = pool->memory_used_mb;
        if (with_named && pool->n_offering_resources > 0)
                fair_add_named_resources(c, s);
        for (int k = 0; k < _FAIR_RESOURCES; k++)
                s->capacity[k] = MIN(s->capacity[k], FAIR_CAPACITY_MAX);
}

static FairApp fair_app_of(FairState *s, const App *a) {
        FairApp fa = {
                .per_executor = { a->cores_per_executor, MIN(a->executor_memory_mb, FAIR_PER_EXECUTOR_MAX) },
                .weight = MIN(MAX(a->weight, 1), FAIR_WEIGHT_MAX),
                .held = MAX(app_held(a), 0),
                .wanted = app_executors_wanted(a),
        };

        for (size_t k = 0; k < a->n_wants; k++) {
                int slot = fair_named_slot(s, a->wants[k].name);

                if (slot >= 0)
                        fa.per_executor[slot] = a->wants[k].amount;
        }
        return fa;
}

/* An app's dominant share at k executors, not divided by its weight. */
static double fair_unweighted_share(const FairApp *fa, int k, const int64_t capacity[_FAIR_RESOURCES]) {
        return fair_share_to_double(fair_share_of(fa, k, capacity)) * fa->weight;
}

static int fair_state_alloc(FairState *s, size_t n) {
        s->apps = calloc(n + 1, sizeof(*s->apps));
        s->fa = calloc(n + 1, sizeof(*s->fa));
        s->targets = calloc(n + 1, sizeof(*s->targets));
        s->skip = calloc(n + 1, sizeof(*s->skip));
        return s->apps && s->fa && s->targets && s->skip ? 0 : -ENOMEM;
}

/* While every live app's whole demand fits (cluster_fair_demand_fits()),
 * weighted DRF gives each what it wants: the pass looks only at the apps
 * that may take more, with what they want as their targets, and nothing
 * is stored in the apps (cluster_app_fair_view() works it out).  An app
 * off that list could be given nothing: it is at its limit or core cap. */
static int fair_state_build_wanting(Cluster *c, FairState *s) {
        size_t n = 0;
        int r;

        fair_add_pool(c, s, false);
        for (App *a = cluster_apps_wanting(c); a; a = a->wanting_next)
                n++;
        r = fair_state_alloc(s, n);
        if (r < 0)
                return r;
        for (App *a = cluster_apps_wanting(c); a && s->n < n; a = a->wanting_next) {
                s->apps[s->n] = a;
                s->fa[s->n] = fair_app_of(s, a);
                s->targets[s->n] = s->fa[s->n].wanted;
                s->n++;
        }
        return 0;
}

/* Every live app, the pooled capacity, and each app's target by
 * fair_targets() (stored in the apps for status and snapshots). */
static int fair_state_build(Cluster *c, FairState *s) {
        /* room for every app: counting the live ones first would read
         * every app once more, scattered over the heap */
        size_t n = cluster_n_apps(c);
        int r;

        fair_add_pool(c, s, true);
        r = fair_state_alloc(s, n);
        if (r < 0)
                return r;
        for (App *a = cluster_apps(c); a && s->n < n; a = a->next) {
                if (!app_is_live(a))
                        continue;
                s->apps[s->n] = a;
                s->fa[s->n] = fair_app_of(s, a);
                s->n++;
        }
        r = fair_targets(s->fa, s->n, s->capacity, s->targets);
        if (r < 0)
                return r;
        for (size_t k = 0; k < s->n; k++) {
                App *a = s->apps[k];
                a->fair_target = s->targets[k];
                a->fair_share = fair_unweighted_share(&s->fa[k], s->targets[k], s->capacity);
                a->fair_dominant = fair_unweighted_share(&s->fa[k], (int) a->n_live_executors, s->capacity);
        }
        return 0;
}

ClusterFairView cluster_app_fair_view(Cluster *c, const App *a) {
        FairState s = {};
        FairApp fa;

        if (!cluster_config(c)->fair || !app_is_live(a) || !cluster_fair_demand_fits(c))
                return (ClusterFairView) { a->fair_target, a->fair_share, a->fair_dominant };
        fair_add_pool(c, &s, false);
        fa = fair_app_of(&s, a);
        return (ClusterFairView) {
                .target = fa.wanted,
                .share = fair_unweighted_share(&fa, fa.wanted, s.capacity),
                .dominant = fair_unweighted_share(&fa, (int) a->n_live_executors, s.capacity),
        };
}

/* Whether placement passes over app k now: it has what it wants, or
 * something was taken back from it lately and it has its target. */
static bool fair_skip(const FairState *s, size_t k, usec_t now) {
        const App *a = s->apps[k];

        return s->fa[k].held >= s->fa[k].wanted || (a->regrow_after > now && s->fa[k].held >= s->targets[k]);
}

/* Whether app k wants more than it holds, is below its target and may
 * take more executors now (one at its limit or core cap could not use
 * what it were given: cluster_app_demand_changed() keeps it unstarved). */
static bool fair_is_starved(const FairState *s, size_t k) {
        return s->fa[k].held < s->targets[k] && s->fa[k].held < s->fa[k].wanted && s->apps[k]->wanting;
}

/* An app that wants more than it holds and is below its target is
 * starved from now, if it was not already: the preemption check is due
 * one timeout later. */
static void fair_note_starved(Cluster *c, const FairState *s, usec_t now) {
        void *userdata;
        const ClusterEffects *fx = cluster_effects(c, &userdata);
        const ClusterConfig *cfg = cluster_config(c);

        for (size_t k = 0; k < s->n; k++) {
                App *a = s->apps[k];
                bool starved = fair_is_starved(s, k);

                if (!starved) {
                        a->starved_since = 0;
                        continue;
                }
                if (a->starved_since != 0)
                        continue;
                a->starved_since = now;
                if (fx->check_at)
                        fx->check_at(c, now + cfg->preemption_timeout, userdata);
        }
}

bool cluster_fair_schedule(Cluster *c, int budget) {
        _cleanup_(fair_state_done) FairState s = {};
        usec_t now = now_mono_usec();
        bool all_fit = cluster_fair_demand_fits(c);

        if ((all_fit ? fair_state_build_wanting(c, &s) : fair_state_build(c, &s)) < 0)
                return false;
        for (size_t k = 0; k < s.n; k++)
                s.skip[k] = fair_skip(&s, k, now);

        for (;;) {
                ssize_t k = fair_next(s.fa, s.n, s.capacity, s.skip);
                App *a;
                int want, placed;

                if (k < 0)
                        break;
                a = s.apps[k];
                /* up to its target at once; beyond it, one at a time, so
                 * that the lowest share is looked at again */
                want = s.fa[k].held < s.targets[k] ? s.targets[k] - s.fa[k].held : 1;
                placed = cluster_schedule_app(c, a, MIN(want, budget));
                if (placed <= 0) {
                        s.skip[k] = true;  /* fits nowhere now */
                        continue;
                }
                s.fa[k].held += placed;
                budget -= placed;
                s.skip[k] = fair_skip(&s, (size_t) k, now);
                if (!all_fit)
                        a->fair_dominant = fair_unweighted_share(&s.fa[k], (int) a->n_live_executors, s.capacity);
                if (budget <= 0) {
                        fair_note_starved(c, &s, now);
                        return true;
                }
        }
        fair_note_starved(c, &s, now);
        return false;
}

static FairVictim fair_victim_of(const ClusterExecutor *e) {
        return (FairVictim) {
                .running_tasks = e->running_tasks,
                .launching = e->state == SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING,
                .running_since = e->running_since,
        };
}

/* The executor of a to take back: the least busy by its driver's last
 * report, in fair_victim_cmp()'s order; none already on its way out
 * (released, taken back) or on a draining worker, which goes anyway. */
static ClusterExecutor *fair_pick_victim_executor(App *a) {
        ClusterExecutor *best = NULL;
        FairVictim best_v = {};

        for (size_t i = 0; i < a->n_executors_allocated; i++) {
                ClusterExecutor *e = a->executors[i];
                FairVictim v;

                if (!e || executor_state_is_terminal(e->state) || e->preempting || e->released || !e->worker ||
                    worker_is_draining(e->worker))
                        continue;
                v = fair_victim_of(e);
                if (!best || fair_victim_cmp(&v, &best_v) < 0) {
                        best = e;
                        best_v = v;
                }
        }
        return best;
}

static void fair_preempt(Cluster *c, ClusterExecutor *e, const App *starved, usec_t now) {
        void *userdata;
        const ClusterEffects *fx = cluster_effects(c, &userdata);
        const ClusterConfig *cfg = cluster_config(c);
        App *a = e->app;

        e->preempting = true;
        e->preempt_deadline = now + cfg->preemption_timeout;
        a->n_preempting++;
        a->regrow_after = now + cfg->preemption_timeout;
        log_struct(LOG_NOTICE,
                   LOG_FIELDS(.app_id = a->id, .executor_id = e->id, .worker_id = e->worker->id,
                              .message_id = SPARK_MESSAGE_EXECUTOR_PREEMPTED),
                   "Executor %s/%d on %s taken back for %s: %s holds %d executors, its fair share is %d; %s "
                   "holds %d of %d",
                   a->id, e->id, e->worker->id, starved->id, a->id, app_held(a) + 1, a->fair_target, starved->id,
                   app_held(starved), starved->fair_target);
        if (fx->executor_updated)
                fx->executor_updated(c, e, userdata);
}

/* Stops what its driver has not released one timeout after it was taken
 * back; its running tasks go elsewhere without counting as failures. */
static void fair_check_deadlines(Cluster *c, usec_t now, usec_t *next) {
        void *userdata;
        const ClusterEffects *fx = cluster_effects(c, &userdata);

        for (App *a = cluster_apps(c); a; a = a->next) {
                if (a->n_preempting <= 0)
                        continue;
                for (size_t i = 0; i < a->n_executors_allocated; i++) {
                        ClusterExecutor *e = a->executors[i];

                        if (!e || !e->preempting || e->preempt_killed || executor_state_is_terminal(e->state) ||
                            !e->worker)
                                continue;
                        if (e->preempt_deadline > now) {
                                *next = MIN(*next, e->preempt_deadline);
                                continue;
                        }
                        e->preempt_killed = true;
                        log_struct(LOG_WARNING, LOG_FIELDS(.app_id = a->id, .executor_id = e->id),
                                   "Executor %s/%d taken back but not released in time: stopping it; its running "
                                   "tasks go elsewhere",
                                   a->id, e->id);
                        if (fx->kill_executor)
                                fx->kill_executor(c, e->worker, e, "preempted", userdata);
                }
        }
}

/* The app above its target with the highest weighted dominant share that
 * still has an executor to take back; -1: none. */
static ssize_t fair_pick_victim(const FairState *s) {
        ssize_t best = -1;

        for (size_t k = 0; k < s->n; k++) {
                if (s->skip[k] || s->fa[k].held <= s->targets[k])
                        continue;
                if (best < 0 || fair_share_cmp(fair_share_of(&s->fa[k], s->fa[k].held, s->capacity),
                                               fair_share_of(&s->fa[best], s->fa[best].held, s->capacity)) > 0)
                        best = (ssize_t) k;
        }
        return best;
}

static bool any_positive(const int64_t v[_FAIR_RESOURCES]) {
        for (int r = 0; r < _FAIR_RESOURCES; r++)
                if (v[r] > 0)
                        return true;
        return false;
}

void cluster_fair_check(Cluster *c, usec_t now, usec_t *next) {
        _cleanup_(fair_state_done) FairState s = {};
        const ClusterConfig *cfg = cluster_config(c);
        int64_t need[_FAIR_RESOURCES];
        const App *starved = NULL;
        int taken = 0;

        fair_check_deadlines(c, now, next);
        if (!cfg->fair) {
                for (App *a = cluster_apps(c); a; a = a->next)
                        a->starved_since = 0;
                return;
        }
        if (fair_state_build(c, &s) < 0)
                return;

        /* What the apps starved for a timeout lack, beyond what is free and
         * what is already on its way back to them. */
        for (int r = 0; r < _FAIR_RESOURCES; r++)
                need[r] = -(s.capacity[r] - s.used[r]);
        for (size_t k = 0; k < s.n; k++) {
                App *a = s.apps[k];

                for (int r = 0; r < _FAIR_RESOURCES; r++)
                        need[r] -= (int64_t) a->n_preempting * s.fa[k].per_executor[r];
                if (!fair_is_starved(&s, k)) {
                        a->starved_since = 0;
                        continue;
                }
                if (a->starved_since == 0)
                        a->starved_since = now;
                if (a->starved_since + cfg->preemption_timeout > now) {
                        *next = MIN(*next, a->starved_since + cfg->preemption_timeout);
                        continue;
                }
                for (int r = 0; r < _FAIR_RESOURCES; r++)
                        need[r] += (int64_t) (s.targets[k] - s.fa[k].held) * s.fa[k].per_executor[r];
                if (!starved)
                        starved = a;  /* the oldest, named in the log */
        }
        if (!starved)
                return;

        while (any_positive(need)) {
                ssize_t k = fair_pick_victim(&s);
                ClusterExecutor *e;

                if (k < 0)
                        break;
                e = fair_pick_victim_executor(s.apps[k]);
                if (!e) {
                        s.skip[k] = true;
                        continue;
                }
                fair_preempt(c, e, starved, now);
                s.fa[k].held--;
                taken++;
                for (int r = 0; r < _FAIR_RESOURCES; r++)
                        need[r] -= s.fa[k].per_executor[r];
        }
        if (taken > 0)
                *next = MIN(*next, now + cfg->preemption_timeout);
}
