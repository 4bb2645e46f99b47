/* The driver's job table (driver-jobs.c): submitted jobs, their results and
 * libraries.  It calls no other part of the driver: see DriverEffects. */
#pragma once

#include "driver.h"
#include "driver-journal.h"

int driver_submit_job(Driver *d, RpcRequest *req, const Spark__SubmitJob *sj);
int driver_job_status(Driver *d, RpcRequest *req, const char *job_id);
int driver_list_jobs(Driver *d, RpcRequest *req);
int driver_fetch_results(Driver *d, RpcRequest *req, const Spark__FetchResults *fr);
int driver_cancel_job(Driver *d, RpcRequest *req, const char *job_id);
int driver_fetch_library(Driver *d, RpcRequest *req, const char *hash);
/* Fills a TaskLaunch for an assignment; strings and bytes point into the job. */
void driver_task_launch_fill(Driver *d, const TaskAssignment *a, Spark__TaskLaunch *tl);
/* Why a result cannot be one of its job's (fills buf), or NULL: fine, or
 * its job is gone.  A poll is refused whole if any of its results is bad. */
const char *driver_task_result_check(Driver *d, const Spark__TaskResult *r, char *buf, size_t size);
/* A result from an executor; the job's bookkeeping and the scheduler's. */
void driver_task_result(Driver *d, int executor_id, const Spark__TaskResult *r, usec_t now);
/* Handles jobs that ended: kills their leftover attempts, logs. */
void driver_drain_finished_jobs(Driver *d);
void driver_jobs_free(Driver *d);
/* For the HTTP API: {"jobs":[...]} as `sparkctl jobs --json`; one job as
 * `sparkctl job ID --json` (max_tasks 0), or {"job":{..},"tasks":[..]}
 * with its first max_tasks tasks' states and attempts (-ENOENT: no such
 * job); the bytes of results held, in memory or spilled. */
void driver_jobs_json(Driver *d, Json *json);
int driver_job_json(Driver *d, const char *job_id, unsigned max_tasks, Json *json);
uint64_t driver_jobs_output_bytes(Driver *d);
/* Of them, the bytes in the spill file (beyond driver.result_memory_mb). */
uint64_t driver_jobs_spilled_bytes(Driver *d);

/* The journal's replay (driver-journal.c): a job as it was submitted, one
 * of its accepted results (-EALREADY: the task has one already), and the
 * end of one that failed or was cancelled.  -EBADMSG: it does not fit. */
int driver_restore_job(Driver *d, const char *job_id, const Spark__SubmitJob *sj);
int driver_restore_result(Driver *d, const Spark__TaskResult *r);
int driver_restore_job_end(Driver *d, const char *job_id);
/* Removes a job, as the eviction of the oldest ended ones does (-ENOENT:
 * no such job); its journal entries become dead. */
int driver_remove_job(Driver *d, const char *job_id);
/* A replayed entry of job_id took bytes of the journal. */
void driver_job_journaled(Driver *d, const char *job_id, uint64_t bytes);

