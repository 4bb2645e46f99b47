/* The names of the wire enums (proto/spark.proto), one table each, shared
 * by the daemons' logs and sparkctl's output (its text and --json, so these
 * names are part of sparkctl's interface: sparkctl(1)).  Lower case; a
 * value outside the enum, or its UNKNOWN zero, is "unknown". */
#pragma once

#include <stdbool.h>

#include "spark.pb-c.h"

const char *wire_worker_state_to_string(Spark__WorkerState s);
const char *wire_app_state_to_string(Spark__AppState s);
const char *wire_executor_state_to_string(Spark__ExecutorState s);
const char *wire_job_state_to_string(Spark__JobState s);
const char *wire_task_status_to_string(Spark__TaskStatus s);

/* SUCCEEDED, FAILED, CANCELLED: the job will not change any more. */
bool wire_job_state_is_final(Spark__JobState s);
