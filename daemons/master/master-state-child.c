/* The timer's save in a child process (docs/DESIGN.md "The master's
 * state").
 *
 * Building and writing the snapshot of 10,000 workers and 100,000
 * executors takes tens of milliseconds, and every request that arrives
 * meanwhile would wait for it on the loop.  fork() gives the child a
 * copy-on-write view of the state as it is at that moment — consistent,
 * since only the loop's thread changes it — and costs the loop the copy
 * of the page tables.  The child does its work (in filesystem mode it
 * writes state.pb as a save on the loop would, master_state_write_file();
 * in zookeeper mode it packs the state into a memfd for the loop to send,
 * master-zk-save-async.c), sends a fixed-size reply down a pipe and exits;
 * the loop reads it when the pipe ends.
 *
 * A child runs only that work: no nng, no sd-event, no logging (what
 * failed comes back in the reply, and the master logs it).  It keeps no
 * other file open but the one it was given: a connection the master closes
 * must close, and a listening socket must be free for a master started
 * after this one.  It dies with the master (PR_SET_PDEATHSIG), so an older
 * snapshot is never renamed over a newer master's; and a save on the loop
 * stops it first for the same reason (master_state_save()). */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "master.h"

#define CHILD_REPLY_FD 3
#define CHILD_GIVEN_FD 4
/* Fds are moved above this first, so that moving one to 3 or 4 cannot
 * close the other. */
#define CHILD_FD_SCRATCH 10
/* A save is background work: where cores are short, executors starting
 * and requests come first.  At this niceness the child still gets about a
 * tenth of a core that others want, and all of an idle one. */
#define CHILD_NICE 10

static int child_main(Master *m, int reply_fd, int given_fd, pid_t parent, StateChildWork work, size_t reply_size) {
        uint8_t reply[STATE_CHILD_REPLY_MAX] = {};

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                return 1;
        (void) setpriority(PRIO_PROCESS, 0, CHILD_NICE);
        /* the pipe becomes fd 3, the given file fd 4; nothing else of the
         * master's stays open but stdin, stdout and stderr */
        reply_fd = fcntl(reply_fd, F_DUPFD, CHILD_FD_SCRATCH);
        if (given_fd >= 0)
                given_fd = fcntl(given_fd, F_DUPFD, CHILD_FD_SCRATCH);
        if (reply_fd < 0 || dup2(reply_fd, CHILD_REPLY_FD) < 0)
                return 1;
        if (given_fd >= 0 && dup2(given_fd, CHILD_GIVEN_FD) < 0)
                return 1;
        if (close_range(given_fd >= 0 ? CHILD_GIVEN_FD + 1 : CHILD_REPLY_FD + 1, ~0u, 0) < 0)
                return 1;
        work(m, given_fd >= 0 ? CHILD_GIVEN_FD : -1, reply);
        return write_full(CHILD_REPLY_FD, reply, reply_size) < 0 ? 1 : 0;
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
        uint8_t reply[STATE_CHILD_REPLY_MAX];
        StateChildDone done = m->state_child_done;
        ssize_t n;
        (void) s, (void) revents;

        /* one write of at most STATE_CHILD_REPLY_MAX bytes (below PIPE_BUF:
         * written at once), then the end: all of it, or nothing if the
         * child died first */
        do
                n = read(fd, reply, m->state_child_reply_size);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return 0;
        child_reap(m);
        done(m, n == (ssize_t) m->state_child_reply_size ? reply : NULL);
        return 0;
}

int master_state_child_run(Master *m, StateChildWork work, size_t reply_size, int given_fd, StateChildDone done) {
        _cleanup_close_ int rfd = -1, wfd = -1;
        pid_t parent = getpid(), pid;
        usec_t forked_at;
        int p[2], r;

        assert(reply_size <= STATE_CHILD_REPLY_MAX);
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
        forked_at = now_mono_usec();
        pid = fork();
        if (pid < 0) {
                r = -errno;
                m->state_child_source = sd_event_source_disable_unref(m->state_child_source);
                return r;
        }
        if (pid == 0)
                _exit(child_main(m, wfd, given_fd, parent, work, reply_size));

        m->state_fork_pause = now_mono_usec() - forked_at;
        m->state_child = pid;
        m->state_child_seq = m->journal_seq;
        m->state_child_done = done;
        m->state_child_reply_size = reply_size;
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

/* ---------------------------------------------- filesystem mode: state.pb */

static void write_file_work(Master *m, int given_fd, void *reply) {
        (void) given_fd;
        (void) master_state_write_file(m, reply);
}

static void write_file_done(Master *m, const void *reply) {
        StateWritten w;

        if (reply)
                memcpy(&w, reply, sizeof(w));
        else {
                w = (StateWritten) { .error = -EIO };
                snprintf(w.failed, sizeof(w.failed), "The process saving the state in %s ended without saying so",
                         m->config.master.state_dir);
        }
        w.failed[sizeof(w.failed) - 1] = 0;
        master_state_child_done(m, &w, m->state_child_seq);
}

int master_state_child_start(Master *m) {
        return master_state_child_run(m, write_file_work, sizeof(StateWritten), -1, write_file_done);
}
