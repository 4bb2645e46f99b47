/* Shared by the unit tests that serve their own sockets on an sd-event
 * loop: the loop run until a condition holds, with a deadline so that a
 * test fails instead of hanging; a blocking call made on a thread while
 * the loop serves its other end; a loopback port nobody listens on; a
 * private directory for ipc:// sockets and files. */
#pragma once

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "rm-rf.h"
#include "time-util.h"

/* How long one loop iteration may wait for an event: short, so that a
 * condition set by another thread is seen soon. */
#define TEST_LOOP_SLICE_USEC (10 * USEC_PER_MSEC)

/* Runs the loop until done(userdata) holds or timeout_usec have passed;
 * returns whether it holds. */
static inline bool test_run_until(sd_event *e, bool (*done)(void *), void *userdata, usec_t timeout_usec) {
        usec_t deadline = now_mono_usec() + timeout_usec;

        while (!done(userdata)) {
                if (now_mono_usec() >= deadline)
                        return false;
                ck_assert_int_ge(sd_event_run(e, TEST_LOOP_SLICE_USEC), 0);
        }
        return true;
}

static inline bool test_flag_is_set(void *flag) {
        return *(const bool *) flag;
}

/* Runs the loop until *flag (set by a callback on the loop) or timeout. */
static inline bool test_run_until_flag(sd_event *e, const bool *flag, usec_t timeout_usec) {
        return test_run_until(e, test_flag_is_set, (void *) flag, timeout_usec);
}

/* Runs the loop for usec, whatever happens. */
static inline void test_run_for(sd_event *e, usec_t usec) {
        bool never = false;

        (void) test_run_until_flag(e, &never, usec);
}

typedef struct TestThreadCall {
        void (*fn)(void *);
        void *arg;
        atomic_bool finished;
} TestThreadCall;

static inline void *test_thread_call_run(void *userdata) {
        TestThreadCall *c = userdata;

        c->fn(c->arg);
        atomic_store(&c->finished, true);
        return NULL;
}

static inline bool test_thread_call_finished(void *userdata) {
        return atomic_load(&((TestThreadCall *) userdata)->finished);
}

/* Runs fn(arg) on a thread while the loop serves: for a blocking call
 * (rpc_call_sync(), a raw socket) whose other end is on this loop.  The
 * test fails if fn has not returned within timeout_usec. */
static inline void test_call_beside_loop(sd_event *e, void (*fn)(void *), void *arg, usec_t timeout_usec) {
        TestThreadCall c = { .fn = fn, .arg = arg };
        pthread_t t;

        atomic_init(&c.finished, false);
        ck_assert_int_eq(pthread_create(&t, NULL, test_thread_call_run, &c), 0);
        ck_assert_msg(test_run_until(e, test_thread_call_finished, &c, timeout_usec),
                      "the call on the thread did not return in time");
        pthread_join(t, NULL);
}

/* A loopback TCP port nothing listens on right now. */
static inline unsigned test_free_port(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &sa, &len), 0);
        close(fd);
        return ntohs(sa.sin_port);
}

/* Makes a new directory /tmp/NAME-XXXXXX, its path in dir. */
static inline void test_tmpdir_new(char *dir, size_t size, const char *name) {
        ck_assert_int_lt(snprintf(dir, size, "/tmp/%s-XXXXXX", name), (int) size);
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Removes dir and everything in it. */
static inline void test_tmpdir_remove(const char *dir) {
        (void) rm_rf_at(AT_FDCWD, dir);
}
