/* The timer's save of state.pb in a child process (docs/DESIGN.md
 * "The master's state").
 *
 * Building and writing the snapshot of 10,000 workers and 100,000
 * executors takes tens of milliseconds, and every request that arrives
 * meanwhile would wait for it on the loop.  fork() gives the child a
 * copy-on-write view of the state as it is at that moment — consistent,
 * since only the loop's thread changes it — and costs the loop the copy
 * of the page tables.  The child writes the file as a save on the loop
 * would (master_state_write_file()), sends what it did down a pipe and
 * exits; the loop reads it when the pipe ends.
 *
 * A child runs only the snapshot code: no nng, no sd-event, no logging
 * (what failed comes back in the StateWritten, and the master logs it).
 * It keeps no other file open: a connection the master closes must close,
 * and a listening socket must be free for a master started after this one.
 * It dies with the master (PR_SET_PDEATHSIG), so an older snapshot is never
 * renamed over a newer master's; and a save on the loop stops it first for
 * the same reason (master_state_save()). */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "master.h"

static int child_main(Master *m, int fd, pid_t parent) {
        StateWritten w;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                return 1;
        /* the pipe becomes fd 3; nothing else of the master's stays open
         * but stdin, stdout and stderr */
        if (fd != 3 && dup2(fd, 3) < 0)
                return 1;
        if (close_range(4, ~0u, 0) < 0)
                return 1;
        (void) master_state_write_file(m, &w);
        return write_full(3, &w, sizeof(w)) < 0 ? 1 : 0;
}

static void child_reap(Master *m) {
        int status;

        m->state_child_source = sd_event_source_disable_unref(m->state_child_source);
        while (waitpid(m->state_child, &status, 0) < 0 && errno == EINTR)
                ;
        m->state_child = 0;
}

static int on_child_pipe(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Master *m = userdata;
        StateWritten w;
        ssize_t n;
        (void) s, (void) revents;

        /* one write of a few hundred bytes, then the end: all of it, or
         * nothing if the child died first */
        do
                n = read(fd, &w, sizeof(w));
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return 0;
        child_reap(m);
        if (n != (ssize_t) sizeof(w)) {
                w = (StateWritten) { .error = -EIO };
                snprintf(w.failed, sizeof(w.failed), "The process saving the state in %s ended without saying so",
                         m->config.master.state_dir);
        }
        w.failed[sizeof(w.failed) - 1] = 0;
        master_state_child_done(m, &w, m->state_child_seq);
        return 0;
}

int master_state_child_start(Master *m) {
        _cleanup_close_ int rfd = -1, wfd = -1;
        pid_t parent = getpid(), pid;
        int p[2], r;

        if (m->state_child > 0)
                return -EBUSY;
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        rfd = p[0];
        wfd = p[1];
        r = sd_event_add_io(m->event, &m->state_child_source, rfd, EPOLLIN, on_child_pipe, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_io_fd_own(m->state_child_source, true);
        rfd = -1;
        pid = fork();
        if (pid < 0) {
                r = -errno;
                m->state_child_source = sd_event_source_disable_unref(m->state_child_source);
                return r;
        }
        if (pid == 0)
                _exit(child_main(m, wfd, parent));

        m->state_child = pid;
        m->state_child_seq = m->journal_seq;
        /* what changes from now on is for the next save */
        m->state_dirty = false;
        return 0;
}

void master_state_child_stop(Master *m) {
        if (m->state_child <= 0)
                return;
        (void) kill(m->state_child, SIGKILL);
        child_reap(m);
}
