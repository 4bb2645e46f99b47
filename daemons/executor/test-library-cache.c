/* The library cache and function tasks, with real shared objects built from
 * tests/helpers/tasks/: fetched once (also under concurrent lookups), checked
 * against the hash, stored atomically, reused from disk when intact and
 * replaced when not; a missing or wrong ABI version and a missing symbol
 * fail with clear messages and never run anything; failures that depend on
 * the bytes are remembered, a failed fetch is not. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check-run.h"
#include "function-task.h"
#include "library-cache.h"
#include "sha256.h"
#include "test-helpers.h"

static char tmpdir[PATH_MAX], cachedir[PATH_MAX + 16];

typedef struct Blob {
        void *data;
        size_t len;
        char hash[SHA256_HEX_SIZE];
} Blob;

/* What the fake driver serves: hash → bytes (or deliberately wrong bytes). */
typedef struct Server {
        Blob libs[4];
        size_t n_libs;
        Blob *wrong;        /* served for any hash when set */
        int fail_with;      /* < 0: every fetch fails with this */
        atomic_int fetches;
} Server;

static int serve(const char *hash, void **ret_data, size_t *ret_len, char *error, size_t error_size,
                 void *userdata) {
        Server *s = userdata;
        const Blob *b = NULL;

        atomic_fetch_add(&s->fetches, 1);
        usleep(20 * 1000); /* long enough for concurrent lookups to pile up */
        if (s->fail_with < 0) {
                snprintf(error, error_size, "driver unreachable (test)");
                return s->fail_with;
        }
        if (s->wrong)
                b = s->wrong;
        for (size_t i = 0; !b && i < s->n_libs; i++)
                if (streq(s->libs[i].hash, hash))
                        b = &s->libs[i];
        if (!b) {
                snprintf(error, error_size, "unknown library %s", hash);
                return -ENOENT;
        }
        *ret_data = malloc(b->len);
        ck_assert_ptr_nonnull(*ret_data);
        memcpy(*ret_data, b->data, b->len);
        *ret_len = b->len;
        return 0;
}

static void load_blob(const char *name, Blob *b) {
        char path[PATH_MAX];

        ck_assert_msg(test_task_library(name, tmpdir, path, sizeof(path)) == 0, "cannot build %s", name);
        ck_assert_int_eq(test_read_file(path, &b->data, &b->len), 0);
        sha256_hex(b->data, b->len, b->hash);
}

static Server server;
static Blob good, noabi, abi2;

static void setup(void) {
        ck_assert_int_eq(test_mkdtemp(tmpdir, sizeof(tmpdir), "test-library-cache"), 0);
        snprintf(cachedir, sizeof(cachedir), "%s/cache", tmpdir);
        ck_assert_int_eq(mkdir(cachedir, 0700), 0);
        load_blob("spark-test-tasks", &good);
        load_blob("spark-test-tasks-noabi", &noabi);
        load_blob("spark-test-tasks-abi2", &abi2);
        server = (Server) { .libs = { good, noabi, abi2 }, .n_libs = 3 };
}

static void teardown(void) {
        free(good.data);
        free(noabi.data);
        free(abi2.data);
        test_rm_rf(tmpdir);
}

static int lookup(LibraryCache *c, const char *hash, const char *symbol, spark_task_fn *fn, char *error,
                  size_t size) {
        return library_cache_lookup(c, hash, symbol, fn, NULL, error, size);
}

START_TEST(test_load_and_call) {
        _cleanup_(library_cache_freep) LibraryCache *c = NULL;
        char error[512] = "", path[PATH_MAX];
        spark_task_fn fn = NULL, fn2 = NULL;
        TaskOutcome o = {};
        bool loaded = false;
        void *stored = NULL;
        size_t len = 0;

        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        ck_assert_int_eq(library_cache_lookup(c, good.hash, "upper", &fn, &loaded, error, sizeof(error)), 0);
        ck_assert(loaded);
        ck_assert_ptr_nonnull(fn);
        ck_assert_int_eq(atomic_load(&server.fetches), 1);

        /* Stored under its hash, byte for byte; no temporary left. */
        ck_assert_int_eq(library_cache_path(c, good.hash, path, sizeof(path)), 0);
        ck_assert_int_eq(test_read_file(path, &stored, &len), 0);
        ck_assert_uint_eq(len, good.len);
        ck_assert_mem_eq(stored, good.data, len);
        free(stored);

        function_task_call(fn, "abc", 3, 0, 1, 100, &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_OK);
        ck_assert_uint_eq(o.output_len, 3);
        ck_assert_mem_eq(o.output, "ABC", 3);
        task_outcome_done(&o);

        /* Second lookup: cached, no fetch, same function. */
        ck_assert_int_eq(library_cache_lookup(c, good.hash, "upper", &fn2, &loaded, error, sizeof(error)), 0);
        ck_assert(!loaded);
        ck_assert_ptr_eq(fn, fn2);
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn2, error, sizeof(error)), 0);
        ck_assert_ptr_ne(fn, fn2);
        ck_assert_int_eq(atomic_load(&server.fetches), 1);
}
END_TEST

typedef struct Racer {
        LibraryCache *cache;
        spark_task_fn fn;
        int r;
} Racer;

static void *race(void *arg) {
        Racer *x = arg;
        char error[256];

        x->r = lookup(x->cache, good.hash, "echo", &x->fn, error, sizeof(error));
        return NULL;
}

START_TEST(test_concurrent_lookups_fetch_once) {
        _cleanup_(library_cache_freep) LibraryCache *c = NULL;
        Racer racers[8];
        pthread_t t[8];

        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        for (unsigned i = 0; i < 8; i++) {
                racers[i] = (Racer) { .cache = c };
                ck_assert_int_eq(pthread_create(&t[i], NULL, race, &racers[i]), 0);
        }
        for (unsigned i = 0; i < 8; i++) {
                pthread_join(t[i], NULL);
                ck_assert_int_eq(racers[i].r, 0);
                ck_assert_ptr_eq(racers[i].fn, racers[0].fn);
        }
        ck_assert_int_eq(atomic_load(&server.fetches), 1);
}
END_TEST

START_TEST(test_file_on_disk) {
        char error[512], path[PATH_MAX];
        spark_task_fn fn;
        LibraryCache *c;
        FILE *f;

        /* An intact file from an earlier run is used without a fetch. */
        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), 0);
        ck_assert_int_eq(atomic_load(&server.fetches), 1);
        library_cache_free(c);

        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), 0);
        ck_assert_int_eq(atomic_load(&server.fetches), 1);

        /* A damaged one is replaced by a fresh fetch. */
        ck_assert_int_eq(library_cache_path(c, good.hash, path, sizeof(path)), 0);
        library_cache_free(c);
        ck_assert_int_eq(chmod(path, 0600), 0);
        f = fopen(path, "r+");
        ck_assert_ptr_nonnull(f);
        fputs("garbage", f);
        fclose(f);

        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), 0);
        ck_assert_int_eq(atomic_load(&server.fetches), 2);
        library_cache_free(c);
}
END_TEST

START_TEST(test_hash_mismatch) {
        _cleanup_(library_cache_freep) LibraryCache *c = NULL;
        char error[512], path[PATH_MAX];
        spark_task_fn fn;

        server.wrong = &abi2; /* the driver sends the wrong bytes */
        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), -EBADMSG);
        ck_assert_msg(strstr(error, "library hash mismatch"), "%s", error);
        ck_assert_ptr_nonnull(strstr(error, good.hash));
        ck_assert_ptr_nonnull(strstr(error, abi2.hash));
        /* Nothing stored, and remembered: no second fetch. */
        ck_assert_int_eq(library_cache_path(c, good.hash, path, sizeof(path)), 0);
        ck_assert_int_ne(access(path, F_OK), 0);
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(error, "library hash mismatch"));
        ck_assert_int_eq(atomic_load(&server.fetches), 1);
}
END_TEST

START_TEST(test_abi_missing_and_wrong) {
        _cleanup_(library_cache_freep) LibraryCache *c = NULL;
        char error[512], expected[256];
        spark_task_fn fn = NULL;

        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);

        ck_assert_int_eq(lookup(c, noabi.hash, "echo", &fn, error, sizeof(error)), -ENOEXEC);
        snprintf(expected, sizeof(expected), "library %s: no spark_task_abi_version symbol", noabi.hash);
        ck_assert_msg(strncmp(error, expected, strlen(expected)) == 0, "%s", error);
        ck_assert_ptr_null(fn);

        ck_assert_int_eq(lookup(c, abi2.hash, "echo", &fn, error, sizeof(error)), -ENOEXEC);
        snprintf(expected, sizeof(expected), "library %s: ABI version 2, expected 1", abi2.hash);
        ck_assert_str_eq(error, expected);
        ck_assert_ptr_null(fn);

        /* Remembered: the same error, no new fetch. */
        ck_assert_int_eq(lookup(c, abi2.hash, "other", &fn, error, sizeof(error)), -ENOEXEC);
        ck_assert_str_eq(error, expected);
        ck_assert_int_eq(atomic_load(&server.fetches), 2);
}
END_TEST

START_TEST(test_missing_symbol_and_bad_names) {
        _cleanup_(library_cache_freep) LibraryCache *c = NULL;
        char error[512], expected[256];
        spark_task_fn fn;

        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        ck_assert_int_eq(lookup(c, good.hash, "foo", &fn, error, sizeof(error)), -ENOENT);
        snprintf(expected, sizeof(expected), "symbol 'foo' not found in library %s", good.hash);
        ck_assert_str_eq(error, expected);
        /* The library itself is fine. */
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), 0);

        ck_assert_int_eq(lookup(c, "../../etc/passwd", "echo", &fn, error, sizeof(error)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "invalid library hash"));
        ck_assert_int_eq(lookup(c, "ABCDEF", "echo", &fn, error, sizeof(error)), -EINVAL);
        ck_assert_int_eq(lookup(c, good.hash, "", &fn, error, sizeof(error)), -EINVAL);
        ck_assert_int_eq(atomic_load(&server.fetches), 1);
}
END_TEST

START_TEST(test_fetch_failure_not_remembered) {
        _cleanup_(library_cache_freep) LibraryCache *c = NULL;
        char error[512];
        spark_task_fn fn;

        server.fail_with = -ETIMEDOUT;
        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), -ETIMEDOUT);
        ck_assert_str_eq(error, "driver unreachable (test)");
        server.fail_with = 0;
        ck_assert_int_eq(lookup(c, good.hash, "echo", &fn, error, sizeof(error)), 0);
        ck_assert_int_eq(atomic_load(&server.fetches), 2);
}
END_TEST

static void launch(Spark__TaskLaunch *l, const char *hash, const char *symbol, const char *input) {
        *l = (Spark__TaskLaunch) SPARK__TASK_LAUNCH__INIT;
        l->job_id = (char *) "job-0001";
        l->index = 41;
        l->attempt = 2;
        l->kind = SPARK__TASK_KIND__TASK_FUNCTION;
        l->library_hash = (char *) hash;
        l->symbol = (char *) symbol;
        l->input.data = (uint8_t *) input;
        l->input.len = strlen(input);
}

/* Runs symbol(input) of the library with that hash into o, within 1000
 * bytes of result; function_task_run() itself must succeed. */
static void run_symbol(LibraryCache *c, const char *hash, const char *symbol, const char *input, TaskOutcome *o) {
        Spark__TaskLaunch l;

        launch(&l, hash, symbol, input);
        ck_assert_int_eq(function_task_run(c, &l, 1000, o, NULL), 0);
}

START_TEST(test_function_task_outcomes) {
        _cleanup_(library_cache_freep) LibraryCache *c = NULL;
        Spark__TaskLaunch l;
        TaskOutcome o = {};
        char expected[256];
        bool loaded;

        ck_assert_int_eq(library_cache_new(cachedir, serve, &server, &c), 0);

        launch(&l, good.hash, "describe", "in");
        ck_assert_int_eq(function_task_run(c, &l, 1000, &o, &loaded), 0);
        ck_assert(loaded);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_OK);
        ck_assert_uint_eq(o.output_len, strlen("index=41 attempt=2 input=in"));
        ck_assert_mem_eq(o.output, "index=41 attempt=2 input=in", o.output_len);
        task_outcome_done(&o);

        /* Through the per-thread memo this time; then another symbol. */
        ck_assert_int_eq(function_task_run(c, &l, 1000, &o, &loaded), 0);
        ck_assert(!loaded);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_OK);
        task_outcome_done(&o);

        run_symbol(c, good.hash, "empty", "", &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_OK);
        ck_assert_uint_eq(o.output_len, 0);
        task_outcome_done(&o);

        run_symbol(c, good.hash, "fail", "because", &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_FAILED);
        ck_assert_int_eq(o.exit_code, 3);
        ck_assert_str_eq(o.error, "asked to fail: because");
        task_outcome_done(&o);

        run_symbol(c, good.hash, "fail_silently", "", &o);
        ck_assert_int_eq(o.exit_code, 7);
        ck_assert_str_eq(o.error, "task returned 7");
        task_outcome_done(&o);

        run_symbol(c, good.hash, "big", "1000", &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_OK);
        ck_assert_uint_eq(o.output_len, 1000);
        task_outcome_done(&o);

        run_symbol(c, good.hash, "big", "1001", &o);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_FAILED);
        ck_assert_str_eq(o.error, "result of 1001 bytes exceeds max_result_bytes (1000)");
        ck_assert_ptr_null(o.output);
        task_outcome_done(&o);

        launch(&l, good.hash, "nope", "");
        ck_assert_int_eq(function_task_run(c, &l, 1000, &o, NULL), -ENOENT);
        ck_assert_int_eq(o.status, SPARK__TASK_STATUS__TASK_FAILED);
        ck_assert_int_eq(o.exit_code, 127);
        snprintf(expected, sizeof(expected), "symbol 'nope' not found in library %s", good.hash);
        ck_assert_str_eq(o.error, expected);
        task_outcome_done(&o);

        launch(&l, abi2.hash, "echo", "");
        ck_assert_int_eq(function_task_run(c, &l, 1000, &o, &loaded), -ENOEXEC);
        ck_assert(loaded);
        ck_assert_ptr_nonnull(strstr(o.error, "ABI version 2, expected 1"));
        task_outcome_done(&o);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_load_and_call,
                test_concurrent_lookups_fetch_once,
                test_file_on_disk,
                test_hash_mismatch,
                test_abi_missing_and_wrong,
                test_missing_symbol_and_bad_names,
                test_fetch_failure_not_remembered,
                test_function_task_outcomes,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 60 };

        return check_run_tests("library-cache", &options, tests);
}
