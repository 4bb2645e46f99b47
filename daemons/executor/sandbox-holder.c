/* An executor's unit is sandboxed (docs/security.md): systemd loads about
 * fifteen seccomp filters into it and gives it a mount namespace of its
 * own.  When the executor is the last process holding them, its death
 * frees them, and the kernel does that before it closes the executor's
 * files: each filter's JIT image is freed by a kworker that preempts the
 * dying thread, and the namespace's unmount waits for an expedited RCU
 * grace period.  Measured on a 2-core guest, a SIGKILLed executor's
 * connection to its driver closed about 2.5 ms after its last thread
 * stopped running (bench/README.md, the executor SIGKILL rows).
 *
 * So the executor forks a child before it has a thread or a connection,
 * which shares both and waits on a pipe whose other end only the executor
 * holds.  The
 * executor's death then drops a reference to each and closes its files,
 * sockets and pipe together; the child reads the end of the pipe and
 * exits, freeing the filters and the namespace after the driver has been
 * told.  (Not PR_SET_PDEATHSIG: it fires when the thread that forked dies,
 * which under SIGKILL is often before the others.)  Freeing them still
 * costs a core about 1.5 ms; at SCHED_IDLE the child does it once the
 * driver and the worker, woken by the same death, have run: on a busy
 * machine it otherwise took the core the driver was waiting for.  The
 * child holds no socket: it is forked before there is one, and closes
 * every file it inherited but its end of the pipe.  It dies with the
 * unit's cgroup in any case. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-holder.h"

static _Noreturn void hold(int pipe_read) {
        char c;

        (void) prctl(PR_SET_NAME, "executor-hold");
        (void) sched_setscheduler(0, SCHED_IDLE, &(struct sched_param) {});
        /* stdin: the pipe; stdout and stderr (the executor's journal
         * stream): nothing */
        if (dup2(pipe_read, 0) < 0)
                _exit(0);
        {
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (null >= 0) {
                        (void) dup2(null, 1);
                        (void) dup2(null, 2);
                }
        }
        (void) syscall(SYS_close_range, 3u, ~0u, 0u);
        while (read(0, &c, 1) != 0 && errno == EINTR)
                ;
        _exit(0);
}

int sandbox_holder_start(void) {
        int fds[2];
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return 0; /* no holder: a death takes a little longer to see */
        pid = fork();
        if (pid == 0)
                hold(fds[0]);
        (void) close(fds[0]);
        if (pid < 0)
                (void) close(fds[1]);
        /* else fds[1] stays open for the executor's life: its close is the
         * holder's signal */
        return 0;
}
