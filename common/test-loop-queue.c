/* Loop queue: items pushed from many threads run on the loop thread in
 * per-producer FIFO order; nothing is leaked on free, also when freed from
 * one of its own callbacks. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "loop-queue.h"
#include "macro.h"

#define N_THREADS 4
#define N_PER_THREAD 20000

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* Runs the loop until *done or timeout; never hangs. */
static void run_until(sd_event *e, const bool *done, uint64_t timeout_usec) {
        uint64_t deadline = now_usec() + timeout_usec;

        while (!*done && now_usec() < deadline)
                ck_assert_int_ge(sd_event_run(e, 100 * 1000), 0);
}

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

        run_until(e, &ctx.done, 20 * 1000 * 1000);
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
        run_until(e, &ctx.done, 5 * 1000 * 1000);
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
        run_until(e, &r.done, 5 * 1000 * 1000);
        ck_assert_uint_eq(r.count, 1000);
        r.q = loop_queue_free(r.q);
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

static Suite *loop_queue_suite(void) {
        Suite *s = suite_create("loop-queue");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_many_producers);
        tcase_add_test(tc, test_free_discards_pending);
        tcase_add_test(tc, test_free_from_callback);
        tcase_add_test(tc, test_embedded_item_reuse);
        tcase_add_test(tc, test_null_and_invalid);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(loop_queue_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
