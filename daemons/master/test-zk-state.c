/* The zookeeper recovery mode against a real ensemble (ZK_CONNECT, from
 * tests/harness/zk.sh; skipped without one): the election, the state's
 * layout in znodes and its reload, the journal of new applications, and
 * the refusal to lead over znodes that are not ours (docs/ha.md). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-run.h"
#include "log.h"
#include "master.h"
#include "master-zk-save.h"
#include "test-master-conf.h"

#define CHUNK_MAX (256 * 1024)
#define JOURNAL_PREFIX "j"

static const uint8_t test_key[EXECUTOR_KEY_SIZE] = { 7, 7, 7 };

static char tmpdir[256];
static char zkdir[128];
static zhandle_t *zh;

static void setup(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-zk-state.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        snprintf(zkdir, sizeof(zkdir), "/spark-unit-%d-%ld", getpid(), random());
        zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
        zh = zookeeper_init(getenv("ZK_CONNECT"), NULL, 4000, NULL, NULL, 0);
        ck_assert_ptr_nonnull(zh);
        for (int i = 0; i < 400 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
                usleep(50000);
        ck_assert_int_eq(zoo_state(zh), ZOO_CONNECTED_STATE);
}

static void teardown(void) {
        char cmd[512];

        zookeeper_close(zh);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        (void) system(cmd);
}

static Master *master_at(const char *name) {
        char settings[1024];
        Master *m;

        snprintf(settings, sizeof(settings),
                 "recovery_mode = \"zookeeper\"; zookeeper = \"%s\"; zookeeper_dir = \"%s\";\n"
                 "  zookeeper_session_timeout_ms = 4000;",
                 getenv("ZK_CONNECT"), zkdir);
        m = test_master_new(tmpdir, name, settings);
        ck_assert_int_eq(master_start(m), 0);
        return m;
}

/* Runs the loop until m's role is want (or 30 s: the machines that run
 * the tests may be loaded). */
static bool run_until_role(Master *m, MasterRole want) {
        for (int i = 0; i < 600; i++) {
                if (master_ha_role(m->ha) == want)
                        return true;
                (void) sd_event_run(m->event, 50 * USEC_PER_MSEC);
        }
        return master_ha_role(m->ha) == want;
}

static void run_for(Master *m, usec_t t) {
        usec_t end = now_mono_usec() + t;
        while (now_mono_usec() < end)
                (void) sd_event_run(m->event, 20 * USEC_PER_MSEC);
}

static void add_workers(Master *m, int n) {
        char id[64], host[200], ep[128];
        for (int i = 0; i < n; i++) {
                snprintf(id, sizeof(id), "worker-20260101000000-h%d-1", i);
                /* long host names: a state of several chunks */
                snprintf(host, sizeof(host), "host-%d-%0150d", i, 0);
                snprintf(ep, sizeof(ep), "tcp://10.0.%d.%d:7081", i / 250, i % 250);
                WorkerRegistration reg = { id, host, ep, "", 4, 1024, NULL, 0, NULL, 0 };
                ck_assert_int_ge(cluster_register_worker(m->cluster, &reg, NULL, 0, now_mono_usec(), NULL, NULL), 0);
        }
}

static void synced(int rc, const char *value, const void *data) {
        (void) rc, (void) value;
        __atomic_store_n((int *) data, 1, __ATOMIC_RELEASE);
}

/* Our session's server may lag behind the one the master wrote through:
 * ZooKeeper's reads are not linearizable.  A sync brings it up to date
 * before we read what the master wrote. */
static void zk_sync(void) {
        int done = 0;

        ck_assert_int_eq(zoo_async(zh, "/", synced, &done), ZOK);
        for (int i = 0; i < 2000 && !__atomic_load_n(&done, __ATOMIC_ACQUIRE); i++)
                usleep(5000);
        ck_assert(__atomic_load_n(&done, __ATOMIC_ACQUIRE));
}

static int children(const char *path, struct String_vector *v) {
        zk_sync();
        return zoo_get_children(zh, path, 0, v);
}

/* An app as RegisterApplication leaves it: its number reserved, itself
 * journaled and synced. */
static App *add_app(Master *m) {
        AppRegistration reg = { .name = "t", .driver_url = "ipc:///nonexistent/d.sock", .cores_per_executor = 1,
                                .executor_memory_mb = 64, .executor_key = test_key,
                                .executor_key_len = sizeof(test_key), .weight = 1, .max_cores = 2 };
        App *a = NULL;

        ck_assert_int_eq(master_state_reserve_app_number(m), 0);
        ck_assert_int_eq(cluster_register_app(m->cluster, &reg, now_mono_usec(), &a), 0);
        ck_assert_int_eq(master_state_app_registered(m, a), 0);
        ck_assert_int_eq(master_state_sync(m), 0);
        return a;
}

/* The journal znodes under state/, in order of their names (which is the
 * order of their sequence numbers: fixed width), into names unless it is
 * NULL; returns how many. */
static int journal_entries(char names[][64], int max) {
        struct String_vector v = {};
        char path[256];
        int n = 0;

        snprintf(path, sizeof(path), "%s/state", zkdir);
        ck_assert_int_eq(children(path, &v), ZOK);
        for (int i = 0; i < v.count; i++)
                if (strncmp(v.data[i], JOURNAL_PREFIX, strlen(JOURNAL_PREFIX)) == 0) {
                        if (names) {
                                ck_assert_int_lt(n, max);
                                snprintf(names[n], 64, "%s", v.data[i]);
                        }
                        n++;
                }
        deallocate_String_vector(&v);
        if (names)
                qsort(names, (size_t) n, 64, (int (*)(const void *, const void *)) strcmp);
        return n;
}

static int journal_count(void) {
        return journal_entries(NULL, 0);
}

static Spark__StateJournalEntry *journal_read(const char *name) {
        static char buf[CHUNK_MAX];
        char path[256];
        int len = sizeof(buf);

        snprintf(path, sizeof(path), "%s/state/%s", zkdir, name);
        zk_sync();
        ck_assert_int_eq(zoo_get(zh, path, 0, buf, &len, NULL), ZOK);
        return spark__state_journal_entry__unpack(NULL, (size_t) len, (const uint8_t *) buf);
}

/* A new master takes over from m1 as after a crash of m1: m1's election
 * znode goes (as when its session ends) before m1 saves anything more; m1
 * sees it is deposed, and its save at exit fails in ZooKeeper.  (Two
 * masters cannot run at once in one process: they share the signals.)
 * Returns the new master, leading, with the state loaded. */
static Master *take_over(Master *m1, const char *name) {
        Master *m2;

        ck_assert_int_eq(zoo_delete(zh, master_ha_election_node(m1->ha), -1), ZOK);
        for (int i = 0; i < 200 && sd_event_get_state(m1->event) != SD_EVENT_FINISHED; i++)
                (void) sd_event_run(m1->event, 50 * USEC_PER_MSEC);
        ck_assert_int_eq(sd_event_get_state(m1->event), SD_EVENT_FINISHED);
        master_free(m1);
        m2 = master_at(name);
        ck_assert(run_until_role(m2, MASTER_ROLE_LEADER));
        return m2;
}

START_TEST(test_election_standby_then_leader) {
        char path[256], created[256];
        Master *m;

        /* a candidate before us, as another master would be */
        snprintf(path, sizeof(path), "%s", zkdir);
        ck_assert_int_eq(zoo_create(zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
        snprintf(path, sizeof(path), "%s/election", zkdir);
        ck_assert_int_eq(zoo_create(zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
        snprintf(path, sizeof(path), "%s/election/master_", zkdir);
        ck_assert_int_eq(zoo_create(zh, path, "tcp://other:7077\ntcp://other:7078", 34, &ZOO_OPEN_ACL_UNSAFE,
                                    ZOO_EPHEMERAL_SEQUENTIAL, created, sizeof(created)),
                         ZOK);

        m = master_at("m1");
        run_for(m, 1500 * USEC_PER_MSEC);
        ck_assert_int_eq(master_ha_role(m->ha), MASTER_ROLE_STANDBY);
        ck_assert_ptr_nonnull(master_ha_leader_url(m->ha));
        ck_assert_str_eq(master_ha_leader_url(m->ha), "tcp://other:7077");
        ck_assert_uint_eq(master_ha_epoch(m->ha), 0);

        /* the other candidate's session ends: we lead, with the epoch of
         * our znode (after the other's) */
        ck_assert_int_eq(zoo_delete(zh, created, -1), ZOK);
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        ck_assert_uint_ge(master_ha_epoch(m->ha), 2);
        master_free(m);
}
END_TEST

START_TEST(test_state_layout_and_reload) {
        struct String_vector v = {};
        char path[256], meta[512];
        int len = sizeof(meta) - 1, chunks = 0;
        unsigned long long gen, n_chunks, bytes;
        Master *m;

        m = master_at("m1");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        add_workers(m, 3000);
        ck_assert_int_eq(master_state_save(m), 0);

        snprintf(path, sizeof(path), "%s/state/meta", zkdir);
        zk_sync();
        ck_assert_int_eq(zoo_get(zh, path, 0, meta, &len, NULL), ZOK);
        meta[len] = '\0';
        ck_assert_int_eq(sscanf(meta, "spark-master-state 1\ngen %llu\nchunks %llu\nbytes %llu\n", &gen, &n_chunks, &bytes),
                         3);
        ck_assert_uint_gt(bytes, 2 * CHUNK_MAX); /* several chunks, several batches */
        ck_assert_uint_eq(n_chunks, (bytes + CHUNK_MAX - 1) / CHUNK_MAX);

        snprintf(path, sizeof(path), "%s/state", zkdir);
        ck_assert_int_eq(children(path, &v), ZOK);
        for (int i = 0; i < v.count; i++) {
                char p[512];
                struct Stat st;
                char prefix[64];

                if (streq(v.data[i], "meta"))
                        continue;
                snprintf(prefix, sizeof(prefix), "g%llu-", gen);
                /* only the current generation is left */
                ck_assert_msg(strncmp(v.data[i], prefix, strlen(prefix)) == 0, "%s", v.data[i]);
                snprintf(p, sizeof(p), "%s/%s", path, v.data[i]);
                ck_assert_int_eq(zoo_exists(zh, p, 0, &st), ZOK);
                ck_assert_int_le(st.dataLength, CHUNK_MAX);
                chunks++;
        }
        deallocate_String_vector(&v);
        ck_assert_int_eq(chunks, (int) n_chunks);

        /* a second save: a new generation, the old one removed */
        add_workers(m, 1);
        ck_assert_int_eq(master_state_save(m), 0);
        master_free(m);

        m = master_at("m2");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        ck_assert_uint_eq(hashmap_size(cluster_workers(m->cluster)), 3000);
        master_free(m);
}
END_TEST

static void refuses_over(const char *what) {
        Master *m = master_at("m3");
        ck_assert_msg(run_until_role(m, MASTER_ROLE_REFUSING), "%s", what);
        /* it keeps running and answers as a standby; nothing was loaded */
        run_for(m, 300 * USEC_PER_MSEC);
        ck_assert_uint_eq(hashmap_size(cluster_workers(m->cluster)), 0);
        master_free(m);
}

/* A leader with two workers saves its state in ZooKeeper and goes. */
static void leave_saved_state(void) {
        Master *m = master_at("m1");

        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        add_workers(m, 2);
        ck_assert_int_eq(master_state_save(m), 0);
        master_free(m);
}

START_TEST(test_refuses_foreign_znodes) {
        char path[256];

        leave_saved_state();

        /* a znode of someone else's beside ours */
        snprintf(path, sizeof(path), "%s/kafka", zkdir);
        ck_assert_int_eq(zoo_create(zh, path, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
        refuses_over("a foreign znode under zookeeper_dir");
        ck_assert_int_eq(zoo_delete(zh, path, -1), ZOK);

        /* garbage in meta */
        snprintf(path, sizeof(path), "%s/state/meta", zkdir);
        ck_assert_int_eq(zoo_set(zh, path, "hello", 5, -1), ZOK);
        refuses_over("garbage in state/meta");
}
END_TEST

START_TEST(test_refuses_damaged_chunk) {
        struct String_vector v = {};
        char path[256];
        int damaged = 0;
        Master *m;

        m = master_at("m1");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        add_workers(m, 5);
        ck_assert_int_eq(master_state_save(m), 0);
        master_free(m);

        snprintf(path, sizeof(path), "%s/state", zkdir);
        ck_assert_int_eq(children(path, &v), ZOK);
        for (int i = 0; i < v.count; i++)
                if (v.data[i][0] == 'g') {
                        char p[512];
                        int rc;

                        snprintf(p, sizeof(p), "%s/%s", path, v.data[i]);
                        /* an older generation's chunk may be removed by the
                         * master's last save while we list: skip it */
                        rc = zoo_set(zh, p, "not the state", 13, -1);
                        if (rc == ZNONODE)
                                continue;
                        ck_assert_int_eq(rc, ZOK);
                        damaged++;
                }
        deallocate_String_vector(&v);
        ck_assert_int_gt(damaged, 0);
        refuses_over("a chunk that does not match meta");
}
END_TEST

START_TEST(test_journal_entry_per_app) {
        char names[16][64], a1[64], a2[64];
        uint64_t gen, seq;
        Spark__StateJournalEntry *e;
        Master *m, *m2;
        App *a;
        int n;

        m = master_at("m1");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        add_workers(m, 3);
        ck_assert_int_eq(master_state_save(m), 0);
        gen = m->zk_state_meta_gen;
        ck_assert_int_eq(journal_entries(names, 16), 0);

        snprintf(a1, sizeof(a1), "%s", add_app(m)->id);
        a = add_app(m);
        snprintf(a2, sizeof(a2), "%s", a->id);
        /* no full save: one znode per app, and one for the reserved numbers */
        ck_assert_uint_eq(m->zk_state_meta_gen, gen);
        ck_assert_ptr_null(m->zk_journal_entry);
        ck_assert(!m->journal_unsynced);
        n = journal_entries(names, 16);
        ck_assert_int_eq(n, 3);
        ck_assert_int_eq(sscanf(names[n - 1], JOURNAL_PREFIX "%" SCNu64, &seq), 1);
        ck_assert_uint_eq(seq, m->journal_seq);
        e = journal_read(names[n - 1]);
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->seq, seq);
        ck_assert_ptr_nonnull(e->app);
        ck_assert_str_eq(e->app->info->app_id, a2);
        ck_assert_uint_eq(e->app->executor_key.len, sizeof(test_key));
        spark__state_journal_entry__free_unpacked(e, NULL);
        e = journal_read(names[0]);
        ck_assert_ptr_nonnull(e);
        ck_assert_ptr_null(e->app); /* the numbers reserved before the first app */
        ck_assert_uint_gt(e->app_numbers_reserved, e->next_app_number);
        spark__state_journal_entry__free_unpacked(e, NULL);

        /* a new leader: the snapshot's workers, the journal's apps */
        m2 = take_over(m, "m2");
        ck_assert_uint_eq(hashmap_size(cluster_workers(m2->cluster)), 3);
        ck_assert_ptr_nonnull(cluster_app(m2->cluster, a1));
        ck_assert_ptr_nonnull(cluster_app(m2->cluster, a2));
        ck_assert_uint_eq(m2->journal_seq, seq);
        /* the numbers the old leader reserved are not handed out again (an
         * id may have gone out before its entry was written) */
        a = add_app(m2);
        ck_assert_str_ne(a->id, a1);
        ck_assert_str_ne(a->id, a2);
        ck_assert_uint_ge(cluster_next_app_number(m2->cluster), 64);
        n = journal_entries(names, 16);
        ck_assert_int_ge(n, 4);
        ck_assert_int_eq(sscanf(names[n - 1], JOURNAL_PREFIX "%" SCNu64, &seq), 1);
        ck_assert_uint_eq(seq, m2->journal_seq);
        master_free(m2);
}
END_TEST

START_TEST(test_full_save_removes_covered_entries) {
        char names[16][64], ids[3][64], last[64];
        uint64_t covered;
        Master *m, *m2;

        m = master_at("m1");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        add_workers(m, 2);
        for (int i = 0; i < 3; i++)
                snprintf(ids[i], sizeof(ids[i]), "%s", add_app(m)->id);
        ck_assert_int_eq(journal_entries(names, 16), 4);

        /* the snapshot holds them all: they go */
        covered = m->journal_seq;
        ck_assert_int_eq(master_state_save(m), 0);
        ck_assert_int_eq(journal_entries(names, 16), 0);

        /* more entries than one multi-op deletes: all go */
        for (int i = 0; i < 1010; i++)
                (void) add_app(m);
        ck_assert_int_eq(journal_count(), 1010);
        covered = m->journal_seq;
        ck_assert_int_eq(master_state_save(m), 0);
        ck_assert_int_eq(journal_count(), 0);

        /* one more after it stays, and only it is replayed */
        snprintf(last, sizeof(last), "%s", add_app(m)->id);
        ck_assert_int_eq(journal_entries(names, 16), 1);
        ck_assert_uint_eq(m->journal_seq, covered + 1);

        m2 = take_over(m, "m2");
        for (int i = 0; i < 3; i++)
                ck_assert_ptr_nonnull(cluster_app(m2->cluster, ids[i]));
        ck_assert_ptr_nonnull(cluster_app(m2->cluster, last));
        ck_assert_uint_eq(m2->journal_seq, covered + 1);
        ck_assert_uint_eq(hashmap_size(cluster_workers(m2->cluster)), 2);
        master_free(m2);
}
END_TEST

/* Runs m's loop until its timer's save has started and ended (or 30 s). */
static bool run_until_async_save_ends(Master *m, unsigned *ret_loops_during) {
        bool started = false;
        unsigned loops = 0;

        for (int i = 0; i < 3000; i++) {
                if (m->zk_save) {
                        started = true;
                        loops++;
                } else if (started)
                        break;
                (void) sd_event_run(m->event, 10 * USEC_PER_MSEC);
        }
        if (ret_loops_during)
                *ret_loops_during = loops;
        return started && !m->zk_save;
}

START_TEST(test_timer_save_does_not_hold_the_loop) {
        char names[16][64], during[64];
        uint64_t saves, seq_before;
        unsigned loops = 0;
        Master *m, *m2;

        m = master_at("m1");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        (void) run_until_async_save_ends(m, NULL); /* the one after it took over, if any */
        (void) add_app(m);
        add_workers(m, 3000); /* several batches of chunks */
        saves = m->metrics.state_saves[1];
        seq_before = m->journal_seq;

        /* the timer's save: the loop goes on while ZooKeeper writes it */
        master_state_changed(m);
        for (int i = 0; i < 600 && !m->zk_save; i++)
                (void) sd_event_run(m->event, 10 * USEC_PER_MSEC);
        ck_assert_ptr_nonnull(m->zk_save);
        ck_assert_int_gt(m->state_child, 0); /* packing it */
        /* an application registered meanwhile: its entry is after the
         * snapshot's, and stays */
        snprintf(during, sizeof(during), "%s", add_app(m)->id);
        ck_assert(run_until_async_save_ends(m, &loops));
        ck_assert_uint_gt(loops, 1);
        ck_assert_uint_eq(m->metrics.state_saves[1], saves + 1);
        ck_assert_int_eq(m->state_save_error, 0);
        ck_assert_int_eq(master_ha_role(m->ha), MASTER_ROLE_LEADER);
        ck_assert_int_eq(journal_entries(names, 16), 1);
        ck_assert_uint_eq(m->journal_seq, seq_before + 1);

        m2 = take_over(m, "m2");
        ck_assert_uint_eq(hashmap_size(cluster_workers(m2->cluster)), 3000);
        ck_assert_ptr_nonnull(cluster_app(m2->cluster, during));
        master_free(m2);
}
END_TEST

/* A save on the loop ends the timer's save, wherever it has got to, and
 * the master stays the leader: meta's version is the one it wrote last. */
START_TEST(test_loop_save_ends_a_timer_save) {
        Master *m, *m2;

        m = master_at("m1");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        add_workers(m, 3000);
        for (unsigned steps = 0; steps < 8; steps++) {
                ck_assert_int_eq(master_zk_save_async_start(m), 0);
                for (unsigned i = 0; i < steps; i++)
                        (void) sd_event_run(m->event, 50 * USEC_PER_MSEC);
                ck_assert_int_eq(master_state_save(m), 0);
                ck_assert_ptr_null(m->zk_save);
                ck_assert_int_eq(master_ha_role(m->ha), MASTER_ROLE_LEADER);
        }
        /* and what a dropped save's completions bring is let go */
        run_for(m, 500 * USEC_PER_MSEC);
        ck_assert_int_eq(master_ha_role(m->ha), MASTER_ROLE_LEADER);

        m2 = take_over(m, "m2");
        ck_assert_uint_eq(hashmap_size(cluster_workers(m2->cluster)), 3000);
        master_free(m2);
}
END_TEST

/* A save's cost, which sets the delay before the next one: its packing's
 * CPU time and its bytes, not the ensemble's round trips nor a wait for a
 * core. */
START_TEST(test_save_cost) {
        const usec_t ms = USEC_PER_MSEC;
        ZkSavePlan small = { .pack_cpu = 2 * ms, .len = 2048 }, large = { .pack_cpu = 40 * ms, .len = 5u << 20 };

        /* a small cluster's state: packed in 2 ms of CPU */
        ck_assert_uint_eq(zk_save_plan_cost(&small), 2 * ms + 78);
        ck_assert_uint_eq(master_state_save_delay(zk_save_plan_cost(&small)), 207800);
        /* had the half second its niced child waited for a busy core
         * counted, its next save would have waited the cap of 10 s */
        ck_assert_uint_eq(master_state_save_delay(500 * ms), 10 * USEC_PER_SEC);

        /* 5 MiB: 200 ms of the ensemble's writing; the delay's cap */
        ck_assert_uint_eq(zk_save_plan_cost(&large), 240 * ms);
        ck_assert_uint_eq(master_state_save_delay(zk_save_plan_cost(&large)), 10 * USEC_PER_SEC);
}
END_TEST

START_TEST(test_refuses_garbage_journal_entry) {
        Spark__StateJournalEntry entry = SPARK__STATE_JOURNAL_ENTRY__INIT;
        uint8_t packed[64];
        char path[256];
        size_t len;
        Master *m;

        leave_saved_state();

        /* bytes that are no entry, under an entry's name */
        snprintf(path, sizeof(path), "%s/state/" JOURNAL_PREFIX "%020d", zkdir, 99);
        ck_assert_int_eq(zoo_create(zh, path, "\xff\xff\xff garbage", 11, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
        refuses_over("a journal znode that is not an entry");

        /* an entry, but not the one its name says */
        entry.seq = 98;
        entry.next_app_number = 1;
        len = spark__state_journal_entry__get_packed_size(&entry);
        ck_assert_uint_le(len, sizeof(packed));
        spark__state_journal_entry__pack(&entry, packed);
        ck_assert_int_eq(zoo_set(zh, path, (const char *) packed, (int) len, -1), ZOK);
        refuses_over("a journal znode whose seq is not its name's");

        /* a name that is not an entry's */
        ck_assert_int_eq(zoo_delete(zh, path, -1), ZOK);
        snprintf(path, sizeof(path), "%s/state/" JOURNAL_PREFIX "12x", zkdir);
        ck_assert_int_eq(zoo_create(zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
        refuses_over("a znode named almost like a journal entry");

        /* the right entry: it leads, with the snapshot */
        ck_assert_int_eq(zoo_delete(zh, path, -1), ZOK);
        snprintf(path, sizeof(path), "%s/state/" JOURNAL_PREFIX "%020d", zkdir, 98);
        ck_assert_int_eq(zoo_create(zh, path, (const char *) packed, (int) len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                         ZOK);
        m = master_at("m4");
        ck_assert(run_until_role(m, MASTER_ROLE_LEADER));
        ck_assert_uint_eq(hashmap_size(cluster_workers(m->cluster)), 2);
        ck_assert_uint_eq(m->journal_seq, 98);
        master_free(m);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_election_standby_then_leader,
                test_state_layout_and_reload,
                test_refuses_foreign_znodes,
                test_refuses_damaged_chunk,
                test_journal_entry_per_app,
                test_full_save_removes_covered_entries,
                test_refuses_garbage_journal_entry,
                test_timer_save_does_not_hold_the_loop,
                test_loop_save_ends_a_timer_save,
                test_save_cost,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 180 };

        /* before libcheck allocates anything: LeakSanitizer would see it */
        if (!getenv("ZK_CONNECT")) {
                fprintf(stderr, "test-zk-state: no ZooKeeper ensemble (ZK_CONNECT), skipping\n");
                return 77;
        }
        log_set_max_level(LOG_WARNING);
        srandom((unsigned) getpid());
        return check_run_tests("zk-state", &options, tests);
}
