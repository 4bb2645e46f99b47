/* See placement-fair.h.  Progressive filling keeps the applications that
 * may still grow in a binary heap ordered by (weighted dominant share,
 * index), so each executor given costs O(log n); an application's share is
 * linear in its executors, k * per_executor[d] / (capacity[d] * weight) for
 * its dominant resource d, which does not change as it grows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "macro.h"
#include "placement-fair.h"

typedef unsigned __int128 u128;

/* The resource whose capacity one executor of app takes the largest
 * fraction of; -1 if it needs one the cluster has none of. */
static int dominant_resource(const FairApp *app, const int64_t capacity[_FAIR_RESOURCES]) {
        int d = 0;

        for (int r = 0; r < _FAIR_RESOURCES; r++) {
                if (app->per_executor[r] > 0 && capacity[r] == 0)
                        return -1;
                /* per[r] / cap[r] > per[d] / cap[d] */
                if (capacity[r] > 0 && (u128) app->per_executor[r] * (u128) capacity[d] >
                                               (u128) app->per_executor[d] * (u128) capacity[r])
                        d = r;
        }
        /* capacity[0] may be 0 with per_executor[0] 0: then any r with capacity wins */
        if (capacity[d] == 0)
                for (int r = 0; r < _FAIR_RESOURCES; r++)
                        if (capacity[r] > 0 && app->per_executor[r] > 0)
                                return r;
        return d;
}

FairShare fair_share_of(const FairApp *app, int k, const int64_t capacity[_FAIR_RESOURCES]) {
        int d = dominant_resource(app, capacity);

        if (d < 0 || capacity[d] == 0)
                return (FairShare) { .num = 1, .den = 0 };
        return (FairShare) {
                .num = (uint64_t) MAX(k, 0) * (uint64_t) app->per_executor[d],
                .den = (uint64_t) capacity[d] * (uint64_t) app->weight,
        };
}

int fair_share_cmp(FairShare a, FairShare b) {
        u128 l, r;

        if (a.den == 0 || b.den == 0)
                return (a.den == 0) - (b.den == 0);
        l = (u128) a.num * b.den;
        r = (u128) b.num * a.den;
        return l < r ? -1 : l > r ? 1 : 0;
}

double fair_share_to_double(FairShare s) {
        return s.den == 0 ? 1.0 : (double) s.num / (double) s.den;
}

bool fair_app_is_valid(const FairApp *a) {
        bool any = false;

        if (a->weight < 1 || a->weight > FAIR_WEIGHT_MAX || a->held < 0 || a->wanted < 0)
                return false;
        for (int r = 0; r < _FAIR_RESOURCES; r++) {
                if (a->per_executor[r] < 0 || a->per_executor[r] > FAIR_PER_EXECUTOR_MAX)
                        return false;
                any = any || a->per_executor[r] > 0;
        }
        return any;
}

static bool capacity_is_valid(const int64_t capacity[_FAIR_RESOURCES]) {
        for (int r = 0; r < _FAIR_RESOURCES; r++)
                if (capacity[r] < 0 || capacity[r] > FAIR_CAPACITY_MAX)
                        return false;
        return true;
}

static bool fits(const FairApp *a, const int64_t left[_FAIR_RESOURCES]) {
        for (int r = 0; r < _FAIR_RESOURCES; r++)
                if (a->per_executor[r] > left[r])
                        return false;
        return true;
}

static bool demands_fit(const FairApp *apps, size_t n, const int64_t capacity[_FAIR_RESOURCES]) {
        for (int r = 0; r < _FAIR_RESOURCES; r++) {
                u128 sum = 0;
                for (size_t i = 0; i < n; i++) {
                        if (apps[i].wanted == FAIR_EXECUTORS_MAX)
                                return false;
                        sum += (u128) apps[i].wanted * (u128) apps[i].per_executor[r];
                }
                if (sum > (u128) capacity[r])
                        return false;
        }
        return true;
}

typedef struct Filling {
        const FairApp *apps;
        const int64_t *capacity;
        const int *count;
        size_t *heap;
        size_t n;
} Filling;

static bool before(const Filling *f, size_t a, size_t b) {
        int k = fair_share_cmp(fair_share_of(&f->apps[a], f->count[a], f->capacity),
                               fair_share_of(&f->apps[b], f->count[b], f->capacity));
        return k < 0 || (k == 0 && a < b);
}

static void sift_down(Filling *f, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, m = i;

                if (l < f->n && before(f, f->heap[l], f->heap[m]))
                        m = l;
                if (l + 1 < f->n && before(f, f->heap[l + 1], f->heap[m]))
                        m = l + 1;
                if (m == i)
                        return;
                size_t t = f->heap[i];
                f->heap[i] = f->heap[m];
                f->heap[m] = t;
                i = m;
        }
}

int fair_targets(const FairApp *apps, size_t n, const int64_t capacity[_FAIR_RESOURCES], int *targets) {
        _cleanup_free_ size_t *heap = NULL;
        int64_t left[_FAIR_RESOURCES];
        Filling f;

        if ((n > 0 && (!apps || !targets)) || !capacity || !capacity_is_valid(capacity))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!fair_app_is_valid(&apps[i]))
                        return -EINVAL;
        if (n == 0)
                return 0;
        heap = calloc(n, sizeof(*heap));
        if (!heap)
                return -ENOMEM;

        /* Everyone's whole demand fits: that is the allocation, found in
         * O(n) (progressive filling would give each its demand too). */
        if (demands_fit(apps, n, capacity)) {
                for (size_t i = 0; i < n; i++)
                        targets[i] = apps[i].wanted;
                return 0;
        }

        memcpy(left, capacity, sizeof(left));
        f = (Filling) { .apps = apps, .capacity = capacity, .count = targets, .heap = heap };
        for (size_t i = 0; i < n; i++) {
                targets[i] = 0;
                if (apps[i].wanted > 0 && fits(&apps[i], left))
                        heap[f.n++] = i;
        }
        /* all shares start at 0: index order is already a heap */

        while (f.n > 0) {
                size_t i = heap[0];
                const FairApp *a = &apps[i];

                if (targets[i] >= a->wanted || !fits(a, left)) {
                        /* done for good: capacity only shrinks */
                        heap[0] = heap[--f.n];
                        sift_down(&f, 0);
                        continue;
                }
                if (f.n == 1) {
                        /* alone: everything that fits at once */
                        int64_t k = a->wanted - targets[i];
                        for (int r = 0; r < _FAIR_RESOURCES; r++)
                                if (a->per_executor[r] > 0)
                                        k = MIN(k, left[r] / a->per_executor[r]);
                        targets[i] += (int) k;
                        for (int r = 0; r < _FAIR_RESOURCES; r++)
                                left[r] -= k * a->per_executor[r];
                        f.n = 0;
                        break;
                }
                targets[i]++;
                for (int r = 0; r < _FAIR_RESOURCES; r++)
                        left[r] -= a->per_executor[r];
                sift_down(&f, 0);
        }
        return 0;
}

ssize_t fair_next(const FairApp *apps, size_t n, const int64_t capacity[_FAIR_RESOURCES], const bool *skip) {
        ssize_t best = -1;
        FairShare best_share = {};

        for (size_t i = 0; i < n; i++) {
                FairShare s;

                if (apps[i].held >= apps[i].wanted || (skip && skip[i]))
                        continue;
                s = fair_share_of(&apps[i], apps[i].held, capacity);
                if (best < 0 || fair_share_cmp(s, best_share) < 0) {
                        best = (ssize_t) i;
                        best_share = s;
                }
        }
        return best;
}

/* An executor's rank by its running tasks: not running counts as none, not
 * known after every known count. */
static int64_t victim_tasks(const FairVictim *v) {
        if (v->launching)
                return 0;
        if (v->running_tasks < 0)
                return INT64_MAX;
        return v->running_tasks;
}

int fair_victim_cmp(const FairVictim *a, const FairVictim *b) {
        int64_t ta = victim_tasks(a), tb = victim_tasks(b);

        if (ta != tb)
                return ta < tb ? -1 : 1;
        if (a->launching != b->launching)
                return a->launching ? -1 : 1;
        if (a->running_since != b->running_since)
                return a->running_since > b->running_since ? -1 : 1;  /* the youngest first */
        return 0;
}
