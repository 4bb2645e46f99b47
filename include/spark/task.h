/* The C ABI of function tasks.  A job's shared object exports one or more
 * task functions and, once, the ABI version it was built against:
 *
 *     #include <spark/task.h>
 *     SPARK_TASK_ABI;
 *
 *     int my_task(const spark_task_input *in, spark_task_output *out) {
 *             ... read in->data[0 .. in->len), write a malloc()ed buffer ...
 *             out->data = buf;
 *             out->len = n;
 *             return 0;                        // 0: success, else failure
 *     }
 *
 * and is run with `sparkctl submit --function lib.so:my_task ...`.  The
 * executor calls the function on one of its task threads; it may be called
 * concurrently for different tasks, so it must not keep unsynchronised
 * global state.  On failure it may describe the problem in out->error. */
#ifndef SPARK_TASK_H
#define SPARK_TASK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the structures below. */
#define SPARK_TASK_ABI_VERSION 1u

typedef struct spark_task_input {
        const void *data;     /* the task's input bytes (not NUL-terminated) */
        size_t len;
        int64_t index;        /* the task's index in its job, from 0 */
        int32_t attempt;      /* 1 for the first attempt */
} spark_task_input;

typedef struct spark_task_output {
        void *data;           /* malloc()ed by the task, free()d by the executor; may be NULL */
        size_t len;
        char error[256];      /* on failure: why, NUL-terminated */
} spark_task_output;

/* Returns 0 on success; any other value fails this attempt (it is retried
 * up to the driver's task_max_failures). */
typedef int (*spark_task_fn)(const spark_task_input *in, spark_task_output *out);

/* The symbol the executor checks before it calls anything in the object. */
#define SPARK_TASK_ABI_SYMBOL "spark_task_abi_version"
#define SPARK_TASK_ABI \
        __attribute__((visibility("default"))) const uint32_t spark_task_abi_version = SPARK_TASK_ABI_VERSION

#ifdef __cplusplus
}
#endif

#endif
