/* See function-task.h.  The library cache takes two locks and a map lookup;
 * a stream of tiny tasks of one job goes through the per-thread memo below
 * instead, which costs two string compares. */
#include "function-task.h"
#include "sha256.h"

#define MEMO_SYMBOL_MAX 128u

static __thread struct {
        uint64_t cache_id;
        char hash[SHA256_HEX_SIZE];
        char symbol[MEMO_SYMBOL_MAX];
        spark_task_fn fn;
} memo;

static int lookup(LibraryCache *libs, const char *hash, const char *symbol, spark_task_fn *ret, bool *ret_loaded,
                  char *error, size_t error_size) {
        uint64_t id = library_cache_id(libs);
        int r;

        if (memo.fn && memo.cache_id == id && streq_ptr(memo.hash, hash) && streq_ptr(memo.symbol, symbol)) {
                *ret = memo.fn;
                return 0;
        }
        r = library_cache_lookup(libs, hash, symbol, ret, ret_loaded, error, error_size);
        if (r < 0)
                return r;
        if (strlen(symbol) < MEMO_SYMBOL_MAX) {
                /* hash is valid (64 hex digits) since the lookup succeeded */
                memo.cache_id = id;
                memcpy(memo.hash, hash, SHA256_HEX_SIZE);
                strcpy(memo.symbol, symbol);
                memo.fn = *ret;
        }
        return 0;
}

void function_task_call(spark_task_fn fn, const void *input, size_t input_len, int64_t index, int32_t attempt,
                        size_t max_output, TaskOutcome *o) {
        spark_task_input in = {
                .data = input_len > 0 ? input : "",
                .len = input_len,
                .index = index,
                .attempt = attempt,
        };
        spark_task_output out = {};
        int status;

        task_outcome_done(o);
        status = fn(&in, &out);
        out.error[sizeof(out.error) - 1] = '\0';

        if (status != 0) {
                free(out.data);
                if (out.error[0])
                        task_outcome_fail(o, status, "%s", out.error);
                else
                        task_outcome_fail(o, status, "task returned %d", status);
                return;
        }
        if (out.len > 0 && !out.data) {
                task_outcome_fail(o, 0, "task returned %zu bytes of output but no buffer", out.len);
                return;
        }
        if (out.len > max_output) {
                free(out.data);
                task_outcome_fail(o, 0, "result of %zu bytes exceeds max_result_bytes (%zu)", out.len, max_output);
                return;
        }
        o->status = SPARK__TASK_STATUS__TASK_OK;
        o->exit_code = 0;
        if (out.len > 0) {
                o->output = out.data;
                o->output_len = out.len;
        } else
                free(out.data);
}

int function_task_run(LibraryCache *libs, const Spark__TaskLaunch *launch, size_t max_output, TaskOutcome *o,
                       bool *ret_loaded) {
        char error[512];
        spark_task_fn fn;
        int r;

        if (ret_loaded)
                *ret_loaded = false;
        r = lookup(libs, launch->library_hash, launch->symbol, &fn, ret_loaded, error, sizeof(error));
        if (r < 0) {
                task_outcome_fail(o, 127, "%s", error);
                return r;
        }
        function_task_call(fn, launch->input.data, launch->input.len, launch->index, launch->attempt, max_output, o);
        return 0;
}
