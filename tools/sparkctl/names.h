/* The words sparkctl shows for the wire enums: lower case, stable, the same
 * in tables and in JSON ("running", "lost", …).  A value this build does not
 * know (a newer peer) is "unknown". */
#pragma once

#include <stdbool.h>

#include "spark.pb-c.h"

const char *worker_state_to_string(Spark__WorkerState s);
const char *app_state_to_string(Spark__AppState s);
const char *executor_state_to_string(Spark__ExecutorState s);
const char *job_state_to_string(Spark__JobState s);
const char *task_status_to_string(Spark__TaskStatus s);

/* SUCCEEDED, FAILED, CANCELLED: the job will not change any more. */
bool job_state_is_final(Spark__JobState s);
