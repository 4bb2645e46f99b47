/* Following the leading master among cluster.master's list (docs/ha.md). */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "master-link.h"

int master_link_init(MasterLink *l, const char *urls) {
        *l = (MasterLink) { .misses_max = MASTER_LINK_MISSES_MAX };
        return endpoint_list_parse(urls, &l->urls);
}

void master_link_done(MasterLink *l) {
        endpoint_list_done(&l->urls);
}

const char *master_link_url(const MasterLink *l) {
        return l->urls.n > 0 ? l->urls.urls[l->current] : NULL;
}

static bool move_to(MasterLink *l, size_t i, const char *why) {
        if (i == l->current)
                return false;
        log_notice("Master at %s %s; trying %s", l->urls.urls[l->current], why, l->urls.urls[i]);
        l->current = i;
        l->misses = 0;
        return true;
}

bool master_link_update(MasterLink *l, int error, const Envelope *reply, bool connection_lost) {
        char leader[ENDPOINT_LIST_URL_MAX];
        int r, i;

        if (l->urls.n < 2)
                return false;
        if (error == -ECANCELED)
                return false;
        if (error < 0 && !reply) {
                /* No answer: the next in the list, at once if the master's
                 * connection went and none came back for as long as the
                 * call waited (it exited or was killed: its socket is
                 * closed, new dials are refused), else after a few in a
                 * row — a live master may be slow for a moment. */
                if (++l->misses < l->misses_max && !connection_lost)
                        return false;
                l->left_silent = l->current + 1;
                return move_to(l, (l->current + 1) % l->urls.n,
                               connection_lost ? "closed its connection and does not answer" : "does not answer");
        }
        l->misses = 0;
        if (l->left_silent == l->current + 1)
                l->left_silent = 0; /* it answers again */
        if (!reply || reply->body_case != SPARK__ENVELOPE__BODY_ERROR)
                return false;
        r = standby_reply_leader(reply->error->code, reply->error->message, leader, sizeof(leader));
        if (r == -ENOENT)
                return false;
        if (r < 0)
                return move_to(l, (l->current + 1) % l->urls.n, "is a standby that knows no leader");
        i = endpoint_list_find(&l->urls, leader);
        if (i < 0) {
                log_warning("Master at %s names %s as the leader, which cluster.master does not list; trying the next",
                            l->urls.urls[l->current], leader);
                return move_to(l, (l->current + 1) % l->urls.n, "is a standby");
        }
        if (l->left_silent == (size_t) i + 1)
                return false; /* the old leader: its session has not expired yet */
        return move_to(l, (size_t) i, "is a standby");
}
