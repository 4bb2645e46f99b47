/* The result spill (driver-spill.c) on a real file: results come back by
 * offset in any order, across the write buffer's edge and straight from
 * the file; damage and bad offsets are errors, not guesses; a spill whose
 * results are all forgotten starts again from nothing.  And a real driver
 * (driver_new()) with result_memory_mb = 1 keeps what passes the limit in
 * the spill, in its TMPDIR, and frees it with the job. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-run.h"
#include "driver-jobs.h"
#include "driver-spill.h"
#include "macro.h"
#include "rm-rf.h"
#include "test-driver-conf.h"

static char dir[256];

static void setup(void) {
        snprintf(dir, sizeof(dir), "/var/tmp/test-driver-spill.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
        (void) rm_rf_at(AT_FDCWD, dir);
}

/* The bytes of result i: its length and contents follow from i alone. */
static uint32_t result_len(unsigned i) {
        return i % 7 == 0 ? 0 : (i * 37u) % 3001u;
}

static void result_fill(unsigned i, uint8_t *buf) {
        for (uint32_t k = 0; k < result_len(i); k++)
                buf[k] = (uint8_t) (i * 31u + k);
}

static void check_result(ResultSpill *s, uint64_t offset, unsigned i) {
        uint8_t want[3001], got[3001];
        uint32_t len;
        int32_t e;

        ck_assert_int_eq(result_spill_stat(s, offset, &len, &e), 0);
        ck_assert_uint_eq(len, result_len(i));
        ck_assert_int_eq(e, (int32_t) i - 100);
        result_fill(i, want);
        ck_assert_int_eq(result_spill_read(s, offset, got, len), 0);
        if (len)
                ck_assert_mem_eq(got, want, len);
}

START_TEST(test_round_trip) {
        enum { N = 5000 };
        static uint64_t offsets[N];
        ResultSpill *s = NULL;
        uint8_t buf[3001];
        uint64_t live = 0;

        ck_assert_int_eq(result_spill_open(dir, &s), 0);
        /* no name in the directory: it goes with the process */
        {
                char cmd[400];
                snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", dir);
                ck_assert_int_eq(system(cmd), 0);
        }
        for (unsigned i = 0; i < N; i++) {
                result_fill(i, buf);
                ck_assert_int_eq(result_spill_append(s, (int32_t) i - 100, buf, result_len(i), &offsets[i]), 0);
                ck_assert_uint_eq(offsets[i] % 8, 0);
                live += result_len(i);
                /* some read back at once, from the write buffer's tail */
                if (i % 1000 == 999)
                        check_result(s, offsets[i], i);
        }
        ck_assert_uint_eq(result_spill_live_bytes(s), live);
        ck_assert_uint_gt(result_spill_file_bytes(s), 1024 * 1024);  /* more than one write buffer */
        /* in order (as a fetch reads them), then backwards, then strided */
        for (unsigned i = 0; i < N; i++)
                check_result(s, offsets[i], i);
        for (unsigned i = N; i-- > 0;)
                check_result(s, offsets[i], i);
        for (unsigned i = 0; i < N; i += 997)
                check_result(s, offsets[i], i);
        result_spill_free(s);
}
END_TEST

START_TEST(test_large_result) {
        ResultSpill *s = NULL;
        size_t n = 3u * 1024u * 1024u + 5;
        uint8_t *big = malloc(n), *back = malloc(n), small[3001];
        uint64_t before, off, after;
        uint32_t len;
        int32_t e;

        ck_assert_ptr_nonnull(big);
        ck_assert_ptr_nonnull(back);
        for (size_t k = 0; k < n; k++)
                big[k] = (uint8_t) (k * 7);
        ck_assert_int_eq(result_spill_open(dir, &s), 0);
        result_fill(1, small);
        ck_assert_int_eq(result_spill_append(s, -99, small, result_len(1), &before), 0);
        /* larger than the write buffer: straight to the file, after what is buffered */
        ck_assert_int_eq(result_spill_append(s, 3, big, (uint32_t) n, &off), 0);
        result_fill(2, small);
        ck_assert_int_eq(result_spill_append(s, -98, small, result_len(2), &after), 0);
        ck_assert_int_eq(result_spill_stat(s, off, &len, &e), 0);
        ck_assert_uint_eq(len, n);
        ck_assert_int_eq(e, 3);
        ck_assert_int_eq(result_spill_read(s, off, back, len), 0);
        ck_assert_mem_eq(back, big, n);
        check_result(s, before, 1);
        check_result(s, after, 2);
        free(big);
        free(back);
        result_spill_free(s);
}
END_TEST

START_TEST(test_bad_offsets) {
        ResultSpill *s = NULL;
        uint8_t buf[16] = "0123456789abcde";
        uint64_t off;
        uint32_t len;
        int32_t e;

        ck_assert_int_eq(result_spill_open(dir, &s), 0);
        ck_assert_int_eq(result_spill_stat(s, 0, &len, &e), -EBADMSG);  /* nothing there yet */
        ck_assert_int_eq(result_spill_append(s, 0, buf, 15, &off), 0);
        ck_assert_int_eq(result_spill_stat(s, off + 3, &len, &e), -EBADMSG);   /* not a record's start */
        ck_assert_int_eq(result_spill_stat(s, off + 64, &len, &e), -EBADMSG);  /* past the end */
        /* a record whose length says more than the file holds */
        ck_assert_int_eq(result_spill_append(s, 0, buf, 0, &off), 0);
        ck_assert_int_eq(result_spill_stat(s, off, &len, &e), 0);
        ck_assert_uint_eq(len, 0);
        result_spill_free(s);
        /* a directory that cannot hold one: an error, nothing made */
        ck_assert_int_lt(result_spill_open("/proc/version/spill", &s), 0);
        ck_assert_int_eq(result_spill_open("relative", &s), -EINVAL);
}
END_TEST

START_TEST(test_forget_empties) {
        ResultSpill *s = NULL;
        uint8_t buf[3001];
        uint64_t off, first;

        ck_assert_int_eq(result_spill_open(dir, &s), 0);
        result_fill(5, buf);
        ck_assert_int_eq(result_spill_append(s, 0, buf, result_len(5), &first), 0);
        for (unsigned i = 0; i < 999; i++)
                ck_assert_int_eq(result_spill_append(s, 0, buf, result_len(5), &off), 0);
        result_spill_forget(s, 400, 400ull * result_len(5));
        ck_assert_uint_eq(result_spill_live_bytes(s), 600ull * result_len(5));
        ck_assert_uint_gt(result_spill_file_bytes(s), 0);
        result_spill_forget(s, 600, 600ull * result_len(5));
        ck_assert_uint_eq(result_spill_live_bytes(s), 0);
        ck_assert_uint_eq(result_spill_file_bytes(s), 0);
        /* and starts again at the beginning */
        ck_assert_int_eq(result_spill_append(s, -95, buf, result_len(5), &off), 0);
        ck_assert_uint_eq(off, first);
        check_result(s, off, 5);
        result_spill_free(s);
}
END_TEST

/* ------------------------------------------------------- in a real driver */

static Driver *driver_with_small_memory(void) {
        char config[400];
        Driver *d = NULL;

        snprintf(config, sizeof(config), "%s/driver.conf", dir);
        test_driver_conf(config, dir, "spill", "result_memory_mb = 1;");
        ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
        ck_assert_int_ge(driver_new(config, &d), 0);
        return d;
}

START_TEST(test_driver_spills_beyond_limit) {
        enum { N = 3000, LEN = 1000 };
        static ProtobufCBinaryData inputs[N];
        static char lines[N][16], out[LEN];
        Spark__SubmitJob sj;
        Driver *d = driver_with_small_memory();
        Job *job;

        spark__submit_job__init(&sj);
        sj.kind = SPARK__TASK_KIND__TASK_COMMAND;
        for (unsigned i = 0; i < N; i++) {
                snprintf(lines[i], sizeof(lines[i]), "echo %u", i);
                inputs[i] = (ProtobufCBinaryData) { .len = strlen(lines[i]), .data = (uint8_t *) lines[i] };
        }
        sj.inputs = inputs;
        sj.n_inputs = N;
        ck_assert_int_eq(driver_restore_job(d, "job-0001", &sj), 0);
        for (unsigned i = 0; i < N; i++) {
                Spark__TaskResult r;

                memset(out, 'a' + i % 26, sizeof(out));
                spark__task_result__init(&r);
                r.job_id = (char *) "job-0001";
                r.index = (int) i;
                r.attempt = 1;
                r.status = SPARK__TASK_STATUS__TASK_OK;
                r.output = (ProtobufCBinaryData) { .len = LEN, .data = (uint8_t *) out };
                ck_assert_int_eq(driver_restore_result(d, &r), 0);
        }
        /* 3 MB of results, at most 1 MiB of them in memory */
        ck_assert_uint_eq(driver_jobs_output_bytes(d), (uint64_t) N * LEN);
        ck_assert_uint_le(d->results_in_memory, 1024 * 1024);
        ck_assert_ptr_nonnull(d->spill);
        ck_assert_str_eq(result_spill_dir(d->spill), dir);
        ck_assert_uint_ge(result_spill_live_bytes(d->spill), (uint64_t) N * LEN - 1024 * 1024);
        /* the job goes: so do its results, in memory and in the spill */
        job = scheduler_first_job(d->scheduler);
        ck_assert_ptr_nonnull(job);
        driver_jobs_free(d);
        ck_assert_uint_eq(d->results_in_memory, 0);
        ck_assert_uint_eq(result_spill_live_bytes(d->spill), 0);
        ck_assert_uint_eq(result_spill_file_bytes(d->spill), 0);
        driver_free(d);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_round_trip,
                test_large_result,
                test_bad_offsets,
                test_forget_empties,
                test_driver_spills_beyond_limit,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 60 };

        return check_run_tests("driver-spill", &options, tests);
}
