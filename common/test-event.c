/* event-pub and event-sub over ipc://: ordered delivery with (epoch, seq),
 * resync on the first event, on a gap and on a publisher restart, stale and
 * malformed events dropped and counted. */
#include <check.h>
#include <stdatomic.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>

#include "check-run.h"
#include "codec.h"
#include "event-pub.h"
#include "event-sub.h"
#include "macro.h"
#include "nng-util.h"
#include "test-fixtures.h"

#define SEC USEC_PER_SEC
#define N_EVENTS 200

static char tmpdir[64];
static char url[128];

static void setup(void) {
        test_tmpdir_new(tmpdir, sizeof(tmpdir), "test-event");
        snprintf(url, sizeof(url), "ipc://%s/events.sock", tmpdir);
}

static void teardown(void) {
        test_tmpdir_remove(tmpdir);
}

typedef struct Seen {
        EventSub *sub;
        uint64_t epochs[N_EVENTS + 16];
        uint64_t seqs[N_EVENTS + 16];
        char names[N_EVENTS + 16][32];
        unsigned n;
        char reasons[8][128];
        unsigned n_resyncs;
        bool free_in_handler;
} Seen;

static void on_event(EventSub *s, const Envelope *env, void *userdata) {
        Seen *seen = userdata;

        ck_assert_ptr_eq(s, seen->sub);
        ck_assert_int_eq(env->body_case, SPARK__ENVELOPE__BODY_WORKER_LOST);
        ck_assert_uint_lt(seen->n, ELEMENTSOF(seen->seqs));
        seen->epochs[seen->n] = env->epoch;
        seen->seqs[seen->n] = env->seq;
        snprintf(seen->names[seen->n], sizeof(seen->names[0]), "%s", env->worker_lost->worker_id);
        seen->n++;
        if (seen->free_in_handler)
                seen->sub = event_sub_free(s);
}

static void on_resync(EventSub *s, const char *reason, void *userdata) {
        Seen *seen = userdata;

        ck_assert_ptr_eq(s, seen->sub);
        if (seen->n_resyncs < ELEMENTSOF(seen->reasons))
                snprintf(seen->reasons[seen->n_resyncs], sizeof(seen->reasons[0]), "%s", reason);
        seen->n_resyncs++;
}

static void make_worker_lost(Envelope *env, Spark__WorkerLost *wl, const char *worker) {
        *env = (Envelope) ENVELOPE_INIT;
        *wl = (Spark__WorkerLost) SPARK__WORKER_LOST__INIT;
        wl->worker_id = (char *) worker;
        ENVELOPE_SET(env, WORKER_LOST, worker_lost, wl);
}

static bool pub_has_subscriber(void *userdata) {
        return event_pub_subscribers(userdata) > 0;
}

typedef struct Want {
        Seen *seen;
        unsigned n;
} Want;

static bool seen_enough(void *userdata) {
        Want *w = userdata;

        return w->seen->n >= w->n;
}

/* A publisher at url, and seen's subscriber connected to it. */
static EventPub *start_pub_and_sub(sd_event *e, const EventSubConfig *cfg, Seen *seen) {
        EventPub *p = NULL;

        ck_assert_int_eq(event_pub_new(url, 0, NULL, &p), 0);
        ck_assert_int_eq(event_sub_new(e, url, cfg, on_event, on_resync, seen, &seen->sub), 0);
        ck_assert(test_run_until(e, pub_has_subscriber, p, 5 * SEC));
        return p;
}

/* Publishes n WorkerLost events for worker. */
static void publish_worker_lost(EventPub *p, const char *worker, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                Spark__WorkerLost wl;
                Envelope env;

                make_worker_lost(&env, &wl, worker);
                ck_assert_int_eq(event_pub_send(p, &env), 0);
        }
}

START_TEST(test_events_in_order) {
        sd_event *e = NULL;
        EventPub *p = NULL;
        static Seen seen;
        EventSubStats st;
        Want w = { .seen = &seen, .n = N_EVENTS };

        memset(&seen, 0, sizeof(seen));
        ck_assert_int_ge(sd_event_new(&e), 0);
        p = start_pub_and_sub(e, NULL, &seen);
        ck_assert_uint_gt(event_pub_epoch(p), 0);
        ck_assert_uint_eq(event_pub_seq(p), 0);
        ck_assert_str_eq(event_sub_url(seen.sub), url);

        for (int i = 0; i < N_EVENTS; i++) {
                Spark__WorkerLost wl;
                Envelope env;
                char name[32];

                snprintf(name, sizeof(name), "w-%d", i);
                make_worker_lost(&env, &wl, name);
                ck_assert_int_eq(event_pub_send(p, &env), 0);
                ck_assert_uint_eq(env.seq, (uint64_t) i + 1);
                ck_assert_uint_eq(env.epoch, event_pub_epoch(p));
        }
        ck_assert_uint_eq(event_pub_seq(p), N_EVENTS);

        ck_assert(test_run_until(e, seen_enough, &w, 10 * SEC));
        ck_assert_uint_eq(seen.n, N_EVENTS);
        for (unsigned i = 0; i < N_EVENTS; i++) {
                char name[32];

                snprintf(name, sizeof(name), "w-%u", i);
                ck_assert_uint_eq(seen.seqs[i], i + 1);
                ck_assert_uint_eq(seen.epochs[i], event_pub_epoch(p));
                ck_assert_str_eq(seen.names[i], name);
        }
        /* Only the first event asked for a resync. */
        ck_assert_uint_eq(seen.n_resyncs, 1);
        ck_assert_str_eq(seen.reasons[0], "first event");

        event_sub_get_stats(seen.sub, &st);
        ck_assert_uint_eq(st.received, N_EVENTS);
        ck_assert_uint_eq(st.delivered, N_EVENTS);
        ck_assert_uint_eq(st.resyncs, 1);
        ck_assert_uint_eq(st.malformed, 0);

        /* A body-less envelope is refused and uses no sequence number. */
        {
                Envelope empty = ENVELOPE_INIT;
                ck_assert_int_eq(event_pub_send(p, &empty), -EINVAL);
                ck_assert_uint_eq(event_pub_seq(p), N_EVENTS);
        }

        event_sub_free(seen.sub);
        event_pub_free(p);
        sd_event_unref(e);
}
END_TEST

/* A raw pub socket sends crafted envelopes. */
static atomic_uint raw_subscribers;

static void raw_pipe_cb(nng_pipe pipe, nng_pipe_ev ev, void *arg) {
        (void) pipe;
        (void) arg;
        if (ev == NNG_PIPE_EV_ADD_POST)
                atomic_fetch_add(&raw_subscribers, 1);
}

static bool raw_has_subscriber(void *userdata) {
        (void) userdata;
        return atomic_load(&raw_subscribers) > 0;
}

static void raw_send(nng_socket sock, uint64_t epoch, uint64_t seq, const char *worker) {
        Spark__WorkerLost wl;
        Envelope env;
        nng_msg *m;

        make_worker_lost(&env, &wl, worker);
        env.epoch = epoch;
        env.seq = seq;
        ck_assert_int_eq(nng_util_msg_from_envelope(&env, &m), 0);
        ck_assert_int_eq(nng_sendmsg(sock, m, 0), 0);
}

typedef struct StatWait {
        EventSub *sub;
        uint64_t received;
} StatWait;

static bool received_enough(void *userdata) {
        StatWait *w = userdata;
        EventSubStats st;

        event_sub_get_stats(w->sub, &st);
        return st.received >= w->received;
}

START_TEST(test_gap_and_stale_and_malformed) {
        const uint64_t E = 1000;
        sd_event *e = NULL;
        nng_socket raw;
        static Seen seen;
        EventSubStats st;
        StatWait sw;

        memset(&seen, 0, sizeof(seen));
        atomic_store(&raw_subscribers, 0);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(nng_pub0_open(&raw), 0);
        ck_assert_int_eq(nng_pipe_notify(raw, NNG_PIPE_EV_ADD_POST, raw_pipe_cb, NULL), 0);
        ck_assert_int_eq(nng_listen(raw, url, NULL, 0), 0);
        ck_assert_int_eq(event_sub_new(e, url, NULL, on_event, on_resync, &seen, &seen.sub), 0);
        ck_assert(test_run_until(e, raw_has_subscriber, NULL, 5 * SEC));
        sw.sub = seen.sub;

        raw_send(raw, E, 1, "a");
        raw_send(raw, E, 2, "b");
        raw_send(raw, E, 4, "d"); /* 3 was lost */
        raw_send(raw, E, 5, "e");
        raw_send(raw, E, 3, "c"); /* late: stale */
        ck_assert_int_eq(nng_send(raw, (void *) "\xff\xff\xff", 3, 0), 0);
        raw_send(raw, 0, 6, "no-epoch"); /* malformed */
        sw.received = 7;
        ck_assert(test_run_until(e, received_enough, &sw, 5 * SEC));

        ck_assert_uint_eq(seen.n, 4);
        ck_assert_str_eq(seen.names[0], "a");
        ck_assert_str_eq(seen.names[1], "b");
        ck_assert_str_eq(seen.names[2], "d"); /* delivered after the resync */
        ck_assert_str_eq(seen.names[3], "e");
        ck_assert_uint_eq(seen.n_resyncs, 2);
        ck_assert_str_eq(seen.reasons[0], "first event");
        ck_assert_str_eq(seen.reasons[1], "gap: expected seq 3, got 4");

        event_sub_get_stats(seen.sub, &st);
        ck_assert_uint_eq(st.delivered, 4);
        ck_assert_uint_eq(st.stale, 1);
        ck_assert_uint_eq(st.malformed, 2);
        ck_assert_uint_eq(st.resyncs, 2);

        /* Lined up with a snapshot taken at seq 10: 8..10 are in it, 11
         * continues without a resync. */
        event_sub_set_position(seen.sub, E, 10);
        raw_send(raw, E, 8, "old");
        raw_send(raw, E, 11, "k");
        sw.received = 9;
        ck_assert(test_run_until(e, received_enough, &sw, 5 * SEC));
        ck_assert_uint_eq(seen.n, 5);
        ck_assert_str_eq(seen.names[4], "k");
        ck_assert_uint_eq(seen.n_resyncs, 2);

        /* After a reset the next event resyncs again. */
        event_sub_reset_position(seen.sub);
        raw_send(raw, E, 12, "l");
        sw.received = 10;
        ck_assert(test_run_until(e, received_enough, &sw, 5 * SEC));
        ck_assert_uint_eq(seen.n_resyncs, 3);
        ck_assert_str_eq(seen.reasons[2], "first event");

        event_sub_free(seen.sub);
        nng_close(raw);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_publisher_restart_new_epoch) {
        EventSubConfig cfg = { .reconnect_min_ms = 20, .reconnect_max_ms = 100 };
        sd_event *e = NULL;
        EventPub *p = NULL;
        static Seen seen;
        uint64_t first_epoch;
        Want w = { .seen = &seen };

        memset(&seen, 0, sizeof(seen));
        ck_assert_int_ge(sd_event_new(&e), 0);
        p = start_pub_and_sub(e, &cfg, &seen);
        publish_worker_lost(p, "before", 3);
        w.n = 3;
        ck_assert(test_run_until(e, seen_enough, &w, 5 * SEC));
        ck_assert_uint_eq(seen.n_resyncs, 1);
        first_epoch = event_pub_epoch(p);

        /* The publisher restarts: same URL, a new and larger epoch, seq
         * starts again at 1. */
        p = event_pub_free(p);
        usleep(2000);
        ck_assert_int_eq(event_pub_new(url, 0, NULL, &p), 0);
        ck_assert_uint_gt(event_pub_epoch(p), first_epoch);
        ck_assert(test_run_until(e, pub_has_subscriber, p, 5 * SEC));
        publish_worker_lost(p, "after", 1);
        w.n = 4;
        ck_assert(test_run_until(e, seen_enough, &w, 5 * SEC));
        ck_assert_uint_eq(seen.n_resyncs, 2);
        ck_assert_ptr_nonnull(strstr(seen.reasons[1], "epoch changed"));
        ck_assert_uint_eq(seen.seqs[3], 1);
        ck_assert_uint_eq(seen.epochs[3], event_pub_epoch(p));
        ck_assert_str_eq(seen.names[3], "after");

        event_sub_free(seen.sub);
        event_pub_free(p);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_free_from_handler) {
        sd_event *e = NULL;
        EventPub *p = NULL;
        static Seen seen;
        Want w = { .seen = &seen, .n = 1 };

        memset(&seen, 0, sizeof(seen));
        seen.free_in_handler = true;
        ck_assert_int_ge(sd_event_new(&e), 0);
        p = start_pub_and_sub(e, NULL, &seen);
        publish_worker_lost(p, "x", 20);
        /* Let every event reach the subscriber's queue before the loop runs,
         * so that the free below finds 19 of them queued, and the wire is
         * quiet: nng 1.5.2 can hang in nng_close() on a socket that is
         * receiving at that very moment (nanomsg/nng#1543, see
         * nanomsg/nng#1636). */
        usleep(300 * 1000);
        ck_assert(test_run_until(e, seen_enough, &w, 5 * SEC));
        /* Freed from the first event's handler: nothing more arrives, the
         * rest was freed with the queue (ASan checks for leaks). */
        ck_assert_ptr_null(seen.sub);
        for (int i = 0; i < 5; i++)
                ck_assert_int_ge(sd_event_run(e, 10 * 1000), 0);
        ck_assert_uint_eq(seen.n, 1);

        ck_assert_ptr_null(event_sub_free(NULL));
        ck_assert_ptr_null(event_pub_free(NULL));
        ck_assert_int_eq(event_pub_send(NULL, NULL), -EINVAL);
        event_pub_free(p);
        sd_event_unref(e);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_events_in_order,
                test_gap_and_stale_and_malformed,
                test_publisher_restart_new_epoch,
                test_free_from_handler,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 60 };

        return check_run_tests("event", &options, tests);
}
