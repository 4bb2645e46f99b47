/* See loop-standby.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "loop-standby.h"
#include "time-util.h"

typedef enum LoopPlace {
        LOOP_HOME,    /* on the owner's thread */
        LOOP_LENT,    /* the owner is busy; the timer runs */
        LOOP_TAKEN,   /* the standby thread runs it */
        LOOP_WANTED,  /* ... and the owner is done and waits for it */
} LoopPlace;

struct LoopStandby {
        LoopTurnFn turn;
        LoopWakeFn wake;
        void *userdata;
        struct itimerspec after;
        int timer_fd;

        pthread_t thread;
        bool started;
        pthread_mutex_t lock;
        pthread_cond_t moved;   /* place changed */
        /* Guarded by lock. */
        LoopPlace place;
        bool stopping;
};

static void arm(LoopStandby *s, const struct itimerspec *when) {
        (void) timerfd_settime(s->timer_fd, 0, when, NULL);
}

/* Under the lock: runs the loop's turns until the owner wants it back. */
static void host(LoopStandby *s) {
        s->place = LOOP_TAKEN;
        while (s->place != LOOP_WANTED) {
                bool more;

                pthread_mutex_unlock(&s->lock);
                more = s->turn(s->userdata);
                pthread_mutex_lock(&s->lock);
                /* a loop that ended waits for its owner */
                while (!more && s->place != LOOP_WANTED)
                        pthread_cond_wait(&s->moved, &s->lock);
        }
        s->place = LOOP_HOME;
        pthread_cond_broadcast(&s->moved);
}

static void *standby_thread(void *arg) {
        LoopStandby *s = arg;

        for (;;) {
                uint64_t ticks;

                /* blocks until the timer fires: a lending that lasted, or
                 * the stop */
                if (read(s->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EINTR && errno != EAGAIN)
                        break;
                pthread_mutex_lock(&s->lock);
                if (s->stopping) {
                        pthread_mutex_unlock(&s->lock);
                        break;
                }
                /* a timer that fired as the owner came back finds it home */
                if (s->place == LOOP_LENT)
                        host(s);
                pthread_mutex_unlock(&s->lock);
        }
        return NULL;
}

int loop_standby_new(LoopTurnFn turn, LoopWakeFn wake, void *userdata, uint64_t after_usec, LoopStandby **ret) {
        pthread_condattr_t ca;
        LoopStandby *s;
        int k;

        if (!turn || !wake || after_usec == 0 || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->turn = turn;
        s->wake = wake;
        s->userdata = userdata;
        s->after.it_value = timespec_from_usec(after_usec);
        s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (s->timer_fd < 0) {
                k = -errno;
                free(s);
                return k;
        }
        pthread_mutex_init(&s->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->moved, &ca);
        pthread_condattr_destroy(&ca);
        k = pthread_create(&s->thread, NULL, standby_thread, s);
        if (k != 0) {
                loop_standby_free(s);
                return -k;
        }
        s->started = true;
        *ret = s;
        return 0;
}

LoopStandby *loop_standby_free(LoopStandby *s) {
        if (!s)
                return NULL;
        if (s->started) {
                static const struct itimerspec now = { .it_value = { .tv_nsec = 1 } };

                pthread_mutex_lock(&s->lock);
                s->stopping = true;
                pthread_mutex_unlock(&s->lock);
                arm(s, &now);
                pthread_join(s->thread, NULL);
        }
        close(s->timer_fd);
        pthread_cond_destroy(&s->moved);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
}

void loop_standby_lend(LoopStandby *s) {
        pthread_mutex_lock(&s->lock);
        s->place = LOOP_LENT;
        pthread_mutex_unlock(&s->lock);
        arm(s, &s->after);
}

bool loop_standby_reclaim(LoopStandby *s) {
        static const struct itimerspec off = {};

        pthread_mutex_lock(&s->lock);
        if (s->place == LOOP_LENT) {
                s->place = LOOP_HOME;
                pthread_mutex_unlock(&s->lock);
                arm(s, &off);
                return false;
        }
        s->place = LOOP_WANTED;
        pthread_cond_broadcast(&s->moved);
        pthread_mutex_unlock(&s->lock);

        /* the turn it is in ends, and the loop comes back after it */
        s->wake(s->userdata);
        pthread_mutex_lock(&s->lock);
        while (s->place != LOOP_HOME)
                pthread_cond_wait(&s->moved, &s->lock);
        pthread_mutex_unlock(&s->lock);
        return true;
}

bool loop_standby_wait_reclaim(LoopStandby *s, uint64_t timeout_usec) {
        struct timespec deadline = mono_deadline_after(timeout_usec);
        bool wanted;

        pthread_mutex_lock(&s->lock);
        while (s->place == LOOP_TAKEN)
                if (pthread_cond_timedwait(&s->moved, &s->lock, &deadline) == ETIMEDOUT)
                        break;
        wanted = s->place == LOOP_WANTED;
        pthread_mutex_unlock(&s->lock);
        return wanted;
}
