/* The one bridge from other threads (nng's aio callbacks) to the sd-event
 * loop that owns a daemon's state: a locked FIFO of work items plus an
 * eventfd watched by the loop.  Any thread may push; items run in FIFO order
 * on the loop thread, from the eventfd's io callback.
 *
 * Every item's callback is called exactly once: with discard = false on the
 * loop thread, or with discard = true from loop_queue_free() if the item was
 * still queued then — so a payload is never leaked. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-event.h>

#include "macro.h"

typedef struct LoopQueue LoopQueue;

typedef void (*LoopQueueCallback)(void *userdata, bool discard);

/* An item embedded in the caller's own structure (no allocation on push).
 * The memory must stay valid until the callback has been called; the item
 * may be pushed again from (or after) its callback. */
typedef struct LoopQueueItem {
        struct LoopQueueItem *next;
        LoopQueueCallback callback;
        void *userdata;
        /* Who pushed it, for loop_queue_discard_owned() on a queue that
         * several producers share; NULL: nobody in particular. */
        const void *owner;
        bool allocated; /* internal: made by loop_queue_push(), freed by the queue */
} LoopQueueItem;

static inline void loop_queue_item_init(LoopQueueItem *item, LoopQueueCallback callback, void *userdata) {
        *item = (LoopQueueItem) { .callback = callback, .userdata = userdata };
}

int loop_queue_new(sd_event *e, LoopQueue **ret);

/* Must not race with a push from another thread: stop the producers first
 * (e.g. nng_close() and nng_aio_stop()), then free.  Safe to call from one of
 * this queue's own callbacks: the items not yet run are discarded. */
LoopQueue *loop_queue_free(LoopQueue *q);

/* Any thread.  Allocates the item; -ENOMEM if that fails, in which case the
 * callback is not called and the payload stays the caller's. */
int loop_queue_push(LoopQueue *q, LoopQueueCallback callback, void *userdata);

/* Any thread.  Never fails. */
void loop_queue_push_item(LoopQueue *q, LoopQueueItem *item);

/* Loop thread.  Discards (callback with discard = true) every item of owner
 * still queued, including those of a batch being run, and leaves the others
 * in order: for one producer among many sharing the queue that goes away
 * (stop its pushes first, as for loop_queue_free()).  O(items queued). */
void loop_queue_discard_owned(LoopQueue *q, const void *owner);

/* Number of items waiting (a snapshot, for stats and tests). */
size_t loop_queue_pending(LoopQueue *q);

DEFINE_TRIVIAL_CLEANUP_FUNC(LoopQueue *, loop_queue_free);
