/* The sd-event calls spark-executor makes, on epoll, a timerfd and a
 * signalfd: the executor links this file instead of libsystemd
 * (docs/DESIGN.md §5, "The executor's start-up").
 *
 * Why: an executor is started for every application on every worker, and
 * libsystemd is the last shared library it would load.  With it come
 * libcap, libgcrypt, libgpg-error, liblzma, libzstd and liblz4: seven
 * objects to map and relocate in a fresh, sandboxed process, about 2 ms
 * of each executor's start on the test machines (bench/README.md).
 * Debian ships no archive of libsystemd to link statically.
 *
 * What it keeps of sd-event's contract (sd-event(3) and the pages of each
 * call), for the calls below and no others:
 * - sd_event_run() dispatches one pending source per call, the one that
 *   became pending first, and waits only when none is pending;
 * - a ONESHOT source is turned off before its callback runs; a callback
 *   that returns an error turns its source off;
 * - a source unreferenced inside its own callback is taken out of the
 *   loop at once (its fd may be closed right after) and freed after the
 *   callback returns;
 * - a signal must be blocked before its source is added (-EBUSY
 *   otherwise); a source without a callback exits the loop with its
 *   userdata as the code;
 * - time sources are CLOCK_MONOTONIC only, and fire at their time (the
 *   accuracy, a permitted delay, is not used);
 * - nothing is thread-safe: one thread runs the loop at a time, as with
 *   sd-event.
 * Priorities, child, defer, post, exit and inotify sources are not here:
 * the executor uses none, and a program that called them would not link.
 * Nor are floating sources: a source added without a place to return it
 * is refused (-EOPNOTSUPP). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "time-util.h"

typedef enum SourceType {
        SOURCE_IO,
        SOURCE_TIME,
        SOURCE_SIGNAL,
} SourceType;

struct sd_event_source {
        unsigned n_ref;
        sd_event *event; /* NULL once taken out of the loop */
        SourceType type;
        int enabled;
        bool pending;
        bool dispatching;
        void *userdata;
        char *description;
        sd_event_source *prev, *next;  /* the loop's sources */
        sd_event_source *pending_next; /* the loop's pending queue */
        union {
                struct {
                        int fd;
                        uint32_t events;
                        uint32_t revents;
                        bool registered; /* in the epoll set */
                        sd_event_io_handler_t callback;
                } io;
                struct {
                        uint64_t next;
                        sd_event_time_handler_t callback;
                } time;
                struct {
                        int sig;
                        struct signalfd_siginfo info;
                        sd_event_signal_handler_t callback;
                } signal;
        };
};

struct sd_event {
        unsigned n_ref;
        int epoll_fd;
        int timer_fd;
        uint64_t timer_armed; /* the time timer_fd is set to; UINT64_MAX: not set */
        int signal_fd;
        sigset_t signals; /* those of the signal sources */
        int state;
        bool exit_requested;
        int exit_code;
        sd_event_source *sources;
        sd_event_source *pending_head, *pending_tail;
};

/* epoll's data for the loop's own fds: addresses no source has */
static char timer_tag, signal_tag;

int sd_event_new(sd_event **ret) {
        sd_event *e;

        if (!ret)
                return -EINVAL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->n_ref = 1;
        e->timer_fd = e->signal_fd = -1;
        e->timer_armed = UINT64_MAX;
        e->state = SD_EVENT_INITIAL;
        sigemptyset(&e->signals);
        e->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (e->epoll_fd < 0) {
                int r = -errno;
                free(e);
                return r;
        }
        *ret = e;
        return 0;
}

static void pending_remove(sd_event_source *s) {
        sd_event *e = s->event;
        sd_event_source *before = NULL;

        if (!s->pending)
                return;
        s->pending = false;
        if (!e)
                return;
        for (sd_event_source *q = e->pending_head; q; before = q, q = q->pending_next)
                if (q == s) {
                        if (before)
                                before->pending_next = s->pending_next;
                        else
                                e->pending_head = s->pending_next;
                        if (e->pending_tail == s)
                                e->pending_tail = before;
                        break;
                }
        s->pending_next = NULL;
}

static void pending_add(sd_event_source *s) {
        sd_event *e = s->event;

        if (s->pending || !e)
                return;
        s->pending = true;
        s->pending_next = NULL;
        if (e->pending_tail)
                e->pending_tail->pending_next = s;
        else
                e->pending_head = s;
        e->pending_tail = s;
}

static int io_update(sd_event_source *s) {
        sd_event *e = s->event;
        struct epoll_event ev = { .events = s->io.events, .data.ptr = s };

        if (!e)
                return 0;
        if (s->enabled == SD_EVENT_OFF) {
                if (s->io.registered) {
                        (void) epoll_ctl(e->epoll_fd, EPOLL_CTL_DEL, s->io.fd, NULL);
                        s->io.registered = false;
                }
                return 0;
        }
        if (epoll_ctl(e->epoll_fd, s->io.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->io.fd, &ev) < 0)
                return -errno;
        s->io.registered = true;
        return 0;
}

static int signals_update(sd_event *e) {
        int fd = signalfd(e->signal_fd, &e->signals, SFD_NONBLOCK | SFD_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (e->signal_fd < 0) {
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &signal_tag };
                if (epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        int r = -errno;
                        close(fd);
                        return r;
                }
                e->signal_fd = fd;
        }
        return 0;
}

/* Out of the loop: no longer in epoll, pending or the list; s stays
 * valid for whoever still holds it. */
static void source_disconnect(sd_event_source *s) {
        sd_event *e = s->event;

        if (!e)
                return;
        pending_remove(s);
        if (s->type == SOURCE_IO && s->io.registered) {
                (void) epoll_ctl(e->epoll_fd, EPOLL_CTL_DEL, s->io.fd, NULL);
                s->io.registered = false;
        }
        if (s->type == SOURCE_SIGNAL) {
                /* one source per signal (sd_event_add_signal()) */
                (void) sigdelset(&e->signals, s->signal.sig);
                (void) signals_update(e);
        }
        if (s->prev)
                s->prev->next = s->next;
        else
                e->sources = s->next;
        if (s->next)
                s->next->prev = s->prev;
        s->prev = s->next = NULL;
        s->event = NULL;
        (void) sd_event_unref(e);
}

static void source_free(sd_event_source *s) {
        source_disconnect(s);
        free(s->description);
        free(s);
}

static int source_new(sd_event *e, sd_event_source **ret, SourceType type, void *userdata,
                      sd_event_source **out) {
        sd_event_source *s;

        if (!e || e == SD_EVENT_DEFAULT)
                return -EINVAL;
        if (e->state == SD_EVENT_FINISHED)
                return -ESTALE;
        /* a source nobody holds would be the loop's (floating): not here */
        if (!ret)
                return -EOPNOTSUPP;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->n_ref = 1;
        s->type = type;
        s->userdata = userdata;
        s->enabled = SD_EVENT_ON;
        s->event = e;
        e->n_ref++;
        s->next = e->sources;
        if (e->sources)
                e->sources->prev = s;
        e->sources = s;
        *out = s;
        return 0;
}

int sd_event_add_io(sd_event *e, sd_event_source **ret, int fd, uint32_t events, sd_event_io_handler_t callback,
                    void *userdata) {
        sd_event_source *s;
        int r;

        if (fd < 0 || !callback)
                return -EINVAL;
        r = source_new(e, ret, SOURCE_IO, userdata, &s);
        if (r < 0)
                return r;
        s->io.fd = fd;
        s->io.events = events;
        s->io.callback = callback;
        r = io_update(s);
        if (r < 0) {
                source_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

int sd_event_add_time(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t usec, uint64_t accuracy,
                      sd_event_time_handler_t callback, void *userdata) {
        sd_event_source *s;
        int r;
        (void) accuracy;

        if (clock != CLOCK_MONOTONIC)
                return -EOPNOTSUPP;
        if (!callback)
                return -EINVAL;
        r = source_new(e, ret, SOURCE_TIME, userdata, &s);
        if (r < 0)
                return r;
        s->enabled = SD_EVENT_ONESHOT;
        s->time.next = usec;
        s->time.callback = callback;
        *ret = s;
        return 0;
}

/* now + usec on CLOCK_MONOTONIC; UINT64_MAX (never) if that overflows */
static uint64_t usec_from_now(uint64_t usec) {
        uint64_t now = now_mono_usec();

        return usec >= UINT64_MAX - now ? UINT64_MAX : now + usec;
}

int sd_event_add_time_relative(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t usec,
                               uint64_t accuracy, sd_event_time_handler_t callback, void *userdata) {
        return sd_event_add_time(e, ret, clock, usec_from_now(usec), accuracy, callback, userdata);
}

int sd_event_add_signal(sd_event *e, sd_event_source **ret, int sig, sd_event_signal_handler_t callback,
                        void *userdata) {
        sd_event_source *s;
        sigset_t blocked;
        int r;

        if (!e || e == SD_EVENT_DEFAULT || sig <= 0 || sig >= _NSIG || (sig & SD_EVENT_SIGNAL_PROCMASK))
                return -EINVAL;
        r = pthread_sigmask(SIG_SETMASK, NULL, &blocked);
        if (r != 0)
                return -r;
        if (!sigismember(&blocked, sig))
                return -EBUSY;
        for (sd_event_source *o = e->sources; o; o = o->next)
                if (o->type == SOURCE_SIGNAL && o->signal.sig == sig)
                        return -EBUSY;
        r = source_new(e, ret, SOURCE_SIGNAL, userdata, &s);
        if (r < 0)
                return r;
        s->signal.sig = sig;
        s->signal.callback = callback;
        (void) sigaddset(&e->signals, sig);
        r = signals_update(e);
        if (r < 0) {
                source_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

static void event_free(sd_event *e) {
        if (e->timer_fd >= 0)
                close(e->timer_fd);
        if (e->signal_fd >= 0)
                close(e->signal_fd);
        close(e->epoll_fd);
        free(e);
}

sd_event *sd_event_ref(sd_event *e) {
        if (e && e != SD_EVENT_DEFAULT)
                e->n_ref++;
        return e;
}

sd_event *sd_event_unref(sd_event *e) {
        /* every source holds a reference: none is left when this is the
         * last one */
        if (e && e != SD_EVENT_DEFAULT && --e->n_ref == 0)
                event_free(e);
        return NULL;
}

sd_event_source *sd_event_source_unref(sd_event_source *s) {
        if (!s || --s->n_ref > 0)
                return NULL;
        if (s->dispatching) {
                /* out of the loop now; freed once its callback returns */
                source_disconnect(s);
                return NULL;
        }
        source_free(s);
        return NULL;
}

sd_event_source *sd_event_source_disable_unref(sd_event_source *s) {
        if (s)
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return sd_event_source_unref(s);
}

sd_event *sd_event_source_get_event(sd_event_source *s) {
        return s ? s->event : NULL;
}

int sd_event_source_set_description(sd_event_source *s, const char *description) {
        char *d = NULL;

        if (!s)
                return -EINVAL;
        if (description && !(d = strdup(description)))
                return -ENOMEM;
        free(s->description);
        s->description = d;
        return 0;
}

int sd_event_source_get_enabled(sd_event_source *s, int *enabled) {
        if (!s)
                return -EINVAL;
        if (enabled)
                *enabled = s->enabled;
        return s->enabled != SD_EVENT_OFF;
}

int sd_event_source_set_enabled(sd_event_source *s, int enabled) {
        int old;

        if (!s || (enabled != SD_EVENT_OFF && enabled != SD_EVENT_ON && enabled != SD_EVENT_ONESHOT))
                return -EINVAL;
        if (!s->event)
                return enabled == SD_EVENT_OFF ? 0 : -ESTALE;
        old = s->enabled;
        s->enabled = enabled;
        if (enabled == SD_EVENT_OFF)
                pending_remove(s);
        if (s->type == SOURCE_IO && (old == SD_EVENT_OFF) != (enabled == SD_EVENT_OFF)) {
                int r = io_update(s);
                if (r < 0) {
                        s->enabled = old;
                        return r;
                }
        }
        return 0;
}

int sd_event_source_set_io_events(sd_event_source *s, uint32_t events) {
        uint32_t old;
        int r;

        if (!s || s->type != SOURCE_IO)
                return -EDOM;
        if (!s->event)
                return -ESTALE;
        if (s->io.events == events)
                return 0;
        old = s->io.events;
        s->io.events = events;
        pending_remove(s);
        r = io_update(s);
        if (r < 0)
                s->io.events = old;
        return r;
}

int sd_event_source_set_time(sd_event_source *s, uint64_t usec) {
        if (!s || s->type != SOURCE_TIME)
                return -EDOM;
        if (!s->event)
                return -ESTALE;
        s->time.next = usec;
        pending_remove(s);
        return 0;
}

int sd_event_source_set_time_relative(sd_event_source *s, uint64_t usec) {
        return sd_event_source_set_time(s, usec_from_now(usec));
}

int sd_event_exit(sd_event *e, int code) {
        if (!e || e == SD_EVENT_DEFAULT)
                return -EINVAL;
        if (e->state == SD_EVENT_FINISHED)
                return -ESTALE;
        e->exit_requested = true;
        e->exit_code = code;
        return 0;
}

int sd_event_get_exit_code(sd_event *e, int *code) {
        if (!e || e == SD_EVENT_DEFAULT)
                return -EINVAL;
        if (!e->exit_requested)
                return -ENODATA;
        if (code)
                *code = e->exit_code;
        return 0;
}

int sd_event_get_state(sd_event *e) {
        if (!e || e == SD_EVENT_DEFAULT)
                return -EINVAL;
        return e->state;
}

/* Time sources due by now become pending; returns the earliest time of
 * those that are not yet due (UINT64_MAX: none). */
static uint64_t timers_collect(sd_event *e, uint64_t now) {
        uint64_t earliest = UINT64_MAX;

        for (sd_event_source *s = e->sources; s; s = s->next) {
                if (s->type != SOURCE_TIME || s->enabled == SD_EVENT_OFF || s->pending ||
                    s->time.next == UINT64_MAX)
                        continue;
                if (s->time.next <= now)
                        pending_add(s);
                else if (s->time.next < earliest)
                        earliest = s->time.next;
        }
        return earliest;
}

static int timer_arm(sd_event *e, uint64_t when) {
        struct itimerspec its = {};

        if (when == e->timer_armed)
                return 0;
        if (e->timer_fd < 0) {
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &timer_tag };
                int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

                if (fd < 0)
                        return -errno;
                if (epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        int r = -errno;
                        close(fd);
                        return r;
                }
                e->timer_fd = fd;
        }
        if (when != UINT64_MAX) {
                its.it_value.tv_sec = (time_t) (when / 1000000u);
                its.it_value.tv_nsec = (long) (when % 1000000u) * 1000;
                /* 0 would disarm it: the epoch is long past in any case */
                if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
                        its.it_value.tv_nsec = 1;
        }
        if (timerfd_settime(e->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
                return -errno;
        e->timer_armed = when;
        return 0;
}

static void signals_collect(sd_event *e) {
        struct signalfd_siginfo si;

        while (read(e->signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                for (sd_event_source *s = e->sources; s; s = s->next)
                        if (s->type == SOURCE_SIGNAL && s->signal.sig == (int) si.ssi_signo &&
                            s->enabled != SD_EVENT_OFF) {
                                s->signal.info = si;
                                pending_add(s);
                                break;
                        }
}

/* Waits up to timeout (µs; UINT64_MAX: for ever) and makes ready sources
 * pending. */
static int wait_and_collect(sd_event *e, uint64_t timeout) {
        struct epoll_event events[64];
        uint64_t now = now_mono_usec(), earliest;
        int n, ms, r;

        earliest = timers_collect(e, now);
        if (e->pending_head)
                timeout = 0;
        r = timer_arm(e, earliest);
        if (r < 0)
                return r;
        if (timeout == UINT64_MAX)
                ms = -1;
        else /* rounded up: a wait never ends before its time */
                ms = (int) MIN(timeout / 1000 + (timeout % 1000 != 0), (uint64_t) INT_MAX);
        do
                n = epoll_wait(e->epoll_fd, events, (int) ELEMENTSOF(events), ms);
        while (n < 0 && errno == EINTR && ms < 0);
        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        for (int i = 0; i < n; i++) {
                void *p = events[i].data.ptr;

                if (p == &timer_tag) {
                        uint64_t expirations;
                        (void) !read(e->timer_fd, &expirations, sizeof(expirations));
                        e->timer_armed = UINT64_MAX; /* fired: set it again next time */
                } else if (p == &signal_tag)
                        signals_collect(e);
                else {
                        sd_event_source *s = p;
                        if (s->enabled == SD_EVENT_OFF)
                                continue;
                        s->io.revents = events[i].events;
                        pending_add(s);
                }
        }
        (void) timers_collect(e, now_mono_usec());
        return 0;
}

static int source_dispatch(sd_event_source *s) {
        sd_event *e = s->event;
        int r = 0;

        if (s->enabled == SD_EVENT_ONESHOT)
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        s->dispatching = true;
        switch (s->type) {
        case SOURCE_IO:
                r = s->io.callback(s, s->io.fd, s->io.revents, s->userdata);
                break;
        case SOURCE_TIME:
                r = s->time.callback(s, s->time.next, s->userdata);
                break;
        case SOURCE_SIGNAL:
                if (s->signal.callback)
                        r = s->signal.callback(s, &s->signal.info, s->userdata);
                else
                        r = sd_event_exit(e, (int) (intptr_t) s->userdata);
                break;
        }
        s->dispatching = false;
        if (s->n_ref == 0)
                source_free(s);
        else if (r < 0)
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return 0;
}

int sd_event_run(sd_event *e, uint64_t timeout) {
        sd_event_source *s;
        int r;

        if (!e || e == SD_EVENT_DEFAULT)
                return -EINVAL;
        if (e->state == SD_EVENT_FINISHED)
                return -ESTALE;
        if (e->state != SD_EVENT_INITIAL)
                return -EBUSY;
        if (e->exit_requested) {
                e->state = SD_EVENT_FINISHED;
                return 1;
        }
        if (!e->pending_head) {
                r = wait_and_collect(e, timeout);
                if (r < 0)
                        return r;
                if (!e->pending_head)
                        return 0;
        }
        s = e->pending_head;
        pending_remove(s);
        /* the loop must outlive the callback, whatever it frees (s is kept
         * by its dispatching flag: sd_event_source_unref()) */
        e->n_ref++;
        e->state = SD_EVENT_RUNNING;
        r = source_dispatch(s);
        e->state = SD_EVENT_INITIAL;
        (void) sd_event_unref(e);
        return r < 0 ? r : 1;
}
