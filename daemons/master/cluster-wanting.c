/* See cluster-wanting.h. */
#include "cluster.h"
#include "cluster-wanting.h"

void apps_wanting_number(AppsWanting *q, App *a) {
        a->seq = ++q->next_seq;
}

bool app_wants_more(const App *a) {
        int64_t cores_left = a->max_cores > 0 ? (int64_t) a->max_cores - a->cores_granted : INT32_MAX;

        if (a->state != SPARK__APP_STATE__APP_WAITING && a->state != SPARK__APP_STATE__APP_RUNNING)
                return false;
        return cores_left >= a->cores_per_executor &&
               (a->executor_limit == INT32_MAX || (int64_t) a->executor_limit > (int64_t) a->n_live_executors);
}

static void insert_in_order(AppsWanting *q, App *a) {
        App *before = q->tail;

        /* an app that wants more is most often the newest */
        while (before && before->seq > a->seq)
                before = before->wanting_prev;
        a->wanting_prev = before;
        a->wanting_next = before ? before->wanting_next : q->head;
        if (a->wanting_next)
                a->wanting_next->wanting_prev = a;
        else
                q->tail = a;
        if (before)
                before->wanting_next = a;
        else
                q->head = a;
        a->wanting = true;
}

void apps_wanting_remove(AppsWanting *q, App *a) {
        if (!a->wanting)
                return;
        if (a->wanting_prev)
                a->wanting_prev->wanting_next = a->wanting_next;
        else
                q->head = a->wanting_next;
        if (a->wanting_next)
                a->wanting_next->wanting_prev = a->wanting_prev;
        else
                q->tail = a->wanting_prev;
        a->wanting_prev = a->wanting_next = NULL;
        a->wanting = false;
}

void apps_wanting_update(AppsWanting *q, App *a) {
        bool wants = app_wants_more(a);

        if (wants && !a->wanting)
                insert_in_order(q, a);
        else if (!wants && a->wanting)
                apps_wanting_remove(q, a);
}

App *apps_wanting_after(const AppsWanting *q, uint64_t seq) {
        App *a = q->head;

        while (a && a->seq <= seq)
                a = a->wanting_next;
        return a;
}

bool apps_wanting_matches(const AppsWanting *q, App *apps_head) {
        const App *w = q->head, *prev = NULL;

        for (const App *a = apps_head; a; a = a->next) {
                if (a->wanting != app_wants_more(a))
                        return false;
                if (!a->wanting)
                        continue;
                if (w != a || w->wanting_prev != prev)
                        return false;
                prev = w;
                w = w->wanting_next;
        }
        return w == NULL && q->tail == prev;
}
