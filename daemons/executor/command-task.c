/* See command-task.h.  posix_spawn (vfork-like under glibc) rather than
 * fork(): it is cheaper in a process with large mappings, and safe with other
 * threads around.  Every pipe is O_CLOEXEC so that a command started by
 * another task thread at the same moment cannot hold our pipes open. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "alloc-util.h"
#include "command-task.h"
#include "command-words.h"

extern char **environ;

#define READ_CHUNK 65536u

static int close_fd(int fd) {
        if (fd >= 0)
                close(fd);
        return -1;
}

typedef struct OutputBuf {
        char *data;
        size_t len, allocated;
} OutputBuf;

/* Keeps the last COMMAND_STDERR_TAIL bytes, in order. */
static void tail_append(CommandResult *r, const char *buf, size_t n) {
        if (n >= COMMAND_STDERR_TAIL) {
                if (n > COMMAND_STDERR_TAIL || r->stderr_len > 0)
                        r->stderr_truncated = true;
                memcpy(r->stderr_tail, buf + n - COMMAND_STDERR_TAIL, COMMAND_STDERR_TAIL);
                r->stderr_len = COMMAND_STDERR_TAIL;
        } else {
                size_t keep = MIN(r->stderr_len, COMMAND_STDERR_TAIL - n);

                if (keep < r->stderr_len) {
                        r->stderr_truncated = true;
                        memmove(r->stderr_tail, r->stderr_tail + r->stderr_len - keep, keep);
                }
                memcpy(r->stderr_tail + keep, buf, n);
                r->stderr_len = keep + n;
        }
        r->stderr_tail[r->stderr_len] = '\0';
}

static int output_append(OutputBuf *o, const char *buf, size_t n) {
        if (GREEDY_REALLOC(o->data, o->allocated, o->len + n + 1) < 0)
                return -ENOMEM;
        memcpy(o->data + o->len, buf, n);
        o->len += n;
        o->data[o->len] = '\0';
        return 0;
}

/* Runs argv[0] (looked up in PATH when it has no '/'), or with words NULL,
 * `sh -c command`. */
static int spawn_command(const char *command, char **words, int out_fd, int err_fd, pid_t *ret) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, defaults;
        char *sh_argv[] = { (char *) "sh", (char *) "-c", (char *) command, NULL };
        int k;

        sigemptyset(&none);
        /* The executor blocks SIGTERM/SIGINT (sd-event) and ignores
         * SIGPIPE; a command must start with neither. */
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGPIPE);
        sigaddset(&defaults, SIGTERM);
        sigaddset(&defaults, SIGINT);

        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        k = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        if (k == 0)
                k = posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
        if (k == 0)
                k = posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
        if (k == 0)
                k = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                            POSIX_SPAWN_SETSIGDEF);
        if (k == 0)
                k = posix_spawnattr_setpgroup(&attr, 0);
        if (k == 0)
                k = posix_spawnattr_setsigmask(&attr, &none);
        if (k == 0)
                k = posix_spawnattr_setsigdefault(&attr, &defaults);
        if (k == 0)
                k = words ? posix_spawnp(ret, words[0], &fa, &attr, words, environ)
                          : posix_spawn(ret, COMMAND_SHELL, &fa, &attr, sh_argv, environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        return -k;
}

int command_run(const char *command, size_t max_output, const CommandHooks *hooks, CommandResult *ret) {
        _cleanup_close_ int out_r = -1, out_w = -1, err_r = -1, err_w = -1;
        _cleanup_(command_words_freep) char **words = NULL;
        OutputBuf out = {};
        struct pollfd pfd[2];
        siginfo_t si = {};
        char *buf;
        pid_t pid;
        int p[2], r, status;

        if (!command || !ret)
                return -EINVAL;
        *ret = (CommandResult) {};

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        out_r = p[0], out_w = p[1];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        err_r = p[0], err_w = p[1];

        /* A line the shell would only split into words runs without it
         * (command-words.h).  If that program cannot be run, the shell
         * runs the line after all, and says why in its own words and exit
         * status (127, 126), as it always did. */
        r = command_words(command, &words);
        if (r < 0)
                return r;
        if (r == 0 || spawn_command(command, words, out_w, err_w, &pid) < 0) {
                r = spawn_command(command, NULL, out_w, err_w, &pid);
                if (r < 0)
                        return r;
        }
        words = command_words_free(words);
        out_w = close_fd(out_w);
        err_w = close_fd(err_w);

        if (hooks && hooks->started && hooks->started(pid, hooks->userdata))
                (void) kill(-pid, SIGKILL);

        buf = malloc(READ_CHUNK);
        pfd[0] = (struct pollfd) { .fd = out_r, .events = POLLIN };
        pfd[1] = (struct pollfd) { .fd = err_r, .events = POLLIN };
        while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
                if (!buf) {
                        /* No memory for reading: let it die rather than block. */
                        (void) kill(-pid, SIGKILL);
                        break;
                }
                if (poll(pfd, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        (void) kill(-pid, SIGKILL);
                        break;
                }
                for (unsigned i = 0; i < 2; i++) {
                        ssize_t n;

                        if (pfd[i].fd < 0 || pfd[i].revents == 0)
                                continue;
                        n = read(pfd[i].fd, buf, READ_CHUNK);
                        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (n <= 0) {
                                pfd[i].fd = -1; /* closed by the cleanup */
                                continue;
                        }
                        if (i == 1) {
                                tail_append(ret, buf, (size_t) n);
                                continue;
                        }
                        if (ret->output_overflow)
                                continue; /* draining until the kill lands */
                        if (out.len + (size_t) n > max_output || output_append(&out, buf, (size_t) n) < 0) {
                                ret->output_overflow = true;
                                (void) kill(-pid, SIGKILL);
                        }
                }
        }
        free(buf);

        /* Wait without reaping, so that the pid (and so the process group)
         * cannot be reused while a kill might still be sent to it. */
        while (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
                ;
        if (hooks && hooks->exiting)
                hooks->exiting(pid, hooks->userdata);
        while (waitpid(pid, &status, 0) < 0) {
                if (errno != EINTR) {
                        status = 0;
                        break;
                }
        }

        if (WIFSIGNALED(status)) {
                ret->signal = WTERMSIG(status);
                ret->exit_code = 128 + ret->signal;
        } else
                ret->exit_code = WEXITSTATUS(status);
        ret->output = out.data;
        ret->output_len = out.len;
        return 0;
}

void command_result_done(CommandResult *r) {
        if (!r)
                return;
        free(r->output);
        r->output = NULL;
        r->output_len = 0;
}

static const char *signal_name(int sig, char buf[static 16]) {
        const char *n = sigabbrev_np(sig);

        if (n)
                return n;
        snprintf(buf, 16, "%d", sig);
        return buf;
}

void command_result_to_outcome(CommandResult *r, size_t max_output, TaskOutcome *o) {
        const char *tail = r->stderr_truncated ? "..." : "";
        char sig[16];

        task_outcome_done(o);
        if (r->output_overflow) {
                task_outcome_fail(o, r->exit_code, "output of more than %zu bytes exceeds max_result_bytes (%zu); command killed",
                                  max_output, max_output);
                return;
        }
        if (r->signal > 0) {
                if (r->stderr_len > 0)
                        task_outcome_fail(o, r->exit_code, "killed by signal %s\n%s%s", signal_name(r->signal, sig),
                                          tail, r->stderr_tail);
                else
                        task_outcome_fail(o, r->exit_code, "killed by signal %s", signal_name(r->signal, sig));
                return;
        }
        if (r->exit_code != 0) {
                if (r->stderr_len > 0)
                        task_outcome_fail(o, r->exit_code, "%s%s", tail, r->stderr_tail);
                else
                        task_outcome_fail(o, r->exit_code, "exited with status %d", r->exit_code);
                return;
        }
        o->status = SPARK__TASK_STATUS__TASK_OK;
        o->exit_code = 0;
        o->output = TAKE_PTR(r->output);
        o->output_len = r->output_len;
        r->output_len = 0;
}
