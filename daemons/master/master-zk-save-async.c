/* The state timer's save in ZooKeeper without the loop waiting for it
 * (docs/ha.md, "The state in ZooKeeper").
 *
 * A full save of 10,000 workers and 100,000 executors is tens of batches
 * of chunks, each a round trip to the ensemble with its disk write behind
 * it: seconds in all, during which a save on the loop (zoo_multi())
 * would hold every request.  Here each step is a zoo_amulti() whose
 * completion, on the client's thread, is handed to the loop through the
 * master's link queue; the loop sends the next step: the chunks, then
 * meta, then the removal of what the new generation makes stale (listed
 * with zoo_aget_children()).
 *
 * Packing the state (tens of milliseconds at that size, with its digest)
 * is done first, in a child process as the filesystem mode's save is
 * (master-state-child.c): it packs its copy-on-write view of the state
 * into a memfd, which the loop then maps and sends from.  The snapshot is
 * the state at the fork, and entries journaled meanwhile are newer than
 * its journal_seq and stay.  Where no child can be started, the loop packs.
 *
 * One save at a time.  A save on the loop (master_zk_state_save(), for a
 * journal entry that could not be created, at exit) first ends this one
 * (master_zk_save_async_stop()): it waits for the step in flight, so that
 * meta's version is known, and drops the rest.  A master that stops
 * leading drops it too; ZooKeeper itself refuses its writes then (each
 * batch checks our election znode). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "alloc-util.h"
#include "fileio.h"
#include "log.h"
#include "loop-queue.h"
#include "master.h"
#include "master-zk-save.h"

/* How long a save on the loop waits for the step in flight, at most; past
 * it, meta's version is read again. */
#define ZK_SAVE_STOP_WAIT_USEC (10 * USEC_PER_SEC)

typedef enum ZkSaveStep {
        ZK_SAVE_PACK,       /* a child packs the state */
        ZK_SAVE_CHUNKS,
        ZK_SAVE_META,
        ZK_SAVE_LIST,
        ZK_SAVE_REMOVE,
} ZkSaveStep;

struct ZkSave {
        Master *m;
        ZkSavePlan plan;
        ZkSaveStep step;
        int memfd;                /* the child packs the state into it */
        bool dropped;             /* by master_zk_save_async_stop(): its completions only free it */
        LoopQueueItem item;
        /* the step in flight, written by the client's thread */
        pthread_mutex_t lock;
        pthread_cond_t done_cond;
        bool done;
        int rc;
        int n_ops;
        zoo_op_t *ops;            /* ZK_DELETE_BATCH_OPS + 1 */
        zoo_op_result_t *results; /* as many */
        char *paths;              /* as many of ZK_PATH_MAX */
        struct String_vector children;
        int next_child;
        size_t removed;
};

static ZkSave *zk_save_free(ZkSave *s) {
        if (!s)
                return NULL;
        zk_save_plan_done(&s->plan);
        if (s->memfd >= 0)
                close(s->memfd);
        deallocate_String_vector(&s->children);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->done_cond);
        free(s->ops);
        free(s->results);
        free(s->paths);
        free(s);
        return NULL;
}

/* On the client's completion thread: only to the loop. */
static void step_completed(ZkSave *s, int rc) {
        pthread_mutex_lock(&s->lock);
        s->rc = rc;
        s->done = true;
        pthread_cond_signal(&s->done_cond);
        pthread_mutex_unlock(&s->lock);
        loop_queue_push_item(s->m->link_queue, &s->item);
}

static void on_multi_completed(int rc, const void *data) {
        step_completed((ZkSave *) data, rc);
}

static void on_children_listed(int rc, const struct String_vector *strings, const void *data) {
        ZkSave *s = (ZkSave *) data;

        /* the strings are the client's until we return: a copy */
        if (rc == ZOK && strings && strings->count > 0) {
                s->children.data = calloc((size_t) strings->count, sizeof(char *));
                s->children.count = s->children.data ? strings->count : 0;
                for (int i = 0; i < strings->count; i++)
                        if (!(s->children.data[i] = strdup(strings->data[i]))) {
                                s->children.count = i;
                                break;
                        }
        }
        step_completed(s, rc);
}

static int send_multi(ZkSave *s, int n) {
        int zrc;

        s->n_ops = n;
        s->done = false;
        zrc = zoo_amulti(master_ha_handle(s->m->ha), n, s->ops, s->results, on_multi_completed, s);
        return zrc == ZOK ? 0 : zk_errno(zrc);
}

/* The step after the one that completed, or the end: 0 while one is in
 * flight, 1 when the save is over, negative when it failed. */
static int send_next(ZkSave *s) {
        Master *m = s->m;
        int n, zrc;

        switch (s->step) {
        case ZK_SAVE_PACK:
        case ZK_SAVE_CHUNKS:
                n = zk_save_chunk_ops(m, &s->plan, s->ops, (char (*)[ZK_PATH_MAX]) s->paths);
                if (n > 0)
                        return send_multi(s, n);
                s->step = ZK_SAVE_META;
                zk_save_meta_ops(m, &s->plan, s->ops);
                return send_multi(s, 2);
        case ZK_SAVE_META:
                s->step = ZK_SAVE_LIST;
                s->done = false;
                zrc = zoo_aget_children(master_ha_handle(m->ha), s->plan.dir, 0, on_children_listed, s);
                /* what stays stale is removed by the next save */
                return zrc == ZOK ? 0 : 1;
        case ZK_SAVE_LIST:
        case ZK_SAVE_REMOVE:
                s->step = ZK_SAVE_REMOVE;
                n = zk_stale_ops(m, s->plan.dir, &s->children, &s->next_child, s->plan.gen, s->plan.seq, s->ops,
                                 s->paths);
                if (n == 0 || send_multi(s, n) < 0)
                        return 1;
                s->removed += (size_t) n - 1;
                return 0;
        }
        return 1;
}

static void save_end(ZkSave *s, int r) {
        Master *m = s->m;

        if (s->removed > 0)
                log_debug("Removed %zu stale znodes under %s", s->removed, s->plan.dir);
        m->zk_save = NULL;
        zk_save_free(s);
        master_state_async_done(m, r);
}

/* A step failed: logged, or the master deposed (which drops the save). */
static void save_failed(ZkSave *s, int r) {
        (void) zk_save_failed(s->m, &s->plan, r);
        if (s->dropped)
                zk_save_free(s);
        else
                save_end(s, r);
}

static void on_step_queued(void *userdata, bool discard) {
        ZkSave *s = userdata;
        Master *m = s->m;
        int r;

        if (discard || s->dropped) {
                if (!s->dropped)
                        m->zk_save = NULL; /* the master is going */
                zk_save_free(s);
                return;
        }
        if (master_ha_role(m->ha) != MASTER_ROLE_LEADER) {
                m->zk_save = NULL;
                zk_save_free(s);
                return;
        }
        switch (s->step) {
        case ZK_SAVE_CHUNKS:
        case ZK_SAVE_META:
                r = zk_batch_errno(s->rc, s->results, s->n_ops);
                if (r < 0) {
                        /* the chunks of this generation are removed by the next save */
                        save_failed(s, r);
                        return;
                }
                if (s->step == ZK_SAVE_META) {
                        zk_save_committed(m, &s->plan);
                        m->state_save_cost = zk_save_plan_cost(&s->plan);
                }
                break;
        case ZK_SAVE_PACK: /* not sent: the child's pipe says when it is done */
        case ZK_SAVE_LIST:
                break;
        case ZK_SAVE_REMOVE:
                if (s->rc != ZOK) {
                        log_debug_errno(zk_errno(s->rc), "Failed to remove stale znodes under %s, ignoring: %m",
                                        s->plan.dir);
                        save_end(s, 0);
                        return;
                }
                break;
        }
        r = send_next(s);
        if (r < 0)
                save_failed(s, r);
        else if (r > 0)
                save_end(s, 0);
}

/* What the child that packed the state says. */
typedef struct ZkPacked {
        int error;
        size_t len, n_executors;
        usec_t cpu;  /* the packing's CPU time (zk_save_plan_cost()) */
        char sha256[SHA256_HEX_SIZE];
} ZkPacked;

/* In the child: the state into the memfd (given_fd). */
static void pack_work(Master *m, int given_fd, void *reply) {
        _cleanup_free_ uint8_t *buf = NULL;
        ZkPacked *z = reply;
        size_t len = 0, n = 0;
        usec_t cpu = thread_cpu_usec();
        int r;

        r = master_state_pack(m, &buf, &len, &n);
        if (r >= 0 && len == 0)
                r = -ENODATA;
        if (r >= 0)
                r = write_full(given_fd, buf, len);
        if (r < 0) {
                z->error = r;
                return;
        }
        z->len = len;
        z->n_executors = n;
        sha256_hex(buf, len, z->sha256);
        z->cpu = thread_cpu_usec() - cpu;
}

/* Sends the first step; on failure the save ends. */
static void send_first(ZkSave *s) {
        int r;

        s->step = ZK_SAVE_CHUNKS;
        r = send_next(s);
        if (r < 0)
                save_failed(s, r);
}

/* On the loop: the child's packed state, mapped. */
static void pack_done(Master *m, const void *reply) {
        ZkSave *s = m->zk_save;
        ZkPacked z = { .error = -EIO };
        void *buf;
        int r;

        if (!s || s->step != ZK_SAVE_PACK)
                return;
        if (master_ha_role(m->ha) != MASTER_ROLE_LEADER) {
                m->zk_save = NULL;
                zk_save_free(s);
                return;
        }
        if (reply)
                memcpy(&z, reply, sizeof(z));
        z.sha256[SHA256_HEX_SIZE - 1] = 0;
        r = z.error;
        if (r < 0) {
                log_error_errno(r, "Failed to pack the state to save in ZooKeeper%s: %m",
                                reply ? "" : " (the process packing it ended without saying so)");
                save_end(s, r);
                return;
        }
        buf = mmap(NULL, z.len, PROT_READ, MAP_PRIVATE, s->memfd, 0);
        if (buf == MAP_FAILED) {
                r = log_error_errno(errno, "Failed to map the packed state (%zu bytes): %m", z.len);
                save_end(s, r);
                return;
        }
        close(s->memfd);
        s->memfd = -1;
        s->plan.pack_cpu = z.cpu;
        r = zk_save_plan_packed(&s->plan, buf, z.len, true, z.n_executors, z.sha256);
        if (r < 0) {
                save_end(s, r);
                return;
        }
        send_first(s);
}

int master_zk_save_async_start(Master *m) {
        ZkSave *s;
        int r;

        if (m->zk_save)
                return -EBUSY;
        if (!m->link_queue)
                return -EOPNOTSUPP;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->m = m;
        s->memfd = -1;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->done_cond, NULL);
        loop_queue_item_init(&s->item, on_step_queued, s);
        s->ops = calloc(ZK_DELETE_BATCH_OPS + 1, sizeof(*s->ops));
        s->results = calloc(ZK_DELETE_BATCH_OPS + 1, sizeof(*s->results));
        s->paths = calloc(ZK_DELETE_BATCH_OPS + 1, ZK_PATH_MAX);
        if (!s->ops || !s->results || !s->paths) {
                zk_save_free(s);
                return -ENOMEM;
        }
        r = zk_save_plan_init(m, &s->plan);
        if (r < 0) {
                zk_save_free(s);
                return r;
        }
        m->zk_save = s;
        s->step = ZK_SAVE_PACK;
        s->memfd = memfd_create("spark-master-state", MFD_CLOEXEC);
        r = s->memfd < 0 ? -errno
                         : master_state_child_run(m, pack_work, sizeof(ZkPacked), s->memfd, pack_done);
        if (r >= 0)
                return 0;
        log_warning_errno(r, "Failed to start a process to pack the state, packing it here: %m");
        r = zk_save_plan_pack(m, &s->plan);
        if (r < 0) {
                m->zk_save = NULL;
                zk_save_free(s);
                return r;
        }
        send_first(s);
        return 0;
}

static bool wait_done(ZkSave *s, usec_t timeout) {
        struct timespec until;
        bool done;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t) (timeout / USEC_PER_SEC);
        pthread_mutex_lock(&s->lock);
        while (!s->done)
                if (pthread_cond_timedwait(&s->done_cond, &s->lock, &until) != 0)
                        break;
        done = s->done;
        pthread_mutex_unlock(&s->lock);
        return done;
}

void master_zk_save_async_stop(Master *m) {
        ZkSave *s = m->zk_save;

        if (!s)
                return;
        m->zk_save = NULL;
        if (s->step == ZK_SAVE_PACK) {
                /* nothing sent yet, nothing in flight */
                master_state_child_stop(m);
                zk_save_free(s);
                return;
        }
        s->dropped = true;  /* its queued completion frees it */
        if (s->step != ZK_SAVE_META)
                return;  /* chunks of a generation meta never points at */
        if (!wait_done(s, ZK_SAVE_STOP_WAIT_USEC)) {
                /* not known whether meta was set: its version is read again */
                m->zk_state_version = ZK_STATE_VERSION_UNKNOWN;
                return;
        }
        if (zk_batch_errno(s->rc, s->results, s->n_ops) == 0)
                zk_save_committed(m, &s->plan);
}
