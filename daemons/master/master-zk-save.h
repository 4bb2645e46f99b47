/* The pieces of a full save of the state in ZooKeeper (master-zk-state.c,
 * docs/ha.md) that the save on the loop and the timer's asynchronous save
 * (master-zk-save-async.c) share: the plan of one save and the multi-ops
 * of each of its steps. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "master.h"
#include "sha256.h"

#define ZK_CHUNK_BYTES (256u * 1024u)
#define ZK_BATCH_BYTES (512u * 1024u)
#define ZK_META_MAX 512
#define ZK_PATH_MAX 256
/* At most this many deletes in one multi-op, and the bytes of a delete op
 * beside its path, counted against ZK_BATCH_BYTES */
#define ZK_DELETE_BATCH_OPS 1000
#define ZK_DELETE_OP_BYTES 16u
/* The most ops of one batch of chunks: the check of our election znode,
 * then the chunks */
#define ZK_CHUNK_BATCH_OPS (ZK_BATCH_BYTES / ZK_CHUNK_BYTES + 1)

/* Master.zk_state_version when a save was dropped with its write of meta
 * unanswered: the next save reads meta again first */
#define ZK_STATE_VERSION_UNKNOWN (-2)

/* One save: the packed state and where its writing has got to. */
typedef struct ZkSavePlan {
        uint8_t *buf;
        size_t len, n_executors;
        uint64_t gen;       /* the generation its chunks are written as */
        uint64_t seq;       /* the last journal entry its snapshot holds */
        size_t chunks, next_chunk;
        char *dir;          /* zookeeper_dir/state */
        char *meta_path;
        char meta[ZK_META_MAX];
        char sha256[SHA256_HEX_SIZE];
        bool mapped;        /* buf is a mapping of len bytes, not an allocation */
        usec_t pack_cpu;    /* the CPU time its packing took, where it ran */
} ZkSavePlan;

/* A save of the state as it is now (the leader's only; -EROFS on a
 * standby): its generation, the last journal entry it holds, where it
 * goes.  Then the state is packed into it on the loop (_pack()), or else
 * where (_packed(), which takes buf over). */
int zk_save_plan_init(Master *m, ZkSavePlan *p);
int zk_save_plan_pack(Master *m, ZkSavePlan *p);
int zk_save_plan_packed(ZkSavePlan *p, uint8_t *buf, size_t len, bool mapped, size_t n_executors,
                        const char sha256[static SHA256_HEX_SIZE]);
void zk_save_plan_done(ZkSavePlan *p);
/* The next batch of chunks, after the check of our election znode:
 * 0 once every chunk was given.  ops and paths have ZK_CHUNK_BATCH_OPS. */
int zk_save_chunk_ops(Master *m, ZkSavePlan *p, zoo_op_t *ops, char (*paths)[ZK_PATH_MAX]);
/* The check of our election znode and the write of meta, pointing at the
 * plan's generation (a set with meta's version). */
void zk_save_meta_ops(Master *m, ZkSavePlan *p, zoo_op_t ops[static 2]);
/* The bytes the ensemble writes in the time a save's cost stands for:
 * the delay before the next save is 100 times the cost (master-state.c),
 * so the timer's saves write at most 256 KiB a second to the ensemble on
 * average (up to the delay's cap of 10 s, which a state of 2.5 MiB
 * reaches). */
#define ZK_SAVE_COST_BYTES_PER_SEC (25u * 1024u * 1024u)
/* What the save cost, for the delay before the next one: its packing's CPU
 * time, and its bytes at ZK_SAVE_COST_BYTES_PER_SEC.  Not the time the
 * packing took: a child at a low priority on busy cores waits for one, and
 * 100 times that wait put the next save seconds away.
 * Not its round trips, about 10 ms each on a 3-node ensemble whatever they
 * carry: latency costs neither this master's loop nor the ensemble any
 * work, and counting it put every save of a small state a second or more
 * after its change.  A leader killed in that second left its successor a
 * state without the workers that had just registered, and the successor
 * held placement for all of worker_timeout_ms (docs/ha.md, "Recovery
 * after a failover"). */
usec_t zk_save_plan_cost(const ZkSavePlan *p);
/* Meta points at the plan's generation now. */
void zk_save_committed(Master *m, ZkSavePlan *p);
/* A step of the save failed with r: the master is deposed if its election
 * znode is gone or another master wrote meta; logged otherwise.  Returns r. */
int zk_save_failed(Master *m, const ZkSavePlan *p, int r);

/* What a multi-op's results say: 0, -ETIME (our election znode is gone:
 * no longer leader), or the first error. */
int zk_batch_errno(int zrc, const zoo_op_result_t *results, int n);

/* The next batch of deletes of stale znodes among children (from *i on):
 * chunks of other generations than keep_gen, journal entries up to
 * journal_upto; after the check of our election znode.  0: none left.
 * ops has ZK_DELETE_BATCH_OPS + 1 entries, paths as many of ZK_PATH_MAX. */
int zk_stale_ops(Master *m, const char *dir, const struct String_vector *children, int *i, uint64_t keep_gen,
                 uint64_t journal_upto, zoo_op_t *ops, char *paths);
