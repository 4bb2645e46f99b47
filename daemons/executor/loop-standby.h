/* A thread that keeps an event loop turning while the loop's own thread is
 * busy with something that usually ends at once but may not: the
 * executor's main thread running a short function task itself.
 *
 * The owner lends the loop before it starts and reclaims it when done.
 * Lending arms a timer and wakes no one: should the owner be back before
 * it fires, nothing else happened.  Should it fire first, the standby
 * thread takes the loop and runs its turns until the owner reclaims it;
 * the owner's reclaim then wakes the loop and waits for it to come back.
 * Either way one thread at a time runs the loop, so what the loop owns keeps
 * one owner. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

typedef struct LoopStandby LoopStandby;

/* One turn of the loop (a dispatch, waiting for it if need be); false once
 * the loop has ended. */
typedef bool (*LoopTurnFn)(void *userdata);
/* Makes a turn of the loop end soon, from another thread. */
typedef void (*LoopWakeFn)(void *userdata);

/* Starts the standby thread, which takes the loop after_usec of a lending.
 * Call it with the signals the loop handles already blocked. */
int loop_standby_new(LoopTurnFn turn, LoopWakeFn wake, void *userdata, uint64_t after_usec, LoopStandby **ret);
/* Stops and joins the thread: by the owner, with its loop at home. */
LoopStandby *loop_standby_free(LoopStandby *s);

/* By the owner, about to be busy: the standby takes the loop should that
 * last after_usec. */
void loop_standby_lend(LoopStandby *s);
/* By the owner, done: the loop is back on the owner's thread when this
 * returns.  Returns whether the standby had taken it. */
bool loop_standby_reclaim(LoopStandby *s);
/* On the standby thread, in a turn that found the loop ended: waits up to
 * timeout_usec for the owner to reclaim it.  False: the owner is still
 * busy. */
bool loop_standby_wait_reclaim(LoopStandby *s, uint64_t timeout_usec);

DEFINE_TRIVIAL_CLEANUP_FUNC(LoopStandby *, loop_standby_free);
