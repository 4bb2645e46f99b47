/* A task library that claims a future ABI version: the executor must refuse
 * it with "ABI version 2, expected 1", never call into it. */
#include <stdlib.h>

#include <spark/task.h>

__attribute__((visibility("default"))) const uint32_t spark_task_abi_version = SPARK_TASK_ABI_VERSION + 1;

__attribute__((visibility("default"))) int echo(const spark_task_input *in, spark_task_output *out) {
        (void) in;
        (void) out;
        abort(); /* must never be called */
}
