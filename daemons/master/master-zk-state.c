/* The leader's state in ZooKeeper (master.recovery_mode = "zookeeper",
 * docs/ha.md): the same snapshot as state_dir/state.pb (applications with
 * their id counters, workers, executors), in znodes under
 * zookeeper_dir/state, and the same journal as state_dir/apps.journal for
 * the applications registered since:
 *
 *   meta            "spark-master-state 1", then gen, chunks, bytes, sha256
 *   gG-NNNNNN       chunk N of generation G, at most ZK_CHUNK_BYTES
 *   jSSSSSSSSSSSSSSSSSSSS  journal entry S (20 digits): one StateJournalEntry
 *
 * A new application must be in ZooKeeper before it is answered.  Saving the
 * whole state for that took a multi-megabyte write per application with
 * 100,000 executors; instead the application is one small znode, its
 * journal entry (master-state.c builds it, as for apps.journal), created
 * after its first launches went out and before its answer.  App numbers
 * are reserved in blocks the same way, by entries without an app.
 *
 * A full save, on the state timer, writes the chunks of a new generation,
 * then points meta at it (a set with meta's version: two writers cannot
 * both succeed), then removes the older chunks and the journal entries
 * its snapshot holds (up to its journal_seq).  Writes go in multi-ops of at
 * most ZK_BATCH_BYTES of data, well below the servers' packet limit
 * (jute.maxbuffer, 1 MiB by default); each also checks the leader's
 * election znode, which exists only while its session does, so that a
 * deposed leader's write fails in ZooKeeper itself.
 *
 * A load reads meta, then its chunks, and checks their length and digest;
 * then it replays the journal entries after the snapshot's, in order.  A
 * znode is written whole or not at all, so an entry that does not decode,
 * or whose seq is not its name's, was not written by a master: as anything
 * else under zookeeper_dir that is not ours, the master refuses to lead
 * over it rather than guess.  Chunks of another generation are the
 * leftovers of an interrupted save and are removed, as are entries a
 * snapshot holds.
 *
 * The timer's full save goes step by step from the loop, packed by a
 * child (master-zk-save-async.c); the save here, with zoo_multi()
 * (zoo_amulti() and a wait for its completion), blocks the loop for the
 * round trips of its batches, and serves where the loop must know the
 * state is in ZooKeeper before it goes on.  A new application's journal
 * entry does not wait either: it is created with zoo_amulti()
 * and the RegisterApplication reply is held until the completion comes
 * back (master_zk_journal_sync_then_reply()); only where that cannot be
 * done does the loop wait for the entry's round trip. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc-util.h"
#include "loop-queue.h"
#include "log.h"
#include "master.h"
#include "master-zk-save.h"
#include "sha256.h"

#define ZK_META_MAGIC "spark-master-state 1"
#define ZK_STATE_MAX_BYTES (256u * 1024u * 1024u)
/* A larger entry (a huge environment) is saved in full instead. */
#define ZK_JOURNAL_ENTRY_MAX ZK_CHUNK_BYTES
#define ZK_JOURNAL_DIGITS 20

typedef struct ZkMeta {
        uint64_t gen;
        uint64_t chunks;
        uint64_t bytes;
        char sha256[SHA256_HEX_SIZE];
} ZkMeta;

static int meta_parse(const char *s, ZkMeta *ret) {
        ZkMeta meta = {};
        int n = -1;

        if (sscanf(s, ZK_META_MAGIC "\ngen %" SCNu64 "\nchunks %" SCNu64 "\nbytes %" SCNu64 "\nsha256 %64[0-9a-f]\n%n",
                   &meta.gen, &meta.chunks, &meta.bytes, meta.sha256, &n) != 4 ||
            n < 0 || s[n] != '\0')
                return -EBADMSG;
        if (!sha256_hex_is_valid(meta.sha256) || meta.bytes > ZK_STATE_MAX_BYTES || meta.chunks > 1000000 ||
            meta.chunks != (meta.bytes + ZK_CHUNK_BYTES - 1) / ZK_CHUNK_BYTES)
                return -EBADMSG;
        *ret = meta;
        return 0;
}

/* gG-NNNNNN: its generation, else -EINVAL. */
static int chunk_name_gen(const char *name, uint64_t *ret_gen) {
        uint64_t g;
        unsigned n;
        int k = -1;

        if (sscanf(name, "g%" SCNu64 "-%6u%n", &g, &n, &k) != 2 || k < 0 || name[k] != '\0' || strlen(name) > 32)
                return -EINVAL;
        *ret_gen = g;
        return 0;
}

/* jSSSSSSSSSSSSSSSSSSSS: its journal seq, else -EINVAL. */
static int journal_name_seq(const char *name, uint64_t *ret_seq) {
        uint64_t seq = 0;

        if (name[0] != 'j' || strlen(name) != 1 + ZK_JOURNAL_DIGITS)
                return -EINVAL;
        for (const char *p = name + 1; *p; p++) {
                if (*p < '0' || *p > '9' || seq > (UINT64_MAX - 9) / 10)
                        return -EINVAL;
                seq = seq * 10 + (uint64_t) (*p - '0');
        }
        if (seq == 0)
                return -EINVAL;
        *ret_seq = seq;
        return 0;
}

static int state_dir_path(Master *m, char **ret) {
        return asprintf(ret, "%s/state", master_ha_dir(m->ha)) < 0 ? -ENOMEM : 0;
}

/* Runs one multi-op on the loop: first the check of our election znode. */
static int run_batch(Master *m, zoo_op_t *ops, int n) {
        _cleanup_free_ zoo_op_result_t *results = calloc((size_t) n, sizeof(*results));

        if (!results)
                return -ENOMEM;
        return zk_batch_errno(zoo_multi(master_ha_handle(m->ha), n, ops, results), results, n);
}

int zk_batch_errno(int zrc, const zoo_op_result_t *results, int n) {
        if (zrc == ZOK)
                return 0;
        if (results[0].err == ZNONODE)
                return -ETIME; /* our election znode is gone: no longer leader */
        for (int i = 0; i < n; i++)
                if (results[i].err != ZOK && results[i].err != ZRUNTIMEINCONSISTENCY)
                        return zk_errno(results[i].err);
        return zk_errno(zrc);
}

int zk_stale_ops(Master *m, const char *dir, const struct String_vector *children, int *i, uint64_t keep_gen,
                 uint64_t journal_upto, zoo_op_t *ops, char *paths) {
        size_t bytes = 0;
        int n = 0;

        for (; *i < children->count; (*i)++) {
                const char *c = children->data[*i];
                uint64_t g, seq;
                char *p;

                if (chunk_name_gen(c, &g) >= 0 ? g == keep_gen : journal_name_seq(c, &seq) < 0 || seq > journal_upto)
                        continue;
                if (n == 0)
                        zoo_check_op_init(&ops[n++], master_ha_election_node(m->ha), -1);
                p = paths + (size_t) n * ZK_PATH_MAX;
                if (snprintf(p, ZK_PATH_MAX, "%s/%s", dir, c) >= ZK_PATH_MAX)
                        continue;
                zoo_delete_op_init(&ops[n++], p, -1);
                bytes += strlen(p) + ZK_DELETE_OP_BYTES;
                if (n > ZK_DELETE_BATCH_OPS || bytes + ZK_PATH_MAX + ZK_DELETE_OP_BYTES > ZK_BATCH_BYTES) {
                        (*i)++;
                        break;
                }
        }
        return n > 1 ? n : 0;
}

/* Removes the chunks of every generation but keep_gen and the journal
 * entries up to journal_upto (best effort: what is left is skipped at load
 * and removed by the next save), in multi-ops that check our election
 * znode, capped by bytes as the writes are. */
static void remove_stale(Master *m, const char *dir, uint64_t keep_gen, uint64_t journal_upto) {
        struct String_vector children = {};
        _cleanup_free_ zoo_op_t *ops = NULL;
        _cleanup_free_ char *paths = NULL;
        size_t removed = 0;
        int i = 0, n, r;

        if (zoo_get_children(master_ha_handle(m->ha), dir, 0, &children) != ZOK)
                return;
        ops = calloc(ZK_DELETE_BATCH_OPS + 1, sizeof(*ops));
        paths = calloc(ZK_DELETE_BATCH_OPS + 1, ZK_PATH_MAX);
        if (!ops || !paths)
                goto done;
        while ((n = zk_stale_ops(m, dir, &children, &i, keep_gen, journal_upto, ops, paths)) > 0) {
                r = run_batch(m, ops, n);
                if (r < 0) {
                        log_debug_errno(r, "Failed to remove %d stale znodes under %s, ignoring: %m", n - 1, dir);
                        break;
                }
                removed += (size_t) n - 1;
        }
        if (removed > 0)
                log_debug("Removed %zu stale znodes under %s", removed, dir);
done:
        deallocate_String_vector(&children);
}

/* After a save was dropped with its write of meta unanswered: which
 * generation meta points at, and its version. */
static int meta_read_again(Master *m, const char *meta_path) {
        char text[ZK_META_MAX + 1];
        int len = ZK_META_MAX, zrc;
        struct Stat st;
        ZkMeta meta;

        zrc = zoo_get(master_ha_handle(m->ha), meta_path, 0, text, &len, &st);
        if (zrc == ZNONODE) {
                m->zk_state_version = -1;
                m->zk_state_meta_gen = 0;
                return 0;
        }
        if (zrc != ZOK)
                return zk_errno(zrc);
        if (len < 0 || len > ZK_META_MAX)
                return -EBADMSG;
        text[len] = 0;
        if (meta_parse(text, &meta) < 0)
                return -EBADMSG;
        m->zk_state_version = st.version;
        m->zk_state_meta_gen = meta.gen;
        return 0;
}

int zk_save_plan_init(Master *m, ZkSavePlan *p) {
        int r;

        *p = (ZkSavePlan) { .seq = m->journal_seq };
        if (master_ha_role(m->ha) != MASTER_ROLE_LEADER)
                return log_error_errno(EROFS, "Not saving the state: this master does not lead (%s)",
                                       master_role_to_string(master_ha_role(m->ha)));
        if (state_dir_path(m, &p->dir) < 0 || asprintf(&p->meta_path, "%s/meta", p->dir) < 0)
                return log_oom();
        if (m->zk_state_version == ZK_STATE_VERSION_UNKNOWN) {
                r = meta_read_again(m, p->meta_path);
                if (r < 0)
                        return log_error_errno(r, "Failed to read %s again: %m", p->meta_path);
        }
        p->gen = ++m->zk_state_gen; /* never reused, even after a failed try */
        return 0;
}

int zk_save_plan_packed(ZkSavePlan *p, uint8_t *buf, size_t len, bool mapped, size_t n_executors,
                        const char sha256[static SHA256_HEX_SIZE]) {
        p->buf = buf;
        p->len = len;
        p->mapped = mapped;
        p->n_executors = n_executors;
        memcpy(p->sha256, sha256, SHA256_HEX_SIZE);
        p->sha256[SHA256_HEX_SIZE - 1] = 0;
        if (len > ZK_STATE_MAX_BYTES)
                return log_error_errno(EFBIG, "The state (%zu bytes) is too large for ZooKeeper", len);
        p->chunks = (len + ZK_CHUNK_BYTES - 1) / ZK_CHUNK_BYTES;
        return 0;
}

int zk_save_plan_pack(Master *m, ZkSavePlan *p) {
        char hex[SHA256_HEX_SIZE];
        uint8_t *buf = NULL;
        size_t len = 0, n_executors = 0;
        usec_t cpu = thread_cpu_usec();
        int r;

        r = master_state_pack(m, &buf, &len, &n_executors);
        if (r < 0)
                return log_error_errno(r, "Failed to collect the state to save: %m");
        sha256_hex(buf, len, hex);
        p->pack_cpu = thread_cpu_usec() - cpu;
        return zk_save_plan_packed(p, buf, len, false, n_executors, hex);
}

void zk_save_plan_done(ZkSavePlan *p) {
        if (p->mapped)
                (void) munmap(p->buf, p->len);
        else
                free(p->buf);
        free(p->dir);
        free(p->meta_path);
        *p = (ZkSavePlan) {};
}

int zk_save_chunk_ops(Master *m, ZkSavePlan *p, zoo_op_t *ops, char (*paths)[ZK_PATH_MAX]) {
        size_t bytes = 0;
        int n = 0;

        if (p->next_chunk >= p->chunks)
                return 0;
        zoo_check_op_init(&ops[n++], master_ha_election_node(m->ha), -1);
        while (p->next_chunk < p->chunks && bytes + ZK_CHUNK_BYTES <= ZK_BATCH_BYTES) {
                size_t off = p->next_chunk * ZK_CHUNK_BYTES, l = MIN(ZK_CHUNK_BYTES, p->len - off);

                snprintf(paths[n], ZK_PATH_MAX, "%s/g%" PRIu64 "-%06zu", p->dir, p->gen, p->next_chunk);
                zoo_create_op_init(&ops[n], paths[n], (const char *) p->buf + off, (int) l, &ZOO_OPEN_ACL_UNSAFE,
                                   ZOO_PERSISTENT, NULL, 0);
                n++;
                bytes += l;
                p->next_chunk++;
        }
        return n;
}

void zk_save_meta_ops(Master *m, ZkSavePlan *p, zoo_op_t ops[static 2]) {
        snprintf(p->meta, sizeof(p->meta), ZK_META_MAGIC "\ngen %" PRIu64 "\nchunks %zu\nbytes %zu\nsha256 %s\n",
                 p->gen, p->chunks, p->len, p->sha256);
        zoo_check_op_init(&ops[0], master_ha_election_node(m->ha), -1);
        if (m->zk_state_version < 0)
                zoo_create_op_init(&ops[1], p->meta_path, p->meta, (int) strlen(p->meta), &ZOO_OPEN_ACL_UNSAFE,
                                   ZOO_PERSISTENT, NULL, 0);
        else
                zoo_set_op_init(&ops[1], p->meta_path, p->meta, (int) strlen(p->meta), m->zk_state_version, NULL);
}

usec_t zk_save_plan_cost(const ZkSavePlan *p) {
        return p->pack_cpu + (usec_t) p->len * USEC_PER_SEC / ZK_SAVE_COST_BYTES_PER_SEC;
}

void zk_save_committed(Master *m, ZkSavePlan *p) {
        m->zk_state_version++;
        m->zk_state_meta_gen = p->gen;
        log_debug("Saved the state in ZooKeeper: generation %" PRIu64 ", %zu bytes in %zu chunks, %zu executors, "
                  "journal entries up to %" PRIu64, p->gen, p->len, p->chunks, p->n_executors, p->seq);
}

int zk_save_failed(Master *m, const ZkSavePlan *p, int r) {
        if (r == -ETIME || r == -ESTALE) {
                master_deposed(m, r == -ETIME ? "its election znode is gone" : "another master wrote the state");
                return r;
        }
        return log_error_errno(r, "Failed to write the state to %s in ZooKeeper: %m", p->dir ? p->dir : "zookeeper_dir");
}

int master_zk_state_save(Master *m) {
        _cleanup_(zk_save_plan_done) ZkSavePlan p = {};
        char paths[ZK_CHUNK_BATCH_OPS][ZK_PATH_MAX];
        zoo_op_t ops[ZK_CHUNK_BATCH_OPS];
        int n, r;

        /* an asynchronous save must not point meta at its generation after
         * this one: it ends here */
        master_zk_save_async_stop(m);
        r = zk_save_plan_init(m, &p);
        if (r >= 0)
                r = zk_save_plan_pack(m, &p);
        if (r < 0)
                return r;
        while ((n = zk_save_chunk_ops(m, &p, ops, paths)) > 0) {
                r = run_batch(m, ops, n);
                if (r < 0)
                        goto fail;
        }
        zk_save_meta_ops(m, &p, ops);
        r = run_batch(m, ops, 2);
        if (r < 0)
                goto fail;
        zk_save_committed(m, &p);
        m->state_save_cost = zk_save_plan_cost(&p);
        /* an entry built but not created yet is in the snapshot too */
        free(m->zk_journal_entry);
        m->zk_journal_entry = NULL;
        remove_stale(m, p.dir, p.gen, p.seq);
        return 0;

fail:
        /* the chunks meta points at stay, whatever failed before */
        remove_stale(m, p.dir, m->zk_state_meta_gen, 0);
        return zk_save_failed(m, &p, r);
}

/* Every child of zookeeper_dir and of state/ must be ours. */
static int check_foreign(Master *m, const char *dir, bool state_dir) {
        struct String_vector children = {};
        zhandle_t *zh = master_ha_handle(m->ha);
        int zrc, r = 0;

        zrc = zoo_get_children(zh, dir, 0, &children);
        if (zrc != ZOK)
                return log_error_errno(zk_errno(zrc), "Failed to list %s in ZooKeeper: %s", dir, zerror(zrc));
        for (int i = 0; i < children.count && r == 0; i++) {
                const char *c = children.data[i];
                uint64_t g, seq;

                if (!state_dir && (streq(c, "election") || streq(c, "state")))
                        continue;
                if (state_dir && (streq(c, "meta") || chunk_name_gen(c, &g) >= 0 || journal_name_seq(c, &seq) >= 0))
                        continue;
                r = log_error_errno(EEXIST, "%s/%s: a znode spark-master did not write; refusing to lead over it "
                                            "(master.zookeeper_dir must belong to one cluster's masters alone)",
                                    dir, c);
        }
        deallocate_String_vector(&children);
        return r;
}

static int read_chunks(Master *m, const char *dir, const ZkMeta *meta, uint8_t **ret) {
        _cleanup_free_ uint8_t *buf = NULL;
        zhandle_t *zh = master_ha_handle(m->ha);
        char path[256], hex[SHA256_HEX_SIZE];
        size_t off = 0;

        buf = malloc(meta->bytes ? meta->bytes : 1);
        if (!buf)
                return log_oom();
        for (uint64_t c = 0; c < meta->chunks; c++) {
                size_t want = MIN((uint64_t) ZK_CHUNK_BYTES, meta->bytes - off);
                int len = (int) want, zrc;

                snprintf(path, sizeof(path), "%s/g%" PRIu64 "-%06" PRIu64, dir, meta->gen, c);
                zrc = zoo_get(zh, path, 0, (char *) buf + off, &len, NULL);
                if (zrc != ZOK)
                        return log_error_errno(zk_errno(zrc), "Failed to read %s: %s", path, zerror(zrc));
                if ((size_t) len != want)
                        return log_error_errno(EBADMSG, "%s: %d bytes where meta says %zu", path, len, want);
                off += want;
        }
        if (!streq(sha256_hex(buf, meta->bytes, hex), meta->sha256))
                return log_error_errno(EBADMSG, "%s: the chunks of generation %" PRIu64 " do not match meta's digest",
                                       dir, meta->gen);
        *ret = TAKE_PTR(buf);
        return 0;
}

typedef struct ZkJournal {
        Spark__StateJournalEntry **entries; /* in seq order */
        size_t n;
} ZkJournal;

static void zk_journal_done(ZkJournal *j) {
        for (size_t i = 0; i < j->n; i++)
                spark__state_journal_entry__free_unpacked(j->entries[i], NULL);
        free(j->entries);
        *j = (ZkJournal) {};
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

/* Every journal entry under dir, in seq order, each checked: read before
 * anything is restored, so that a master refusing to lead over one has
 * changed nothing. */
static int read_journal(Master *m, const char *dir, ZkJournal *ret) {
        _cleanup_(zk_journal_done) ZkJournal j = {};
        struct String_vector children = {};
        zhandle_t *zh = master_ha_handle(m->ha);
        _cleanup_free_ uint64_t *seqs = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, total = 0;
        int zrc, r = 0;

        zrc = zoo_get_children(zh, dir, 0, &children);
        if (zrc != ZOK)
                return log_error_errno(zk_errno(zrc), "Failed to list %s in ZooKeeper: %s", dir, zerror(zrc));
        seqs = calloc((size_t) children.count + 1, sizeof(*seqs));
        if (!seqs) {
                deallocate_String_vector(&children);
                return log_oom();
        }
        for (int i = 0; i < children.count; i++)
                if (journal_name_seq(children.data[i], &seqs[n]) >= 0)
                        n++;
        deallocate_String_vector(&children);
        if (n == 0) {
                *ret = (ZkJournal) {};
                return 0;
        }
        qsort(seqs, n, sizeof(*seqs), cmp_u64);
        j.entries = calloc(n, sizeof(*j.entries));
        buf = malloc(ZK_JOURNAL_ENTRY_MAX);
        if (!j.entries || !buf)
                return log_oom();

        for (size_t i = 0; i < n; i++) {
                Spark__StateJournalEntry *e;
                char path[ZK_PATH_MAX];
                int len = ZK_JOURNAL_ENTRY_MAX;
                struct Stat st;

                snprintf(path, sizeof(path), "%s/j%0*" PRIu64, dir, ZK_JOURNAL_DIGITS, seqs[i]);
                zrc = zoo_get(zh, path, 0, buf, &len, &st);
                if (zrc != ZOK)
                        return log_error_errno(zk_errno(zrc), "Failed to read %s: %s", path, zerror(zrc));
                if (st.dataLength < 0 || (size_t) st.dataLength > ZK_JOURNAL_ENTRY_MAX || len != st.dataLength)
                        return log_error_errno(EBADMSG, "%s: %d bytes, more than any journal entry spark-master "
                                                        "writes; refusing to lead over it", path, st.dataLength);
                total += (size_t) len;
                if (total > ZK_STATE_MAX_BYTES)
                        return log_error_errno(EFBIG, "%s: the journal entries under %s hold more than %u bytes; "
                                                      "refusing to lead over them", path, dir, ZK_STATE_MAX_BYTES);
                e = spark__state_journal_entry__unpack(NULL, (size_t) len, (const uint8_t *) buf);
                if (!e)
                        return log_error_errno(EBADMSG, "%s: %d bytes that are not a spark-master journal entry; "
                                                        "refusing to lead over it", path, len);
                j.entries[j.n++] = e;
                if (e->seq != seqs[i] || (e->app && (!e->app->info || isempty(e->app->info->app_id)))) {
                        r = log_error_errno(EBADMSG, "%s: %s; refusing to lead over it", path,
                                            e->seq != seqs[i] ? "its entry's sequence number is not its name's"
                                                              : "its application has no id");
                        return r;
                }
        }
        *ret = j;
        j = (ZkJournal) {};
        return 0;
}

int master_zk_state_load(Master *m) {
        _cleanup_free_ char *dir = NULL, *meta_path = NULL;
        _cleanup_(zk_journal_done) ZkJournal journal = {};
        _cleanup_free_ uint8_t *buf = NULL;
        zhandle_t *zh = master_ha_handle(m->ha);
        char text[ZK_META_MAX + 1];
        struct Stat st;
        size_t n_apps = 0, n_executors = 0, replayed = 0;
        uint64_t snap_seq;
        int len = ZK_META_MAX, zrc, r;
        bool same_boot = false;
        ZkMeta meta;

        if (state_dir_path(m, &dir) < 0 || asprintf(&meta_path, "%s/meta", dir) < 0)
                return log_oom();
        r = check_foreign(m, master_ha_dir(m->ha), false);
        if (r < 0)
                return r;
        zrc = zoo_create(zh, dir, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
        if (zrc != ZOK && zrc != ZNODEEXISTS)
                return log_error_errno(zk_errno(zrc), "Failed to create %s in ZooKeeper: %s", dir, zerror(zrc));
        r = check_foreign(m, dir, true);
        if (r < 0)
                return r;
        r = read_journal(m, dir, &journal);
        if (r < 0)
                return r;

        zrc = zoo_get(zh, meta_path, 0, text, &len, &st);
        if (zrc == ZNONODE) {
                /* a state is saved before any entry is written */
                if (journal.n > 0)
                        return log_error_errno(ENOENT, "%s: %zu journal entries but no meta znode; refusing to lead "
                                                       "over them", dir, journal.n);
                log_info("No saved state in ZooKeeper %s: starting afresh", dir);
                m->zk_state_version = -1;
                m->zk_state_gen = 0;
                m->zk_state_meta_gen = 0;
                return master_state_save(m);
        }
        if (zrc != ZOK)
                return log_error_errno(zk_errno(zrc), "Failed to read %s: %s", meta_path, zerror(zrc));
        if (len < 0 || len > ZK_META_MAX)
                len = 0;
        text[len] = '\0';
        r = meta_parse(text, &meta);
        if (r < 0)
                return log_error_errno(r, "%s is not the meta znode of a spark-master state; refusing to lead "
                                          "over it (remove it to start afresh)", meta_path);
        r = read_chunks(m, dir, &meta, &buf);
        if (r < 0)
                return r;
        r = master_state_restore_packed(m, buf, meta.bytes, &n_apps, &n_executors);
        if (r == -EBADMSG)
                return log_error_errno(r, "%s: generation %" PRIu64 " is not a spark-master state of a known version; "
                                          "refusing to lead over it", dir, meta.gen);
        if (r < 0)
                return log_error_errno(r, "Failed to restore the state from %s: %m", dir);
        m->zk_state_version = st.version;
        m->zk_state_gen = meta.gen;
        m->zk_state_meta_gen = meta.gen;
        log_notice("Restored %zu applications, %zu workers and %zu executors from ZooKeeper %s (generation %" PRIu64
                   ", %" PRIu64 " bytes)", n_apps, hashmap_size(cluster_workers(m->cluster)), n_executors, dir,
                   meta.gen, meta.bytes);

        /* the applications registered after it, in order */
        snap_seq = m->journal_seq;
        for (size_t i = 0; i < journal.n; i++)
                replayed += (size_t) master_state_journal_apply(m, journal.entries[i], now_mono_usec(), &same_boot);
        if (m->journal_seq > snap_seq)
                log_notice("Restored %zu applications registered after the last snapshot from the journal in "
                           "ZooKeeper %s (entries %" PRIu64 " to %" PRIu64 ")", replayed, dir, snap_seq + 1,
                           m->journal_seq);
        /* The last leader hands out an app's id (to its first launches)
         * before the app's entry is in ZooKeeper: numbers up to the
         * reserved ones may be in use though nothing here records them. */
        if (cluster_next_app_number(m->cluster) < m->app_numbers_reserved)
                cluster_restore_counters(m->cluster, cluster_start_time(m->cluster), m->app_numbers_reserved);
        remove_stale(m, dir, meta.gen, snap_seq);
        return 0;
}

/* ------------------------------------------------------------ journal */

int master_zk_journal_add(Master *m, App *a) {
        uint8_t *buf = NULL;
        uint64_t seq;
        size_t len;
        int r;

        /* one entry at a time: one not created yet goes first; if it
         * still cannot be, the full save being retried holds its app */
        if (m->zk_journal_entry)
                (void) master_zk_journal_sync(m);
        free(m->zk_journal_entry);
        m->zk_journal_entry = NULL;
        /* from here on, master_zk_journal_sync() puts it in ZooKeeper:
         * as an entry, or else in a full save */
        m->journal_unsynced = true;
        r = master_state_journal_entry(m, a, 0, &buf, &len, &seq);
        if (r < 0)
                return log_warning_errno(r, "Failed to build the journal entry of %s, saving all: %m",
                                         a ? a->id : "the reserved app numbers");
        if (len > ZK_JOURNAL_ENTRY_MAX) {
                free(buf);
                log_info("The journal entry of application %s is %zu bytes, more than %u: saving all instead",
                         a ? a->id : "?", len, ZK_JOURNAL_ENTRY_MAX);
                return -EFBIG;
        }
        m->zk_journal_entry = buf;
        m->zk_journal_entry_len = len;
        m->zk_journal_entry_seq = seq;
        m->journal_seq = seq;
        return 0;
}

/* The multi-op that creates the pending journal entry (m->zk_journal_entry)
 * at path, under dir: first the check of our election znode, so that a
 * deposed leader's create fails in ZooKeeper itself.  The ops point into
 * path and the entry. */
static void journal_create_ops(Master *m, const char *dir, char path[static ZK_PATH_MAX], zoo_op_t ops[static 2]) {
        snprintf(path, ZK_PATH_MAX, "%s/j%0*" PRIu64, dir, ZK_JOURNAL_DIGITS, m->zk_journal_entry_seq);
        zoo_check_op_init(&ops[0], master_ha_election_node(m->ha), -1);
        zoo_create_op_init(&ops[1], path, (const char *) m->zk_journal_entry, (int) m->zk_journal_entry_len,
                           &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
}

/* The journal entry created without the loop waiting for ZooKeeper: the
 * reply to RegisterApplication is held until the create's completion comes
 * back (on the client's thread, handed to the loop through the master's
 * link queue).  ZooKeeper answers one client's requests in order, so
 * replies go out in the order the applications registered. */
typedef struct ZkJournalCreate {
        Master *m;
        RpcRequest *req;
        uint8_t *reply;
        size_t reply_len;
        uint8_t *entry;
        char path[ZK_PATH_MAX];
        zoo_op_t ops[2];
        zoo_op_result_t results[2];
        int rc;
} ZkJournalCreate;

static void zk_journal_create_free(ZkJournalCreate *c) {
        free(c->reply);
        free(c->entry);
        free(c);
}

static void on_zk_journal_created_queued(void *userdata, bool discard) {
        ZkJournalCreate *c = userdata;
        Master *m = c->m;

        if (discard) {
                /* the master is going: its server abandons the request */
                zk_journal_create_free(c);
                return;
        }
        if (c->rc == ZOK)
                log_debug("Journal entry %s created", c->path);
        else {
                if (c->results[0].err == ZNONODE)
                        master_deposed(m, "its election znode is gone");
                else {
                        log_warning_errno(zk_errno(c->rc), "Failed to create the journal entry %s in ZooKeeper, "
                                          "saving all: %m", c->path);
                        (void) master_state_save(m);
                }
        }
        (void) rpc_request_reply(c->req, c->reply, c->reply_len);
        zk_journal_create_free(c);
}

/* On the client's completion thread: only to the loop. */
static void on_zk_journal_created(int rc, const void *data) {
        ZkJournalCreate *c = (ZkJournalCreate *) data;

        c->rc = rc;
        if (loop_queue_push(c->m->link_queue, on_zk_journal_created_queued, c) < 0)
                /* no memory to hand it over: the driver's request times out
                 * and it registers again; the entry is in ZooKeeper or the
                 * next full save holds its app */
                zk_journal_create_free(c);
}

int master_zk_journal_sync_then_reply(Master *m, RpcRequest *req, uint8_t *reply, size_t reply_len) {
        _cleanup_free_ char *dir = NULL;
        ZkJournalCreate *c;
        int zrc;

        if (!m->journal_unsynced || !m->zk_journal_entry || master_ha_role(m->ha) != MASTER_ROLE_LEADER ||
            !m->link_queue)
                return -EAGAIN;
        if (state_dir_path(m, &dir) < 0)
                return -ENOMEM;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (ZkJournalCreate) { .m = m, .req = req, .reply = reply, .reply_len = reply_len };
        journal_create_ops(m, dir, c->path, c->ops);
        zrc = zoo_amulti(master_ha_handle(m->ha), 2, c->ops, c->results, on_zk_journal_created, c);
        if (zrc != ZOK) {
                c->reply = NULL;  /* the caller's again */
                zk_journal_create_free(c);
                return -EAGAIN;
        }
        /* the request holds the entry now */
        c->entry = TAKE_PTR(m->zk_journal_entry);
        m->journal_unsynced = false;
        return 0;
}

int master_zk_journal_sync(Master *m) {
        _cleanup_free_ char *dir = NULL;
        char path[ZK_PATH_MAX];
        zoo_op_t ops[2];
        int r;

        if (!m->journal_unsynced)
                return 0;
        if (!m->zk_journal_entry || master_ha_role(m->ha) != MASTER_ROLE_LEADER)
                return master_state_save(m); /* says why it cannot, if it cannot */
        if (state_dir_path(m, &dir) < 0)
                return log_oom();
        journal_create_ops(m, dir, path, ops);
        r = run_batch(m, ops, 2);
        if (r >= 0) {
                free(m->zk_journal_entry);
                m->zk_journal_entry = NULL;
                m->journal_unsynced = false;
                return 0;
        }
        if (r == -ETIME) {
                master_deposed(m, "its election znode is gone");
                return r;
        }
        log_warning_errno(r, "Failed to create the journal entry %s in ZooKeeper, saving all: %m", path);
        return master_state_save(m);
}
