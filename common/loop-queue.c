/* A locked FIFO drained on the sd-event loop.  The eventfd is written only
 * when the queue goes from empty to non-empty, so a burst of pushes costs
 * one wake-up; the loop takes the whole list under the lock and runs it
 * without the lock held, at most DISPATCH_MAX items per wake-up: one queue
 * may be shared by thousands of producers (a master's worker links), and a
 * burst of their completions must not keep the loop from its other
 * sources for long. */
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>

#include "fifo.h"
#include "loop-queue.h"

#define DISPATCH_MAX 256

struct LoopQueue {
        sd_event_source *source;
        int fd;

        pthread_mutex_t lock;
        LoopQueueItem *head, *tail; /* guarded by lock */
        size_t n_pending;           /* guarded by lock */

        /* Loop thread only: the batch being run (taken from the list, not
         * run yet), so that a free() from one of its callbacks can discard
         * the rest, and a flag on the dispatcher's stack telling it that the
         * queue is gone. */
        LoopQueueItem *batch, *batch_tail;
        bool *dispatch_alive;
};

static void item_finish(LoopQueueItem *item, bool discard) {
        bool allocated = item->allocated;
        LoopQueueCallback callback = item->callback;
        void *userdata = item->userdata;

        /* An embedded item may be reused (pushed again) from its callback,
         * so read everything before calling it. */
        if (allocated)
                free(item);
        callback(userdata, discard);
}

static LoopQueueItem *queue_take_all(LoopQueue *q, LoopQueueItem **ret_tail) {
        LoopQueueItem *list;

        pthread_mutex_lock(&q->lock);
        list = q->head;
        if (ret_tail)
                *ret_tail = q->tail;
        q->head = q->tail = NULL;
        q->n_pending = 0;
        pthread_mutex_unlock(&q->lock);
        return list;
}

static void queue_wake(LoopQueue *q) {
        uint64_t one = 1;

        /* Cannot fail short of a counter overflow, which needs 2^64 writes
         * without a read; the loop reads on every wake-up. */
        if (write(q->fd, &one, sizeof(one)) < 0) {
                /* nothing to do: see above */
        }
}

static int queue_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LoopQueue *q = userdata;
        LoopQueueItem *list, *tail = NULL;
        bool alive = true;
        uint64_t v;

        (void) s;
        (void) revents;

        /* Reset the counter before taking the list: a push after this read
         * either lands in the list we take, or writes the eventfd again. */
        if (read(fd, &v, sizeof(v)) < 0) {
                /* EAGAIN: a spurious wake-up; the list is taken anyway */
        }

        /* What a previous wake-up left runs first: FIFO order. */
        list = queue_take_all(q, &tail);
        if (list) {
                if (q->batch)
                        q->batch_tail->next = list;
                else
                        q->batch = list;
                q->batch_tail = tail;
        }
        q->dispatch_alive = &alive;

        for (unsigned n = 0; q->batch && n < DISPATCH_MAX; n++) {
                LoopQueueItem *item = q->batch;

                q->batch = item->next;
                if (!q->batch)
                        q->batch_tail = NULL;
                item->next = NULL;
                item_finish(item, false);
                if (!alive)
                        return 0; /* freed from a callback */
        }

        q->dispatch_alive = NULL;
        if (q->batch)
                queue_wake(q); /* the rest after the loop's other sources */
        return 0;
}

int loop_queue_new(sd_event *e, LoopQueue **ret) {
        LoopQueue *q;
        int r;

        if (!e || !ret)
                return -EINVAL;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->fd = -1;
        r = pthread_mutex_init(&q->lock, NULL);
        if (r != 0) {
                free(q);
                return -r;
        }

        q->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (q->fd < 0) {
                r = negative_errno();
                loop_queue_free(q);
                return r;
        }

        r = sd_event_add_io(e, &q->source, q->fd, EPOLLIN, queue_io, q);
        if (r < 0) {
                loop_queue_free(q);
                return r;
        }
        (void) sd_event_source_set_description(q->source, "loop-queue");

        *ret = q;
        return 0;
}

LoopQueue *loop_queue_free(LoopQueue *q) {
        LoopQueueItem *list;

        if (!q)
                return NULL;

        if (q->dispatch_alive)
                *q->dispatch_alive = false;

        /* What the dispatcher had not run yet, then what arrived since. */
        while (q->batch) {
                LoopQueueItem *item = q->batch;

                q->batch = item->next;
                item->next = NULL;
                item_finish(item, true);
        }
        q->batch_tail = NULL;
        while ((list = queue_take_all(q, NULL))) {
                while (list) {
                        LoopQueueItem *item = list;

                        list = item->next;
                        item->next = NULL;
                        item_finish(item, true);
                }
        }

        /* sd-event defers freeing a source that is being dispatched. */
        q->source = sd_event_source_disable_unref(q->source);
        if (q->fd >= 0)
                close(q->fd);
        pthread_mutex_destroy(&q->lock);
        free(q);
        return NULL;
}

void loop_queue_push_item(LoopQueue *q, LoopQueueItem *item) {
        bool wake;

        pthread_mutex_lock(&q->lock);
        wake = !q->head;
        FIFO_PUSH(q->head, q->tail, next, item);
        q->n_pending++;
        pthread_mutex_unlock(&q->lock);

        if (wake)
                queue_wake(q);
}

int loop_queue_push(LoopQueue *q, LoopQueueCallback callback, void *userdata) {
        LoopQueueItem *item;

        if (!q || !callback)
                return -EINVAL;

        item = malloc(sizeof(*item));
        if (!item)
                return -ENOMEM;
        loop_queue_item_init(item, callback, userdata);
        item->allocated = true;
        loop_queue_push_item(q, item);
        return 0;
}

/* Unlinks owner's items from the list at *head (keeping *tail right) and
 * appends them, in order, where *discarded_end points. */
static void list_split_owned(LoopQueueItem **head, LoopQueueItem **tail, const void *owner,
                             LoopQueueItem ***discarded_end, size_t *ret_removed) {
        LoopQueueItem *prev = NULL;

        for (LoopQueueItem *item = *head, *next; item; item = next) {
                next = item->next;
                if (item->owner != owner) {
                        prev = item;
                        continue;
                }
                if (prev)
                        prev->next = next;
                else
                        *head = next;
                if (*tail == item)
                        *tail = prev;
                item->next = NULL;
                **discarded_end = item;
                *discarded_end = &item->next;
                (*ret_removed)++;
        }
}

void loop_queue_discard_owned(LoopQueue *q, const void *owner) {
        LoopQueueItem *discarded = NULL, **end = &discarded;
        size_t removed = 0;

        if (!q || !owner)
                return;

        list_split_owned(&q->batch, &q->batch_tail, owner, &end, &removed);

        pthread_mutex_lock(&q->lock);
        removed = 0;
        list_split_owned(&q->head, &q->tail, owner, &end, &removed);
        q->n_pending -= removed;
        pthread_mutex_unlock(&q->lock);

        /* Without the lock: a callback may push. */
        while (discarded) {
                LoopQueueItem *item = discarded;

                discarded = item->next;
                item->next = NULL;
                item_finish(item, true);
        }
}

size_t loop_queue_pending(LoopQueue *q) {
        size_t n;

        if (!q)
                return 0;
        pthread_mutex_lock(&q->lock);
        n = q->n_pending;
        pthread_mutex_unlock(&q->lock);
        return n;
}
