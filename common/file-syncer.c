/* See file-syncer.h.  One thread, one lock: the loop sets what to sync
 * (fd, ticket) and signals; the thread syncs outside the lock, records the
 * result and writes the eventfd; the loop reads it and calls done(). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "file-syncer.h"
#include "log.h"
#include "time-util.h"

struct FileSyncer {
        sd_event_source *source; /* the eventfd */
        int efd;
        FileSyncDone done;
        void *userdata;
        pthread_t thread;
        bool thread_started;
        bool lock_ready;     /* lock and wake initialised */

        pthread_mutex_t lock;
        pthread_cond_t wake;
        /* under lock */
        int fd;              /* the file of the newest request */
        uint64_t requested;  /* the newest ticket handed out */
        uint64_t synced;     /* the newest ticket a finished sync covered */
        int error;           /* of that sync */
        bool stopping;
        uint64_t min_interval_usec; /* between the starts of two syncs */
        uint64_t last_start_usec;

        uint64_t reported;   /* loop only: the newest ticket done() was given */
};

static void *syncer_thread(void *userdata) {
        FileSyncer *s = userdata;

        pthread_mutex_lock(&s->lock);
        for (;;) {
                uint64_t ticket;
                int fd, r = 0;

                while (s->synced == s->requested && !s->stopping)
                        pthread_cond_wait(&s->wake, &s->lock);
                if (s->synced == s->requested)
                        break;  /* stopping, nothing left */
                if (s->min_interval_usec > 0 && !s->stopping) {
                        uint64_t now = now_mono_usec(), next = s->last_start_usec + s->min_interval_usec;

                        if (now < next) {
                                /* what is asked meanwhile joins this sync */
                                pthread_mutex_unlock(&s->lock);
                                (void) usleep((useconds_t) (next - now));
                                pthread_mutex_lock(&s->lock);
                        }
                        s->last_start_usec = now_mono_usec();
                }
                ticket = s->requested;
                fd = s->fd;
                pthread_mutex_unlock(&s->lock);

                if (fdatasync(fd) < 0)
                        r = -errno;

                pthread_mutex_lock(&s->lock);
                s->synced = ticket;
                s->error = r;
                pthread_mutex_unlock(&s->lock);
                (void) eventfd_write(s->efd, 1);
                pthread_mutex_lock(&s->lock);
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

static void report(FileSyncer *s) {
        uint64_t synced;
        int error;

        pthread_mutex_lock(&s->lock);
        synced = s->synced;
        error = s->error;
        pthread_mutex_unlock(&s->lock);
        if (synced == s->reported)
                return;
        s->reported = synced;
        s->done(s, synced, error, s->userdata);
}

static int on_eventfd(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        eventfd_t v;
        (void) src, (void) revents;

        (void) eventfd_read(fd, &v);
        report(userdata);
        return 0;
}

int file_syncer_new(sd_event *e, FileSyncDone done, void *userdata, FileSyncer **ret) {
        _cleanup_(file_syncer_freep) FileSyncer *s = NULL;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->efd = -1;
        s->done = done;
        s->userdata = userdata;
        s->fd = -1;
        if (pthread_mutex_init(&s->lock, NULL) != 0)
                return -ENOMEM;
        if (pthread_cond_init(&s->wake, NULL) != 0) {
                pthread_mutex_destroy(&s->lock);
                return -ENOMEM;
        }
        s->lock_ready = true;
        s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->efd < 0)
                return -errno;
        r = sd_event_add_io(e, &s->source, s->efd, EPOLLIN, on_eventfd, s);
        if (r < 0)
                return r;
        r = -pthread_create(&s->thread, NULL, syncer_thread, s);
        if (r < 0)
                return r;
        s->thread_started = true;
        *ret = TAKE_PTR(s);
        return 0;
}

int file_syncer_request(FileSyncer *s, int fd, uint64_t *ret_ticket) {
        if (!s || fd < 0)
                return -EINVAL;
        pthread_mutex_lock(&s->lock);
        s->fd = fd;
        *ret_ticket = ++s->requested;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        return 0;
}

void file_syncer_set_min_interval(FileSyncer *s, uint64_t usec) {
        pthread_mutex_lock(&s->lock);
        s->min_interval_usec = usec;
        pthread_mutex_unlock(&s->lock);
}

uint64_t file_syncer_requested(const FileSyncer *s) {
        uint64_t v;

        pthread_mutex_lock((pthread_mutex_t *) &s->lock);
        v = s->requested;
        pthread_mutex_unlock((pthread_mutex_t *) &s->lock);
        return v;
}

uint64_t file_syncer_completed(const FileSyncer *s) {
        return s->reported;
}

FileSyncer *file_syncer_free(FileSyncer *s) {
        if (!s)
                return NULL;
        if (s->thread_started) {
                pthread_mutex_lock(&s->lock);
                s->stopping = true;
                pthread_cond_signal(&s->wake);
                pthread_mutex_unlock(&s->lock);
                (void) pthread_join(s->thread, NULL);
                /* what it synced last, reported before we go */
                report(s);
        }
        sd_event_source_disable_unref(s->source);
        if (s->efd >= 0)
                close(s->efd);
        if (s->lock_ready) {
                pthread_cond_destroy(&s->wake);
                pthread_mutex_destroy(&s->lock);
        }
        free(s);
        return NULL;
}
