/* Function tasks: a symbol of a shared object (include/spark/task.h) found
 * through the library cache and called on the task thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "executor-task.h"
#include "library-cache.h"

/* Runs the task described by launch (kind TASK_FUNCTION) and fills o:
 * TASK_OK with the function's output if it returns 0 and its output fits in
 * max_output bytes, else TASK_FAILED with the reason (the function's
 * out->error, "task returned N", a library problem, or the size).  The exit
 * code is what the function returned, or 127 if it could not be found.
 * Returns 0, or the library cache's error if the function could not be
 * found (o->error says why).  *ret_loaded (may be NULL) is set if this call
 * tried to load the library, so that the caller can log it once. */
int function_task_run(LibraryCache *libs, const Spark__TaskLaunch *launch, size_t max_output, TaskOutcome *o,
                       bool *ret_loaded);

/* Calls fn on input and turns what it did into an outcome (exported for
 * the tests, which call functions directly). */
void function_task_call(spark_task_fn fn, const void *input, size_t input_len, int64_t index, int32_t attempt,
                        size_t max_output, TaskOutcome *o);
