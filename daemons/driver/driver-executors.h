/* The executor sessions of the driver (driver-executors.c): registration,
 * polls, kills, and finding an executor lost; and the executors of a
 * draining worker (driver-drain.c). */
#pragma once

#include "driver.h"

int driver_register_executor(Driver *d, RpcRequest *req, const Spark__RegisterExecutor *re);
int driver_poll(Driver *d, RpcRequest *req, const Spark__Poll *poll);
DriverExecutor *driver_executor(Driver *d, int id);
void driver_executor_lost(Driver *d, DriverExecutor *ex, ExecutorLoss kind, const char *reason);
void driver_on_pipe(RpcServer *s, uint32_t pipe_id, bool added, void *userdata);
void driver_wake_parked(Driver *d);
void driver_arm_revive(Driver *d);
int driver_start_heartbeat_checks(Driver *d);
/* Queues a TaskKill for the executor's next poll reply (executor_id -1: for
 * every executor); driver_send_kills() then sends it at once if that poll is
 * parked. */
void driver_queue_kill(Driver *d, int executor_id, const char *job_id, int index);
/* Answers the parked poll of every executor with kills queued, once per
 * batch of kills: a cancel must not wait for the poll interval. */
void driver_send_kills(Driver *d);
void driver_executors_free(Driver *d);

/* driver-drain.c: the master says the executor's worker drains (or no
 * longer does); driver_drain_check() releases a draining executor that
 * holds no task. */
void driver_executor_set_draining(Driver *d, int id, bool draining);
void driver_drain_check(Driver *d, DriverExecutor *ex);
