/* Loop queue: items pushed from many threads run on the loop thread in
 * per-producer FIFO order; nothing is leaked on free, also when freed from
 * one of its own callbacks. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check-run.h"
#include "loop-queue.h"
#include "macro.h"
#include "test-fixtures.h"

#define N_THREADS 4
#define N_PER_THREAD 20000

typedef struct Item {
        int thread;
        int seq;
} Item;

typedef struct Ctx {
        pthread_t loop_thread;
        int next_seq[N_THREADS];
        unsigned run, discarded;
        bool done;
        LoopQueue *q;
} Ctx;

static Ctx ctx;

static void item_cb(void *userdata, bool discard) {
        Item *it = userdata;

        if (discard)
                ctx.discarded++;
        else {
                ck_assert(pthread_equal(pthread_self(), ctx.loop_thread));
                ck_assert_int_eq(it->seq, ctx.next_seq[it->thread]);
                ctx.next_seq[it->thread]++;
                ctx.run++;
                if (ctx.run == N_THREADS * N_PER_THREAD)
                        ctx.done = true;
        }
        free(it);
}

static void *producer(void *arg) {
        int t = (int) (intptr_t) arg;

        for (int i = 0; i < N_PER_THREAD; i++) {
                Item *it = malloc(sizeof(*it));

                ck_assert_ptr_nonnull(it);
                *it = (Item) { .thread = t, .seq = i };
                ck_assert_int_eq(loop_queue_push(ctx.q, item_cb, it), 0);
        }
        return NULL;
}

START_TEST(test_many_producers) {
        sd_event *e = NULL;
        pthread_t threads[N_THREADS];

        memset(&ctx, 0, sizeof(ctx));
        ctx.loop_thread = pthread_self();
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &ctx.q), 0);

        for (int t = 0; t < N_THREADS; t++)
                ck_assert_int_eq(pthread_create(&threads[t], NULL, producer, (void *) (intptr_t) t), 0);

        test_run_until_flag(e, &ctx.done, 20 * USEC_PER_SEC);
        for (int t = 0; t < N_THREADS; t++)
                pthread_join(threads[t], NULL);

        ck_assert(ctx.done);
        ck_assert_uint_eq(ctx.run, N_THREADS * N_PER_THREAD);
        ck_assert_uint_eq(ctx.discarded, 0);
        ck_assert_uint_eq(loop_queue_pending(ctx.q), 0);
        for (int t = 0; t < N_THREADS; t++)
                ck_assert_int_eq(ctx.next_seq[t], N_PER_THREAD);

        ctx.q = loop_queue_free(ctx.q);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_free_discards_pending) {
        sd_event *e = NULL;

        memset(&ctx, 0, sizeof(ctx));
        ctx.loop_thread = pthread_self();
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &ctx.q), 0);

        for (int i = 0; i < 100; i++) {
                Item *it = malloc(sizeof(*it));

                *it = (Item) { .thread = 0, .seq = i };
                ck_assert_int_eq(loop_queue_push(ctx.q, item_cb, it), 0);
        }
        ck_assert_uint_eq(loop_queue_pending(ctx.q), 100);

        /* Nothing runs the loop: every item is discarded, none leaks
         * (ASan would tell). */
        ctx.q = loop_queue_free(ctx.q);
        ck_assert_uint_eq(ctx.discarded, 100);
        ck_assert_uint_eq(ctx.run, 0);
        sd_event_unref(e);
}
END_TEST

/* Item 3 frees the queue from its callback: items 4..9 must be discarded
 * (not run), and the dispatcher must not touch the freed queue. */
static void free_from_cb(void *userdata, bool discard) {
        Item *it = userdata;

        if (discard)
                ctx.discarded++;
        else {
                ctx.run++;
                if (it->seq == 3) {
                        ctx.q = loop_queue_free(ctx.q);
                        ctx.done = true;
                }
        }
        free(it);
}

START_TEST(test_free_from_callback) {
        sd_event *e = NULL;

        memset(&ctx, 0, sizeof(ctx));
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &ctx.q), 0);

        for (int i = 0; i < 10; i++) {
                Item *it = malloc(sizeof(*it));

                *it = (Item) { .seq = i };
                ck_assert_int_eq(loop_queue_push(ctx.q, free_from_cb, it), 0);
        }
        test_run_until_flag(e, &ctx.done, 5 * USEC_PER_SEC);
        ck_assert(ctx.done);
        ck_assert_ptr_null(ctx.q);
        ck_assert_uint_eq(ctx.run, 4);
        ck_assert_uint_eq(ctx.discarded, 6);

        /* The loop goes on without the queue's source. */
        ck_assert_int_ge(sd_event_run(e, 10 * 1000), 0);
        sd_event_unref(e);
}
END_TEST

/* An embedded item pushed again from its own callback (how the rpc server
 * reuses a context's item). */
typedef struct Repeater {
        LoopQueueItem item;
        LoopQueue *q;
        unsigned count;
        bool done;
} Repeater;

static void repeat_cb(void *userdata, bool discard) {
        Repeater *r = userdata;

        ck_assert(!discard);
        if (++r->count == 1000)
                r->done = true;
        else
                loop_queue_push_item(r->q, &r->item);
}

START_TEST(test_embedded_item_reuse) {
        sd_event *e = NULL;
        Repeater r = {};

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &r.q), 0);
        loop_queue_item_init(&r.item, repeat_cb, &r);
        loop_queue_push_item(r.q, &r.item);
        test_run_until_flag(e, &r.done, 5 * USEC_PER_SEC);
        ck_assert_uint_eq(r.count, 1000);
        r.q = loop_queue_free(r.q);
        sd_event_unref(e);
}
END_TEST

/* Items of two owners on one queue, as the master's worker links share
 * theirs.  Embedded items carry the owner. */
#define N_OWNED 600

typedef struct Owned {
        LoopQueueItem item;
        int owner; /* 0 or 1 */
        int seq;
} Owned;

static struct {
        Owned items[N_OWNED];
        LoopQueue *q;
        int next_seq, discard_at;
        unsigned run[2], discarded[2];
        bool done;
} own;

static const char owner_tags[2] = { 'a', 'b' };

static void owned_cb(void *userdata, bool discard) {
        Owned *o = userdata;

        if (discard) {
                own.discarded[o->owner]++;
                return;
        }
        /* FIFO among what runs */
        ck_assert_int_gt(o->seq, own.next_seq - 1);
        own.next_seq = o->seq + 1;
        own.run[o->owner]++;
        if (o->seq == own.discard_at)
                loop_queue_discard_owned(own.q, &owner_tags[1]);
        if (o->seq == N_OWNED - 2) /* the last of owner 0 */
                own.done = true;
}

static void owned_push_all(void) {
        for (int i = 0; i < N_OWNED; i++) {
                Owned *o = &own.items[i];

                *o = (Owned) { .owner = i % 2, .seq = i };
                loop_queue_item_init(&o->item, owned_cb, o);
                o->item.owner = &owner_tags[o->owner];
                loop_queue_push_item(own.q, &o->item);
        }
}

START_TEST(test_discard_owned) {
        sd_event *e = NULL;

        memset(&own, 0, sizeof(own));
        own.discard_at = -1;
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &own.q), 0);

        /* Before any dispatch: only owner 1's items go. */
        owned_push_all();
        loop_queue_discard_owned(own.q, &owner_tags[1]);
        ck_assert_uint_eq(own.discarded[1], N_OWNED / 2);
        ck_assert_uint_eq(loop_queue_pending(own.q), N_OWNED / 2);
        loop_queue_discard_owned(own.q, "nobody");
        loop_queue_discard_owned(own.q, NULL);
        ck_assert_uint_eq(loop_queue_pending(own.q), N_OWNED / 2);
        test_run_until_flag(e, &own.done, 5 * USEC_PER_SEC);
        ck_assert_uint_eq(own.run[0], N_OWNED / 2);
        ck_assert_uint_eq(own.run[1], 0);

        /* From a callback in the middle of a batch: owner 1's items after it,
         * in the batch being run and still queued, are discarded. */
        memset(&own.run, 0, sizeof(own.run));
        memset(&own.discarded, 0, sizeof(own.discarded));
        own.next_seq = 0;
        own.done = false;
        own.discard_at = 10;
        owned_push_all();
        test_run_until_flag(e, &own.done, 5 * USEC_PER_SEC);
        ck_assert_uint_eq(own.run[0], N_OWNED / 2);
        ck_assert_uint_eq(own.run[1], 5);    /* 1, 3, 5, 7, 9 */
        ck_assert_uint_eq(own.discarded[1], N_OWNED / 2 - 5);
        ck_assert_uint_eq(loop_queue_pending(own.q), 0);

        own.q = loop_queue_free(own.q);
        ck_assert_uint_eq(own.discarded[0], 0);
        sd_event_unref(e);
}
END_TEST

/* A long queue is run in slices: the loop's other sources get their turn
 * in between, and the order stays FIFO. */
static unsigned slice_run;

static void slice_cb(void *userdata, bool discard) {
        Item *it = userdata;

        ck_assert(!discard);
        ck_assert_int_eq(it->seq, (int) slice_run);
        slice_run++;
        free(it);
}

static int count_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        (*(unsigned *) userdata)++;
        return 0;
}

START_TEST(test_dispatch_in_slices) {
        _cleanup_(loop_queue_freep) LoopQueue *q = NULL;
        sd_event_source *timer = NULL;
        unsigned timer_runs = 0, iterations = 0;
        sd_event *e = NULL;

        slice_run = 0;
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &q), 0);
        for (int i = 0; i < 2000; i++) {
                Item *it = malloc(sizeof(*it));

                *it = (Item) { .seq = i };
                ck_assert_int_eq(loop_queue_push(q, slice_cb, it), 0);
        }
        /* a timer that is always due, at the queue's priority */
        ck_assert_int_ge(sd_event_add_time(e, &timer, CLOCK_MONOTONIC, 1, 0, count_timer, &timer_runs), 0);
        ck_assert_int_ge(sd_event_source_set_enabled(timer, SD_EVENT_ON), 0);

        ck_assert_int_ge(sd_event_run(e, 100 * 1000), 0);
        ck_assert_uint_lt(slice_run, 2000);
        while (slice_run < 2000 && iterations++ < 1000)
                ck_assert_int_ge(sd_event_run(e, 100 * 1000), 0);
        ck_assert_uint_eq(slice_run, 2000);
        ck_assert_uint_gt(timer_runs, 1);

        sd_event_source_unref(timer);
        q = loop_queue_free(q);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_null_and_invalid) {
        _cleanup_(loop_queue_freep) LoopQueue *q = NULL;
        sd_event *e = NULL;

        ck_assert_ptr_null(loop_queue_free(NULL));
        ck_assert_uint_eq(loop_queue_pending(NULL), 0);
        ck_assert_int_eq(loop_queue_new(NULL, &q), -EINVAL);
        ck_assert_int_eq(loop_queue_push(NULL, item_cb, NULL), -EINVAL);

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(loop_queue_new(e, &q), 0);
        ck_assert_int_eq(loop_queue_push(q, NULL, NULL), -EINVAL);
        q = loop_queue_free(q);
        sd_event_unref(e);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_many_producers,
                test_free_discards_pending,
                test_free_from_callback,
                test_embedded_item_reuse,
                test_discard_owned,
                test_dispatch_in_slices,
                test_null_and_invalid,
                NULL,
        };
        const CheckOptions options = { .timeout = 60 };

        return check_run_tests("loop-queue", &options, tests);
}
