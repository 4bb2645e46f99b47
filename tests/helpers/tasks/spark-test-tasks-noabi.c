/* A task library built without SPARK_TASK_ABI: the executor must refuse it
 * with a clear error, never call into it. */
#include <stdlib.h>

#include <spark/task.h>

__attribute__((visibility("default"))) int echo(const spark_task_input *in, spark_task_output *out) {
        (void) in;
        (void) out;
        abort(); /* must never be called */
}
