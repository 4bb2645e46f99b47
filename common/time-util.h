/* Monotonic and wall clock in microseconds. */
#pragma once

#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;

#define USEC_PER_SEC  1000000ULL
#define USEC_PER_MSEC 1000ULL

static inline usec_t clock_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / 1000;
}

static inline usec_t now_mono_usec(void) {
        return clock_usec(CLOCK_MONOTONIC);
}

static inline usec_t now_real_usec(void) {
        return clock_usec(CLOCK_REALTIME);
}

/* The CPU time the calling thread has used: work done, not time waited
 * for a core. */
static inline usec_t thread_cpu_usec(void) {
        return clock_usec(CLOCK_THREAD_CPUTIME_ID);
}

static inline struct timespec timespec_from_usec(uint64_t usec) {
        return (struct timespec) { .tv_sec = (time_t) (usec / USEC_PER_SEC),
                                   .tv_nsec = (long) (usec % USEC_PER_SEC) * 1000 };
}

/* CLOCK_MONOTONIC now + timeout_usec, as pthread_cond_timedwait() takes it
 * with a condition on that clock. */
static inline struct timespec mono_deadline_after(uint64_t timeout_usec) {
        struct timespec ts, add = timespec_from_usec(timeout_usec);

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += add.tv_sec;
        ts.tv_nsec += add.tv_nsec;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        return ts;
}
