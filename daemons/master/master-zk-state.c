/* The leader's state in ZooKeeper (master.recovery_mode = "zookeeper",
 * docs/ha.md): the same snapshot as state_dir/state.pb (applications with
 * their id counters, workers, executors), in znodes under
 * zookeeper_dir/state:
 *
 *   meta            "spark-master-state 1", then gen, chunks, bytes, sha256
 *   gG-NNNNNN       chunk N of generation G, at most ZK_CHUNK_BYTES
 *
 * A save writes the chunks of a new generation, then points meta at it (a
 * set with meta's version: two writers cannot both succeed), then removes
 * the older chunks.  Writes go in multi-ops of at most ZK_BATCH_BYTES of
 * data, well below the servers' packet limit (jute.maxbuffer, 1 MiB by
 * default); each also checks the leader's election znode, which exists only
 * while its session does, so that a deposed leader's write fails in
 * ZooKeeper itself.  A load reads meta, then its chunks, and checks their
 * length and digest; chunks of another generation are the leftovers of an
 * interrupted save and are removed.  Anything else under zookeeper_dir is
 * not ours: the master refuses to lead over it rather than guess.
 *
 * zoo_multi() (zoo_amulti() and a wait for its completion) runs on the
 * loop: a save blocks it for the round trips of its batches, a few ms on a
 * LAN for a small state. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "log.h"
#include "master.h"
#include "sha256.h"

#define ZK_CHUNK_BYTES (256u * 1024u)
#define ZK_BATCH_BYTES (512u * 1024u)
#define ZK_META_MAX 512
#define ZK_META_MAGIC "spark-master-state 1"
#define ZK_STATE_MAX_BYTES (256u * 1024u * 1024u)

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

static int state_dir_path(Master *m, char **ret) {
        return asprintf(ret, "%s/state", master_ha_dir(m->ha)) < 0 ? -ENOMEM : 0;
}

/* Runs one multi-op: first the check of our election znode. */
static int run_batch(Master *m, zoo_op_t *ops, int n) {
        _cleanup_free_ zoo_op_result_t *results = calloc((size_t) n, sizeof(*results));
        int zrc;

        if (!results)
                return -ENOMEM;
        zrc = zoo_multi(master_ha_handle(m->ha), n, ops, results);
        if (zrc == ZOK)
                return 0;
        if (results[0].err == ZNONODE)
                return -ETIME; /* our election znode is gone: no longer leader */
        for (int i = 0; i < n; i++)
                if (results[i].err != ZOK && results[i].err != ZRUNTIMEINCONSISTENCY)
                        return zk_errno(results[i].err);
        return zk_errno(zrc);
}

/* Removes the chunks of every generation but keep (best effort). */
static void remove_stale_chunks(Master *m, const char *dir, uint64_t keep) {
        struct String_vector children = {};
        zhandle_t *zh = master_ha_handle(m->ha);

        if (zoo_get_children(zh, dir, 0, &children) != ZOK)
                return;
        for (int i = 0; i < children.count; i++) {
                _cleanup_free_ char *p = NULL;
                uint64_t g;

                if (chunk_name_gen(children.data[i], &g) < 0 || g == keep)
                        continue;
                if (asprintf(&p, "%s/%s", dir, children.data[i]) >= 0)
                        (void) zoo_delete(zh, p, -1);
        }
        deallocate_String_vector(&children);
}

int master_zk_state_save(Master *m) {
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_free_ char *dir = NULL;
        char meta[ZK_META_MAX], hex[SHA256_HEX_SIZE];
        char paths[ZK_BATCH_BYTES / ZK_CHUNK_BYTES + 1][256];
        zoo_op_t ops[ZK_BATCH_BYTES / ZK_CHUNK_BYTES + 2];
        _cleanup_free_ char *meta_path = NULL;
        usec_t start = now_mono_usec();
        size_t len = 0, n_executors = 0, chunks, c = 0;
        uint64_t gen;
        int r;

        if (master_ha_role(m->ha) != MASTER_ROLE_LEADER)
                return log_error_errno(EROFS, "Not saving the state: this master does not lead (%s)",
                                       master_role_to_string(master_ha_role(m->ha)));
        r = master_state_pack(m, &buf, &len, &n_executors);
        if (r < 0)
                return log_error_errno(r, "Failed to collect the state to save: %m");
        if (len > ZK_STATE_MAX_BYTES)
                return log_error_errno(EFBIG, "The state (%zu bytes) is too large for ZooKeeper", len);
        if (state_dir_path(m, &dir) < 0 || asprintf(&meta_path, "%s/meta", dir) < 0)
                return log_oom();

        gen = ++m->zk_state_gen; /* never reused, even after a failed try */
        chunks = (len + ZK_CHUNK_BYTES - 1) / ZK_CHUNK_BYTES;
        while (c < chunks) {
                size_t bytes = 0;
                int n = 0;

                zoo_check_op_init(&ops[n++], master_ha_election_node(m->ha), -1);
                while (c < chunks && bytes + ZK_CHUNK_BYTES <= ZK_BATCH_BYTES) {
                        size_t off = c * ZK_CHUNK_BYTES, l = MIN(ZK_CHUNK_BYTES, len - off);
                        snprintf(paths[n], sizeof(paths[n]), "%s/g%" PRIu64 "-%06zu", dir, gen, c);
                        zoo_create_op_init(&ops[n], paths[n], (const char *) buf + off, (int) l,
                                           &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
                        n++;
                        bytes += l;
                        c++;
                }
                r = run_batch(m, ops, n);
                if (r < 0)
                        goto fail;
        }

        snprintf(meta, sizeof(meta), ZK_META_MAGIC "\ngen %" PRIu64 "\nchunks %zu\nbytes %zu\nsha256 %s\n", gen, chunks,
                 len, sha256_hex(buf, len, hex));
        zoo_check_op_init(&ops[0], master_ha_election_node(m->ha), -1);
        if (m->zk_state_version < 0)
                zoo_create_op_init(&ops[1], meta_path, meta, (int) strlen(meta), &ZOO_OPEN_ACL_UNSAFE,
                                   ZOO_PERSISTENT, NULL, 0);
        else
                zoo_set_op_init(&ops[1], meta_path, meta, (int) strlen(meta), m->zk_state_version, NULL);
        r = run_batch(m, ops, 2);
        if (r < 0)
                goto fail;
        m->zk_state_version++;
        m->state_save_cost = now_mono_usec() - start;
        remove_stale_chunks(m, dir, gen);
        log_debug("Saved the state in ZooKeeper: generation %" PRIu64 ", %zu bytes in %zu chunks, %zu executors", gen,
                  len, chunks, n_executors);
        return 0;

fail:
        remove_stale_chunks(m, dir, gen - 1 == 0 ? UINT64_MAX : gen - 1);
        if (r == -ETIME || r == -ESTALE) {
                master_deposed(m, r == -ETIME ? "its election znode is gone" : "another master wrote the state");
                return r;
        }
        return log_error_errno(r, "Failed to write the state to %s in ZooKeeper: %m", dir);
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
                uint64_t g;

                if (!state_dir && (streq(c, "election") || streq(c, "state")))
                        continue;
                if (state_dir && (streq(c, "meta") || chunk_name_gen(c, &g) >= 0))
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

int master_zk_state_load(Master *m) {
        _cleanup_free_ char *dir = NULL, *meta_path = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        zhandle_t *zh = master_ha_handle(m->ha);
        char text[ZK_META_MAX + 1];
        struct Stat st;
        size_t n_apps = 0, n_executors = 0;
        int len = ZK_META_MAX, zrc, r;
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

        zrc = zoo_get(zh, meta_path, 0, text, &len, &st);
        if (zrc == ZNONODE) {
                log_info("No saved state in ZooKeeper %s: starting afresh", dir);
                m->zk_state_version = -1;
                m->zk_state_gen = 0;
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
        remove_stale_chunks(m, dir, meta.gen);
        log_notice("Restored %zu applications, %zu workers and %zu executors from ZooKeeper %s (generation %" PRIu64
                   ", %" PRIu64 " bytes)", n_apps, hashmap_size(cluster_workers(m->cluster)), n_executors, dir,
                   meta.gen, meta.bytes);
        return 0;
}
