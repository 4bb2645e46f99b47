/* Standby masters on ZooKeeper: session, election, fencing (docs/ha.md).
 *
 * Every master creates an ephemeral sequential znode
 * zookeeper_dir/election/master_NNNNNNNNNN holding its request and event
 * URLs; the lowest number leads, and its number is the leader's epoch.  Each
 * master watches the election's children and looks again at every change,
 * so that a standby always knows whom to send callers to.
 *
 * Fencing: when the leader's connection to ZooKeeper is lost it is
 * SUSPENDED at once — well before the ensemble can expire its session and
 * elect another, which takes the whole session timeout — and changes
 * nothing (no placement, no launches, no kills, no worker declared lost)
 * until it is back.  A leader whose session has expired has been replaced,
 * or may be at any moment: it exits, and systemd starts it again as a
 * standby.  Every state write also checks the leader's election znode in
 * the same multi-op, so a write of a deposed leader fails in ZooKeeper
 * itself. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc-util.h"
#include "endpoint-list.h"
#include "log.h"
#include "loop-queue.h"
#include "master-ha.h"
#include "master.h"

#define ELECTION_PREFIX "master_"
#define ELECTION_DATA_MAX 1100
/* After a refusal to lead (the state could not be read), stand again this
 * much later: an operator may have repaired it. */
#define REFUSE_RETRY_USEC (10 * USEC_PER_SEC)

static void *mfree(void *p) {
        free(p);
        return NULL;
}

struct MasterHa {
        Master *master;
        zhandle_t *zh;
        LoopQueue *queue;
        char *dir;            /* zookeeper_dir */
        char *election_dir;   /* zookeeper_dir/election */
        char *node;           /* our election znode, NULL: none */
        char *leader_url;     /* from the lowest election znode */
        uint64_t epoch;       /* our sequence number once we lead */
        MasterRole role;
        bool logged_timeout;
        bool presumed_replaced;
        sd_event_source *retry;
        sd_event_source *suspension;   /* fires a session timeout after the connection was lost */
};

typedef struct ZkEvent {
        MasterHa *ha;
        int type;
        int state;
} ZkEvent;

static const char *const role_table[_MASTER_ROLE_MAX] = {
        [MASTER_ROLE_STANDBY] = "standby",
        [MASTER_ROLE_LEADER] = "leader",
        [MASTER_ROLE_SUSPENDED] = "suspended",
        [MASTER_ROLE_REFUSING] = "refusing",
};

const char *master_role_to_string(MasterRole r) {
        return r >= 0 && r < _MASTER_ROLE_MAX ? role_table[r] : NULL;
}

int zk_errno(int zrc) {
        switch (zrc) {
        case ZOK:
                return 0;
        case ZNONODE:
                return -ENOENT;
        case ZNODEEXISTS:
                return -EEXIST;
        case ZBADVERSION:
                return -ESTALE;
        case ZNOTEMPTY:
                return -ENOTEMPTY;
        case ZCONNECTIONLOSS:
        case ZOPERATIONTIMEOUT:
                return -ENOTCONN;
        case ZSESSIONEXPIRED:
        case ZSESSIONMOVED:
                return -ETIME;
        case ZNOAUTH:
        case ZAUTHFAILED:
                return -EACCES;
        case ZBADARGUMENTS:
                return -EINVAL;
        case ZMARSHALLINGERROR:
                return -EMSGSIZE;
        case ZINVALIDSTATE:
                return -ESHUTDOWN;
        default:
                return -EIO;
        }
}

MasterRole master_ha_role(const MasterHa *h) {
        return h ? h->role : MASTER_ROLE_LEADER;
}

bool master_ha_presumed_replaced(const MasterHa *h) {
        return h && h->role == MASTER_ROLE_SUSPENDED && h->presumed_replaced;
}

/* Cut off from ZooKeeper but not from the workers, a leader cannot tell
 * a lost quorum (nobody leads: keep the workers) from its own partition
 * (another leads once our session expires, and the workers must go to
 * it).  After a session timeout without a connection the ensemble may have
 * expired the session: the workers are sent on. */
static int on_suspension(sd_event_source *s, uint64_t usec, void *userdata) {
        MasterHa *h = userdata;
        (void) s, (void) usec;

        if (h->role != MASTER_ROLE_SUSPENDED || h->presumed_replaced)
                return 0;
        h->presumed_replaced = true;
        log_struct(LOG_WARNING, LOG_FIELDS(.message_id = SPARK_MESSAGE_MASTER_FENCED),
                   "No ZooKeeper connection for the session timeout (%d ms): another master may lead; "
                   "answering as a standby until the connection is back", zoo_recv_timeout(h->zh));
        return 0;
}

const char *master_ha_leader_url(const MasterHa *h) {
        return h ? h->leader_url : NULL;
}

uint64_t master_ha_epoch(const MasterHa *h) {
        return h && h->role != MASTER_ROLE_STANDBY ? h->epoch : 0;
}

zhandle_t *master_ha_handle(const MasterHa *h) {
        return h ? h->zh : NULL;
}

const char *master_ha_election_node(const MasterHa *h) {
        return h ? h->node : NULL;
}

const char *master_ha_dir(const MasterHa *h) {
        return h ? h->dir : NULL;
}

/* On the client's threads: only to the loop. */
static void on_zk_event_queued(void *userdata, bool discard);

static void zk_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
        MasterHa *h = ctx;
        ZkEvent *ev;
        (void) zh, (void) path;

        if (!h)
                return;
        ev = malloc(sizeof(*ev));
        if (!ev)
                return; /* the next event, or the session's, looks at everything again */
        *ev = (ZkEvent) { .ha = h, .type = type, .state = state };
        if (loop_queue_push(h->queue, on_zk_event_queued, ev) < 0)
                free(ev);
}

/* "URL\nEVENTS_URL": what a standby tells callers, and sparkctl. */
static int advertised_urls(Master *m, char *buf, size_t size) {
        const char *listen = m->config.master.listen, *events = m->config.master.events_listen;
        EndpointList l = {};
        int r;

        /* cluster.master names this master as the others reach it: if
         * listen is a wildcard, the entry with our port — and, if several
         * have it (masters on several hosts), our host name */
        r = endpoint_list_parse(m->config.cluster.master, &l);
        if (r >= 0) {
                const char *port = strrchr(listen, ':');
                bool wildcard = strstr(listen, "://0.0.0.0:") || strstr(listen, "://:") || strstr(listen, "://[::]:");
                char host[256] = "";
                size_t n_port = 0, with_port = 0;

                (void) gethostname(host, sizeof(host) - 1);
                for (size_t i = 0; wildcard && port && i < l.n; i++) {
                        const char *p = strrchr(l.urls[i], ':'), *h = strstr(l.urls[i], "://");
                        size_t hl = strlen(host);
                        if (!p || !streq(p, port))
                                continue;
                        n_port++;
                        with_port = i;
                        if (h && hl > 0 && strncmp(h + 3, host, hl) == 0 && (h[3 + hl] == ':' || h[3 + hl] == '.')) {
                                listen = l.urls[i];
                                n_port = 0;
                                break;
                        }
                }
                if (n_port == 1)
                        listen = l.urls[with_port];
        }
        r = snprintf(buf, size, "%s\n%s", listen, events);
        endpoint_list_done(&l);
        return r < 0 || (size_t) r >= size ? -ENAMETOOLONG : 0;
}

static int ensure_node(MasterHa *h, const char *path) {
        int zrc = zoo_create(h->zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
        return zrc == ZOK || zrc == ZNODEEXISTS ? 0 : zk_errno(zrc);
}

/* zookeeper_dir and its parents, and election/. */
static int ensure_tree(MasterHa *h) {
        _cleanup_free_ char *p = strdup(h->dir);
        int r;

        if (!p)
                return -ENOMEM;
        for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                r = ensure_node(h, p);
                *s = '/';
                if (r < 0)
                        return r;
        }
        r = ensure_node(h, h->dir);
        if (r < 0)
                return r;
        return ensure_node(h, h->election_dir);
}

/* master_0000000042 → 42; -EINVAL for a name that is not ours. */
static int64_t election_seq(const char *name) {
        const char *d = name + strlen(ELECTION_PREFIX);
        int64_t v = 0;

        if (strncmp(name, ELECTION_PREFIX, strlen(ELECTION_PREFIX)) != 0 || strlen(d) != 10)
                return -EINVAL;
        for (; *d; d++) {
                if (*d < '0' || *d > '9')
                        return -EINVAL;
                v = v * 10 + (*d - '0');
        }
        return v;
}

static int stand(MasterHa *h) {
        _cleanup_free_ char *prefix = NULL;
        char data[ELECTION_DATA_MAX], created[1024];
        int r, zrc;

        if (h->node)
                return 0;
        r = ensure_tree(h);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s in ZooKeeper: %m", h->election_dir);
        r = advertised_urls(h->master, data, sizeof(data));
        if (r < 0)
                return log_error_errno(r, "The master's URLs are too long for its election znode");
        if (asprintf(&prefix, "%s/" ELECTION_PREFIX, h->election_dir) < 0)
                return log_oom();
        zrc = zoo_create(h->zh, prefix, data, (int) strlen(data), &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                         created, sizeof(created));
        if (zrc != ZOK)
                return log_error_errno(zk_errno(zrc), "Failed to create the election znode %s…: %s", prefix,
                                       zerror(zrc));
        h->node = strdup(created);
        if (!h->node)
                return log_oom();
        log_info("Standing for election as %s", h->node);
        return 0;
}

static void leader_url_set(MasterHa *h, const char *data, int len) {
        const char *nl;
        char *url;

        if (len <= 0) {
                h->leader_url = mfree(h->leader_url);
                return;
        }
        nl = memchr(data, '\n', (size_t) len);
        url = strndup(data, nl ? (size_t) (nl - data) : (size_t) len);
        if (!url)
                return;
        if (!h->leader_url || !streq(h->leader_url, url))
                log_info("The leading master is at %s", url);
        free(h->leader_url);
        h->leader_url = url;
}

static void become_leader(MasterHa *h, uint64_t seq) {
        int r;

        h->epoch = seq + 1; /* 0 means "not leading" */
        h->role = MASTER_ROLE_LEADER;
        log_struct(LOG_NOTICE, LOG_FIELDS(.message_id = SPARK_MESSAGE_MASTER_LEADER),
                   "Elected leader with epoch %" PRIu64 " (%s); negotiated ZooKeeper session timeout %d ms", h->epoch,
                   h->node, zoo_recv_timeout(h->zh));
        r = master_became_leader(h->master);
        if (r >= 0)
                return;
        /* The state cannot be read: leading would start afresh over it.
         * Give up the candidacy (another master may read it), and stand
         * again later. */
        h->role = MASTER_ROLE_REFUSING;
        (void) zoo_delete(h->zh, h->node, -1);
        h->node = mfree(h->node);
        h->epoch = 0;
        (void) sd_event_source_set_time_relative(h->retry, REFUSE_RETRY_USEC);
        (void) sd_event_source_set_enabled(h->retry, SD_EVENT_ONESHOT);
}

/* Looks at the election: who leads, are we next. */
static int election_check(MasterHa *h) {
        struct String_vector children = {};
        const char *mine, *lowest = NULL;
        int64_t lowest_seq = INT64_MAX, mine_seq = -1;
        char data[ELECTION_DATA_MAX];
        _cleanup_free_ char *path = NULL;
        int len = sizeof(data), zrc;

        zrc = zoo_get_children(h->zh, h->election_dir, 1, &children);
        if (zrc != ZOK)
                return log_warning_errno(zk_errno(zrc), "Failed to list %s: %s", h->election_dir, zerror(zrc));
        mine = h->node ? strrchr(h->node, '/') + 1 : NULL;
        for (int i = 0; i < children.count; i++) {
                int64_t s = election_seq(children.data[i]);
                if (s < 0) {
                        log_warning("%s/%s: not an election znode of spark-master, ignoring", h->election_dir,
                                    children.data[i]);
                        continue;
                }
                if (mine && streq(children.data[i], mine))
                        mine_seq = s;
                if (s < lowest_seq) {
                        lowest_seq = s;
                        lowest = children.data[i];
                }
        }
        if (lowest && asprintf(&path, "%s/%s", h->election_dir, lowest) < 0) {
                deallocate_String_vector(&children);
                return log_oom();
        }
        deallocate_String_vector(&children);

        if (h->node && mine_seq < 0) {
                /* our znode is gone: our session is, or was for the ensemble */
                if (h->role == MASTER_ROLE_LEADER || h->role == MASTER_ROLE_SUSPENDED) {
                        master_deposed(h->master, "its election znode is gone");
                        return -ETIME;
                }
                h->node = mfree(h->node);
                return stand(h) < 0 ? -EIO : election_check(h);
        }

        if (path) {
                zrc = zoo_get(h->zh, path, 0, data, &len, NULL);
                if (zrc == ZOK)
                        leader_url_set(h, data, len);
                else if (zrc == ZNONODE)
                        return election_check(h); /* gone meanwhile */
        } else
                leader_url_set(h, NULL, 0);

        if (mine_seq >= 0 && mine_seq == lowest_seq && h->role == MASTER_ROLE_STANDBY)
                become_leader(h, (uint64_t) mine_seq);
        return 0;
}

static void on_session_event(MasterHa *h, int state) {
        if (state == ZOO_CONNECTED_STATE) {
                if (!h->logged_timeout) {
                        /* the servers bound what we asked for to 2-20 ticks */
                        log_info("Connected to ZooKeeper %s, session timeout %d ms (asked for %" PRIi64 " ms)",
                                 h->master->config.master.zookeeper, zoo_recv_timeout(h->zh),
                                 h->master->config.master.zookeeper_session_timeout_ms);
                        h->logged_timeout = true;
                }
                if (h->role == MASTER_ROLE_SUSPENDED) {
                        h->role = MASTER_ROLE_LEADER;
                        (void) sd_event_source_set_enabled(h->suspension, SD_EVENT_OFF);
                        if (h->presumed_replaced)
                                /* we sent the workers on: they get a new
                                 * deadline to come back, as after an election */
                                master_workers_recovering(h->master);
                        h->presumed_replaced = false;
                        log_struct(LOG_NOTICE, LOG_FIELDS(.message_id = SPARK_MESSAGE_MASTER_LEADER),
                                   "ZooKeeper connection back within the session: leading again (epoch %" PRIu64 ")",
                                   h->epoch);
                        master_place_soon(h->master);
                        master_schedule_worker_check(h->master);
                }
                if (h->role != MASTER_ROLE_REFUSING && stand(h) >= 0)
                        (void) election_check(h);
                return;
        }
        if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE) {
                if (h->role == MASTER_ROLE_LEADER) {
                        /* Once: the quorum may be gone for long, and every
                         * reconnection attempt passes through here. */
                        h->role = MASTER_ROLE_SUSPENDED;
                        h->presumed_replaced = false;
                        (void) sd_event_source_set_time_relative(h->suspension,
                                                                 (usec_t) MAX(zoo_recv_timeout(h->zh), 100) *
                                                                         USEC_PER_MSEC);
                        (void) sd_event_source_set_enabled(h->suspension, SD_EVENT_ONESHOT);
                        log_struct(LOG_WARNING, LOG_FIELDS(.message_id = SPARK_MESSAGE_MASTER_FENCED),
                                   "Lost the ZooKeeper connection: placing, launching and killing nothing "
                                   "until it is back (the cluster keeps running)");
                }
                return;
        }
        if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
                if (h->role == MASTER_ROLE_LEADER || h->role == MASTER_ROLE_SUSPENDED) {
                        master_deposed(h->master, state == ZOO_EXPIRED_SESSION_STATE
                                                          ? "its ZooKeeper session expired"
                                                          : "ZooKeeper refused its credentials");
                        return;
                }
                /* A standby just starts over with a new session. */
                log_warning("ZooKeeper session expired; connecting again as a standby");
                h->node = mfree(h->node);
                (void) zookeeper_close(h->zh);
                h->zh = zookeeper_init(h->master->config.master.zookeeper, zk_watcher,
                                       (int) h->master->config.master.zookeeper_session_timeout_ms, NULL, h, 0);
                if (!h->zh)
                        master_deposed(h->master, "a new ZooKeeper session could not be set up");
        }
}

static void on_zk_event_queued(void *userdata, bool discard) {
        _cleanup_free_ ZkEvent *ev = userdata;
        MasterHa *h = ev->ha;

        if (discard || !h->zh)
                return;
        if (ev->type == ZOO_SESSION_EVENT)
                on_session_event(h, ev->state);
        else if (h->role != MASTER_ROLE_REFUSING)
                /* a child of the election came or went: look again (the
                 * watch is set again by the listing) */
                (void) election_check(h);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        MasterHa *h = userdata;
        (void) s, (void) usec;

        if (h->role != MASTER_ROLE_REFUSING)
                return 0;
        h->role = MASTER_ROLE_STANDBY;
        if (stand(h) >= 0)
                (void) election_check(h);
        return 0;
}

int master_ha_start(Master *m, MasterHa **ret) {
        _cleanup_(master_ha_freep) MasterHa *h = NULL;
        int r;

        if (isempty(m->config.master.zookeeper))
                return log_error_errno(EINVAL, "%s: master.recovery_mode is \"zookeeper\" but master.zookeeper "
                                               "names no servers", m->config_path);
        h = calloc(1, sizeof(*h));
        if (!h)
                return log_oom();
        h->master = m;
        h->role = MASTER_ROLE_STANDBY;
        h->dir = strdup(m->config.master.zookeeper_dir);
        if (!h->dir || asprintf(&h->election_dir, "%s/election", h->dir) < 0)
                return log_oom();
        r = loop_queue_new(m->event, &h->queue);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the ZooKeeper events' queue: %m");
        r = sd_event_add_time_relative(m->event, &h->retry, CLOCK_MONOTONIC, REFUSE_RETRY_USEC, 0, on_retry, h);
        if (r < 0)
                return log_error_errno(r, "Failed to add the election retry timer: %m");
        (void) sd_event_source_set_enabled(h->retry, SD_EVENT_OFF);
        r = sd_event_add_time_relative(m->event, &h->suspension, CLOCK_MONOTONIC, USEC_PER_SEC, 0, on_suspension, h);
        if (r < 0)
                return log_error_errno(r, "Failed to add the suspension timer: %m");
        (void) sd_event_source_set_enabled(h->suspension, SD_EVENT_OFF);

        /* the client's own log lines go to stderr, hence the journal, at
         * warnings and above */
        zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
        h->zh = zookeeper_init(m->config.master.zookeeper, zk_watcher,
                               (int) m->config.master.zookeeper_session_timeout_ms, NULL, h, 0);
        if (!h->zh)
                return log_error_errno(errno ?: EINVAL, "Failed to set up a ZooKeeper client for %s: %m",
                                       m->config.master.zookeeper);
        log_info("Connecting to ZooKeeper %s as a standby (state and election under %s)",
                 m->config.master.zookeeper, h->dir);
        *ret = TAKE_PTR(h);
        return 0;
}

MasterHa *master_ha_free(MasterHa *h) {
        if (!h)
                return NULL;
        /* Closing ends the session: our election znode goes at once, and a
         * standby takes over without waiting for the session timeout.  The
         * client's threads are joined, so nothing is pushed after this. */
        if (h->zh)
                (void) zookeeper_close(h->zh);
        h->zh = NULL;
        h->queue = loop_queue_free(h->queue);
        sd_event_source_unref(h->retry);
        sd_event_source_unref(h->suspension);
        free(h->dir);
        free(h->election_dir);
        free(h->node);
        free(h->leader_url);
        free(h);
        return NULL;
}
