/* The driver's journal (driver-journal.c) on a real state directory, with
 * a real driver (driver_new() from a generated config): what is journaled
 * comes back after a "restart" (driver_free() and driver_new() again);
 * results of one loop turn are synced once, a job's entry with them; a
 * torn last entry is dropped; a damaged entry stops the replay and the
 * file is kept aside; removed jobs' entries are compacted away, and a
 * compaction cut short before its rename leaves the old journal whole;
 * driver.journal_sync decides who waits for the disk. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-run.h"
#include "driver-jobs.h"
#include "driver-journal.h"
#include "macro.h"
#include "rm-rf.h"
#include "test-driver-conf.h"

#define APP "app-20261201120000-0007"

static char dir[256], state[300], config[300], journal[400];

static void setup(void) {
        char state_dir[320];

        snprintf(dir, sizeof(dir), "/tmp/test-driver-journal.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(state, sizeof(state), "%s/state", dir);
        snprintf(config, sizeof(config), "%s/driver.conf", dir);
        snprintf(journal, sizeof(journal), "%s/%s", state, DRIVER_JOURNAL_FILE);
        snprintf(state_dir, sizeof(state_dir), "state_dir = \"%s\";", state);
        test_driver_conf(config, dir, "journal", state_dir);
}

static void teardown(void) {
        (void) rm_rf_at(AT_FDCWD, dir);
}

static Driver *start(void) {
        Driver *d = NULL;

        ck_assert_int_ge(driver_new(config, &d), 0);
        ck_assert(driver_journal_enabled(d));
        return d;
}

/* Three turns of the driver's loop, none waiting: the end of the turn's
 * commit and what it set off. */
static void run_turns(Driver *d) {
        for (int i = 0; i < 3; i++)
                ck_assert_int_ge(sd_event_run(d->event, 0), 0);
}

/* A command job of n tasks, as a client submits it. */
static void command_job(Spark__SubmitJob *sj, ProtobufCBinaryData *inputs, size_t n) {
        static char lines[16][32];

        spark__submit_job__init(sj);
        sj->kind = SPARK__TASK_KIND__TASK_COMMAND;
        sj->name = (char *) "squares";
        sj->request_id = (char *) "req-1";
        for (size_t i = 0; i < n; i++) {
                snprintf(lines[i], sizeof(lines[i]), "echo %zu", i * i);
                inputs[i] = (ProtobufCBinaryData) { .len = strlen(lines[i]), .data = (uint8_t *) lines[i] };
        }
        sj->inputs = inputs;
        sj->n_inputs = n;
}

static void result(Spark__TaskResult *r, int index, const char *output) {
        spark__task_result__init(r);
        r->job_id = (char *) "job-0001";
        r->index = index;
        r->attempt = 1;
        r->status = SPARK__TASK_STATUS__TASK_OK;
        r->output = (ProtobufCBinaryData) { .len = strlen(output), .data = (uint8_t *) output };
}

/* The first run: the app, a job of 4 tasks, results of tasks 0-2 in one
 * loop turn. */
static void first_run(void) {
        Driver *d = start();
        Spark__SubmitJob sj;
        ProtobufCBinaryData inputs[4];
        Spark__TaskResult r[3];
        uint64_t syncs;

        snprintf(d->app_id, sizeof(d->app_id), APP);
        memset(d->executor_key, 0x5a, sizeof(d->executor_key));
        ck_assert_int_eq(driver_journal_app(d), 0);
        command_job(&sj, inputs, 4);
        ck_assert_int_gt(driver_journal_job(d, "job-0001", &sj, NULL, NULL), 0);
        ck_assert_int_eq(driver_restore_job(d, "job-0001", &sj), 0);  /* in the table, as a submission puts it */

        syncs = driver_journal_n_syncs(d);
        result(&r[0], 0, "0\n");
        result(&r[1], 1, "1\n");
        result(&r[2], 2, "4\n");
        for (size_t i = 0; i < 3; i++)
                driver_journal_result(d, &r[i]);
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs);  /* not one per result */
        /* the end of the turn: one sync for the batch */
        run_turns(d);
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs + 1);
        /* nothing new: no sync */
        ck_assert_int_eq(driver_journal_flush(d), 0);
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs + 1);
        driver_free(d);
}

static void job_counts(Driver *d, JobCounts *c) {
        Job *job = scheduler_first_job(d->scheduler);

        ck_assert_ptr_nonnull(job);
        ck_assert_str_eq(scheduler_job_id(job), "job-0001");
        scheduler_job_counts(job, c);
}

START_TEST(test_replay) {
        Driver *d;
        JobCounts c;
        uint8_t key[EXECUTOR_KEY_SIZE];

        first_run();
        d = start();
        memset(key, 0x5a, sizeof(key));
        ck_assert_str_eq(d->app_id, APP);
        ck_assert_mem_eq(d->executor_key, key, sizeof(key));
        job_counts(d, &c);
        ck_assert_uint_eq(c.tasks, 4);
        ck_assert_uint_eq(c.succeeded, 3);
        ck_assert_uint_eq(scheduler_n_pending(d->scheduler), 1);  /* task 3 runs again */
        ck_assert_uint_eq(driver_jobs_output_bytes(d), 6);
        /* the next job gets the next id */
        ck_assert_uint_eq(d->next_job_number, 2);
        driver_free(d);
}
END_TEST

/* A job's entry is synced by the next flush, not at the end of the loop's
 * turn: its tasks run meanwhile, and a submission that waits for them has
 * the job and its result synced together, once. */
START_TEST(test_job_entry_synced_with_its_result) {
        Driver *d = start();
        Spark__SubmitJob sj;
        ProtobufCBinaryData inputs[1];
        Spark__TaskResult r;
        struct stat st_before, st_after;
        uint64_t syncs;
        JobCounts c;

        snprintf(d->app_id, sizeof(d->app_id), APP);
        ck_assert_int_eq(driver_journal_app(d), 0);
        syncs = driver_journal_n_syncs(d);
        ck_assert_int_eq(stat(journal, &st_before), 0);

        command_job(&sj, inputs, 1);
        ck_assert_int_gt(driver_journal_job(d, "job-0001", &sj, NULL, NULL), 0);
        ck_assert_int_eq(driver_restore_job(d, "job-0001", &sj), 0);
        /* an older job removed meanwhile: no reason to sync either */
        driver_journal_forget(d, 10);
        run_turns(d);
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs);
        ck_assert_int_eq(stat(journal, &st_after), 0);
        ck_assert_int_eq(st_after.st_size, st_before.st_size);  /* not even written */

        result(&r, 0, "0\n");
        driver_journal_result(d, &r);
        ck_assert_int_eq(driver_journal_flush(d), 0);  /* as before an answer */
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs + 1);
        /* nothing left for the end of the turn */
        run_turns(d);
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs + 1);
        driver_free(d);

        d = start();
        job_counts(d, &c);
        ck_assert_uint_eq(c.tasks, 1);
        ck_assert_uint_eq(c.succeeded, 1);
        driver_free(d);
}
END_TEST

START_TEST(test_duplicate_result_dropped) {
        Driver *d;
        Spark__TaskResult r;
        JobCounts c;

        first_run();
        d = start();
        /* the same task's result again (an attempt from before the restart):
         * the journaled one stays */
        result(&r, 1, "wrong\n");
        ck_assert_int_eq(driver_restore_result(d, &r), -EALREADY);
        ck_assert_uint_eq(driver_jobs_output_bytes(d), 6);
        job_counts(d, &c);
        ck_assert_uint_eq(c.succeeded, 3);
        driver_free(d);
}
END_TEST

START_TEST(test_torn_tail) {
        struct stat st;
        Driver *d;
        JobCounts c;

        first_run();
        ck_assert_int_eq(stat(journal, &st), 0);
        /* the last result's append was cut short */
        ck_assert_int_eq(truncate(journal, st.st_size - 3), 0);
        d = start();
        ck_assert_str_eq(d->app_id, APP);
        job_counts(d, &c);
        ck_assert_uint_eq(c.succeeded, 2);
        driver_free(d);
        {
                char damaged[500];
                snprintf(damaged, sizeof(damaged), "%s/%s", state, DRIVER_JOURNAL_DAMAGED);
                ck_assert_int_ne(access(damaged, F_OK), 0);
        }
}
END_TEST

START_TEST(test_corruption) {
        char damaged[500];
        struct stat st;
        Driver *d;
        JobCounts c;
        int fd;
        uint8_t b;
        off_t off;

        first_run();
        ck_assert_int_eq(stat(journal, &st), 0);
        /* one byte flipped in the second result (the last three entries
         * are results of the same size) */
        fd = open(journal, O_RDWR);
        ck_assert_int_ge(fd, 0);
        {
                /* each result entry: 8 header + 1 type + packed TaskResult */
                Spark__TaskResult r;
                size_t entry;

                result(&r, 1, "1\n");
                entry = 8 + 1 + spark__task_result__get_packed_size(&r);
                off = st.st_size - 2 * (off_t) entry + 12;
        }
        ck_assert_int_eq(pread(fd, &b, 1, off), 1);
        b ^= 0x40;
        ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
        close(fd);

        d = start();
        job_counts(d, &c);
        ck_assert_uint_eq(c.succeeded, 1);  /* what comes before the damage */
        driver_free(d);
        snprintf(damaged, sizeof(damaged), "%s/%s", state, DRIVER_JOURNAL_DAMAGED);
        ck_assert_int_eq(stat(damaged, &st), 0);
        ck_assert_int_gt(st.st_size, 0);
}
END_TEST

START_TEST(test_remove) {
        Driver *d;

        first_run();
        d = start();
        driver_journal_remove(d);
        /* a compaction after that must not write the journal again */
        ck_assert_int_eq(driver_journal_compact(d), 0);
        driver_free(d);
        ck_assert_int_ne(access(journal, F_OK), 0);
        d = start();
        ck_assert_str_eq(d->app_id, "");
        ck_assert_ptr_null(scheduler_first_job(d->scheduler));
        driver_free(d);
}
END_TEST

/* A second driver on the same state_dir is refused while the first runs
 * (two would each take the other's jobs for its own), and gets it after. */
START_TEST(test_state_dir_in_use) {
        Driver *d = start(), *other = NULL;

        ck_assert_int_eq(driver_new(config, &other), -EBUSY);
        ck_assert_ptr_null(other);
        driver_free(d);
        d = start();
        driver_free(d);
}
END_TEST

/* ------------------------------------------------------------ compaction */

/* Three jobs of 4 tasks, each with every result, then a restart: the
 * replay counts each entry toward its job. */
static Driver *three_jobs(void) {
        static char outs[3][4][8];
        Driver *d = start();
        ProtobufCBinaryData inputs[4];
        Spark__SubmitJob sj;

        snprintf(d->app_id, sizeof(d->app_id), APP);
        memset(d->executor_key, 0x5a, sizeof(d->executor_key));
        ck_assert_int_eq(driver_journal_app(d), 0);
        command_job(&sj, inputs, 4);
        for (int k = 0; k < 3; k++) {
                char id[16];

                snprintf(id, sizeof(id), "job-%04d", k + 1);
                sj.request_id = NULL;
                ck_assert_int_gt(driver_journal_job(d, id, &sj, NULL, NULL), 0);
                ck_assert_int_eq(driver_restore_job(d, id, &sj), 0);
                for (int i = 0; i < 4; i++) {
                        Spark__TaskResult r;

                        snprintf(outs[k][i], sizeof(outs[k][i]), "%d.%d\n", k, i);
                        result(&r, i, outs[k][i]);
                        r.job_id = id;
                        ck_assert_uint_gt(driver_journal_result(d, &r), 0);
                        ck_assert_int_eq(driver_restore_result(d, &r), 0);
                }
        }
        d->next_job_number = 4;
        ck_assert_int_eq(driver_journal_flush(d), 0);
        driver_free(d);
        d = start();
        driver_journal_set_compact_min(d, 1);
        return d;
}

static size_t n_jobs(Driver *d) {
        size_t n = 0;

        for (Job *job = scheduler_first_job(d->scheduler); job; job = scheduler_next_job(job))
                n++;
        return n;
}

static off_t file_size(const char *path) {
        struct stat st;

        return stat(path, &st) < 0 ? -1 : st.st_size;
}

START_TEST(test_compaction) {
        Driver *d = three_jobs();
        uint64_t size, dead;
        off_t before = file_size(journal);
        JobCounts c;

        ck_assert_uint_eq(n_jobs(d), 3);
        driver_journal_sizes(d, &size, &dead);
        ck_assert_uint_eq(size, (uint64_t) before);
        ck_assert_uint_eq(dead, 0);
        /* two of three jobs go: two thirds of the job entries are dead */
        ck_assert_int_eq(driver_remove_job(d, "job-0001"), 0);
        ck_assert_int_eq(driver_remove_job(d, "job-0002"), 0);
        driver_journal_sizes(d, &size, &dead);
        ck_assert_uint_gt(dead * 2, size);
        /* the end of the loop's turn compacts */
        run_turns(d);
        ck_assert_uint_eq(driver_journal_n_compactions(d), 1);
        driver_journal_sizes(d, &size, &dead);
        ck_assert_uint_eq(dead, 0);
        ck_assert_uint_eq(size, (uint64_t) file_size(journal));
        ck_assert_int_lt(file_size(journal), before / 2);
        /* appends go on after the compacted entries */
        {
                Spark__SubmitJob sj;
                ProtobufCBinaryData inputs[4];

                command_job(&sj, inputs, 2);
                sj.request_id = NULL;
                ck_assert_int_gt(driver_journal_job(d, "job-0004", &sj, NULL, NULL), 0);
        }
        driver_free(d);

        /* what comes back: the application, job 3 with its results, job 4;
         * and removed jobs' ids are not given again */
        d = start();
        ck_assert_str_eq(d->app_id, APP);
        ck_assert_uint_eq(n_jobs(d), 2);
        ck_assert_str_eq(scheduler_job_id(scheduler_first_job(d->scheduler)), "job-0003");
        scheduler_job_counts(scheduler_first_job(d->scheduler), &c);
        ck_assert_uint_eq(c.succeeded, 4);
        ck_assert_uint_eq(driver_jobs_output_bytes(d), 16);
        ck_assert_uint_eq(d->next_job_number, 5);
        driver_free(d);
}
END_TEST

START_TEST(test_compaction_crash_before_rename) {
        char stale[500];
        Driver *d = three_jobs();
        off_t before = file_size(journal);

        snprintf(stale, sizeof(stale), "%s/jobs.journal.new", state);
        ck_assert_int_eq(driver_remove_job(d, "job-0001"), 0);
        ck_assert_int_eq(driver_remove_job(d, "job-0003"), 0);
        /* the new file written and synced, then the "crash": no rename */
        ck_assert_int_eq(driver_journal_compact_steps(d, true), 0);
        ck_assert_int_gt(file_size(stale), 0);
        ck_assert_int_lt(file_size(stale), before);
        ck_assert_int_eq(file_size(journal), before);  /* the old one untouched */
        driver_free(d);

        /* the old journal is whole: every job comes back, the stale file goes */
        d = start();
        ck_assert_int_eq(file_size(stale), -1);
        ck_assert_uint_eq(n_jobs(d), 3);
        ck_assert_uint_eq(driver_jobs_output_bytes(d), 48);
        /* and a compaction that finishes keeps job 2 alone */
        ck_assert_int_eq(driver_remove_job(d, "job-0001"), 0);
        ck_assert_int_eq(driver_remove_job(d, "job-0003"), 0);
        ck_assert_int_eq(driver_journal_compact(d), 0);
        driver_free(d);
        d = start();
        ck_assert_uint_eq(n_jobs(d), 1);
        ck_assert_str_eq(scheduler_job_id(scheduler_first_job(d->scheduler)), "job-0002");
        ck_assert_uint_eq(driver_jobs_output_bytes(d), 16);
        ck_assert_uint_eq(d->next_job_number, 4);
        driver_free(d);
}
END_TEST

/* journal_sync "background" (the default): a flush writes at once, so that
 * a crash of the driver keeps what a client is about to see, and leaves
 * the fdatasync() to the syncer thread, whose report comes through the
 * loop. */
START_TEST(test_background_sync) {
        Driver *d = start();
        Spark__TaskResult r;
        uint64_t syncs;
        off_t before;

        snprintf(d->app_id, sizeof(d->app_id), APP);
        ck_assert_int_eq(driver_journal_app(d), 0);
        ck_assert(!driver_journal_sync_pending(d));  /* the application's: on the loop */
        syncs = driver_journal_n_syncs(d);
        before = file_size(journal);
        result(&r, 0, "0\n");
        driver_journal_result(d, &r);
        ck_assert_int_eq(file_size(journal), before);  /* buffered */
        ck_assert_int_eq(driver_journal_flush(d), 0);
        ck_assert_int_gt(file_size(journal), before);
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs + 1);
        ck_assert(driver_journal_sync_pending(d));
        for (int i = 0; i < 500 && driver_journal_sync_pending(d); i++)
                ck_assert_int_ge(sd_event_run(d->event, 10 * 1000), 0);
        ck_assert(!driver_journal_sync_pending(d));
        driver_free(d);
}
END_TEST

/* journal_sync "before-reply": the flush syncs on the loop. */
START_TEST(test_before_reply_sync) {
        char extra[400];
        Driver *d;
        Spark__TaskResult r;
        uint64_t syncs;
        off_t before;

        snprintf(extra, sizeof(extra), "state_dir = \"%s\"; journal_sync = \"before-reply\";", state);
        test_driver_conf(config, dir, "journal", extra);
        d = start();
        snprintf(d->app_id, sizeof(d->app_id), APP);
        ck_assert_int_eq(driver_journal_app(d), 0);
        syncs = driver_journal_n_syncs(d);
        before = file_size(journal);
        result(&r, 0, "0\n");
        driver_journal_result(d, &r);
        ck_assert_int_eq(driver_journal_flush(d), 0);
        ck_assert_int_gt(file_size(journal), before);
        ck_assert_uint_eq(driver_journal_n_syncs(d), syncs + 1);
        ck_assert(!driver_journal_sync_pending(d));  /* done before the flush returned */
        driver_free(d);
}
END_TEST

/* A background sync that fails: the end of the turn writes the journal
 * anew (a compaction, synced before its rename), whatever its dead bytes,
 * and nothing in it is lost. */
START_TEST(test_background_sync_failure) {
        Driver *d = three_jobs();
        uint64_t compactions = driver_journal_n_compactions(d);

        driver_journal_sync_failed(d, -EIO);
        run_turns(d);
        ck_assert_uint_eq(driver_journal_n_compactions(d), compactions + 1);
        /* once only */
        run_turns(d);
        ck_assert_uint_eq(driver_journal_n_compactions(d), compactions + 1);
        driver_free(d);

        d = start();
        ck_assert_uint_eq(n_jobs(d), 3);
        ck_assert_uint_eq(driver_jobs_output_bytes(d), 48);
        driver_free(d);
}
END_TEST

START_TEST(test_no_compaction_below_threshold) {
        Driver *d = three_jobs();

        driver_journal_set_compact_min(d, 1024 * 1024);
        ck_assert_int_eq(driver_remove_job(d, "job-0001"), 0);
        ck_assert_int_eq(driver_remove_job(d, "job-0002"), 0);
        run_turns(d);
        ck_assert_uint_eq(driver_journal_n_compactions(d), 0);
        driver_free(d);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_replay,
                test_job_entry_synced_with_its_result,
                test_duplicate_result_dropped,
                test_torn_tail,
                test_corruption,
                test_remove,
                test_state_dir_in_use,
                test_compaction,
                test_compaction_crash_before_rename,
                test_no_compaction_below_threshold,
                test_background_sync,
                test_before_reply_sync,
                test_background_sync_failure,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown };

        return check_run_tests("driver-journal", &options, tests);
}
