/* bench-tool: the small clock-keeping jobs of bench/run.sh, all on
 * CLOCK_MONOTONIC (µs) so that a time taken here compares with any other
 * bench program's.
 *
 *   bench-tool now                 prints the time
 *   bench-tool kill SIGNAL PID     prints the time, then sends SIGNAL (a
 *                                  number) to PID at once
 *   bench-tool tslog               copies standard input to standard output,
 *                                  each line prefixed with the time it was
 *                                  read ("T line"); for daemons' stderr,
 *                                  whose lines carry no time of their own
 *   bench-tool rss PID             prints "VmRSS_kB VmHWM_kB" of PID
 *   bench-tool ctxsw PID [PREFIX]  prints PID's context switches, all its
 *                                  threads (or those named PREFIX...)
 *   bench-tool fsync DIR COUNT     appends a 128-byte record to a new file
 *                                  in DIR and fdatasync()s it, COUNT times;
 *                                  prints "fdatasync_us_p50 N" and p99: what
 *                                  one group commit of a durable driver's
 *                                  journal costs on that file system at the
 *                                  least
 *   bench-tool poll HOST:PORT PATH PERIOD_MS
 *                                  GETs http://HOST:PORT/PATH every
 *                                  PERIOD_MS until SIGTERM or SIGINT, then
 *                                  prints the responses' times (poll_us_p50,
 *                                  _p99, _max), their count, the failures
 *                                  and the last one's size
 *   bench-tool waitlog FILE ERE AFTER TIMEOUT_S
 *                                  waits for a line of FILE (as tslog
 *                                  writes it) stamped AFTER or later that
 *                                  matches ERE, and prints its stamp; exit
 *                                  1 if none came within TIMEOUT_S.  It
 *                                  reads what was appended every 5 ms, with
 *                                  no process started per look: a wait in
 *                                  the shell ran awk and sleep 100 times a
 *                                  second, about a fifth of the 2 cores
 *                                  taken from the start-ups being
 *                                  measured
 *   bench-tool killwait SIGNAL PID FILE ERE TIMEOUT_S
 *                                  kill, then waitlog for a line stamped
 *                                  at the kill's time or later; prints
 *                                  "T_KILL T_LINE" (only T_KILL and exit 1
 *                                  if no line came) */
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <signal.h>

#include "bench-util.h"
#include "http-get.h"
#include "macro.h"

#define POLL_MAX 1000000

static volatile sig_atomic_t poll_stop;

static void on_poll_stop(int sig) {
        (void) sig;
        poll_stop = 1;
}

/* A dashboard that refreshes: one GET every period_ms (not back to back:
 * a slow answer delays the next one, as a browser's timer would). */
static int poll_http(const char *addr, const char *path, long period_ms) {
        _cleanup_free_ uint64_t *v = calloc(POLL_MAX, sizeof(uint64_t));
        const char *colon = strrchr(addr, ':');
        struct sigaction sa = { .sa_handler = on_poll_stop };
        char host[64];
        size_t n = 0, bytes = 0;
        unsigned failed = 0;

        if (!v || !colon || (size_t) (colon - addr) >= sizeof(host) || period_ms < 1 || path[0] != '/')
                return 2;
        memcpy(host, addr, (size_t) (colon - addr));
        host[colon - addr] = '\0';
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        while (!poll_stop) {
                uint64_t t0 = bench_now_usec(), usec, due = t0 + (uint64_t) period_ms * 1000;
                unsigned status;
                size_t b;

                if (bench_http_get(host, atoi(colon + 1), path, 5, &b, &status, &usec) < 0 || status != 200)
                        failed++;
                else if (n < POLL_MAX) {
                        v[n++] = usec;
                        bytes = b;
                }
                while (!poll_stop && bench_now_usec() < due)
                        usleep((useconds_t) MIN(due - bench_now_usec(), (uint64_t) 10000));
        }
        bench_sort_u64(v, n);
        printf("poll_count %zu\npoll_failed %u\npoll_bytes %zu\npoll_us_p50 %" PRIu64 "\npoll_us_p99 %" PRIu64
               "\npoll_us_max %" PRIu64 "\n",
               n, failed, bytes, bench_percentile_u64(v, n, 50), bench_percentile_u64(v, n, 99), n ? v[n - 1] : 0);
        return fflush(stdout) == 0 ? 0 : 1;
}

static int tslog(void) {
        char buf[65536], line[8192];
        size_t used = 0;

        for (;;) {
                ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
                uint64_t t;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                t = bench_now_usec();
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] != '\n') {
                                if (used < sizeof(line) - 1)
                                        line[used++] = buf[i];
                                continue;
                        }
                        line[used] = 0;
                        printf("%" PRIu64 " %s\n", t, line);
                        used = 0;
                }
                fflush(stdout);
        }
        if (used > 0) {
                line[used] = 0;
                printf("%" PRIu64 " %s\n", bench_now_usec(), line);
        }
        return fflush(stdout) == 0 ? 0 : 1;
}

static int rss(const char *pid) {
        char path[64], l[256];
        long rss_kb = -1, hwm_kb = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%s/status", pid);
        f = fopen(path, "re");
        if (!f)
                return 1;
        while (fgets(l, sizeof(l), f)) {
                if (strncmp(l, "VmRSS:", 6) == 0)
                        rss_kb = atol(l + 6);
                else if (strncmp(l, "VmHWM:", 6) == 0)
                        hwm_kb = atol(l + 6);
        }
        fclose(f);
        if (rss_kb < 0)
                return 1;
        printf("%ld %ld\n", rss_kb, hwm_kb);
        return 0;
}

static int fsync_cost(const char *dir, long count) {
        _cleanup_free_ uint64_t *samples = NULL;
        char path[4096], record[128] = { 0 };
        int fd;

        if (count < 1 || count > 100000 || (size_t) snprintf(path, sizeof(path), "%s/fsync-probe", dir) >= sizeof(path))
                return 2;
        samples = calloc((size_t) count, sizeof(*samples));
        if (!samples)
                return 1;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) {
                fprintf(stderr, "bench-tool: %s: %s\n", path, strerror(errno));
                return 1;
        }
        for (long i = 0; i < count; i++) {
                uint64_t t0;

                if (write(fd, record, sizeof(record)) != (ssize_t) sizeof(record))
                        break;
                t0 = bench_now_usec();
                if (fdatasync(fd) < 0)
                        break;
                samples[i] = bench_now_usec() - t0;
        }
        close(fd);
        (void) unlink(path);
        bench_sort_u64(samples, (size_t) count);
        printf("fdatasync_us_p50 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 50));
        printf("fdatasync_us_p99 %" PRIu64 "\n", bench_percentile_u64(samples, (size_t) count, 99));
        return 0;
}

#define WAITLOG_LINE_MAX (1024 * 1024)
#define WAITLOG_PERIOD_NSEC (5 * 1000 * 1000L)

/* Whether line (NUL-terminated, no newline) is stamped after or later
 * and matches re; its stamp in *stamp. */
static bool waitlog_line(const char *line, const regex_t *re, uint64_t after, uint64_t *stamp) {
        char *end;
        unsigned long long t = strtoull(line, &end, 10);

        if (end == line || t < after)
                return false;
        if (regexec(re, line, 0, NULL, 0) != 0)
                return false;
        *stamp = t;
        return true;
}

/* Waits for a line of path stamped after or later that matches re, until
 * deadline; its stamp in *stamp.  0 if one came, 1 if none did.  fd, if
 * not negative, is path already open at the place to read from (it is
 * closed here); else path is read from its start, once it exists. */
static int waitlog_until(int fd, const char *path, const regex_t *re, uint64_t after, uint64_t deadline,
                         uint64_t *stamp) {
        const struct timespec period = { .tv_nsec = WAITLOG_PERIOD_NSEC };
        _cleanup_free_ char *buf = malloc(WAITLOG_LINE_MAX + 1);
        size_t len = 0;
        int rc = 1;

        if (!buf) {
                if (fd >= 0)
                        close(fd);
                return 2;
        }
        for (;;) {
                ssize_t n;

                if (fd < 0)
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                while (fd >= 0 && (n = read(fd, buf + len, WAITLOG_LINE_MAX - len)) > 0) {
                        char *line = buf, *nl;

                        len += (size_t) n;
                        buf[len] = '\0';
                        while ((nl = memchr(line, '\n', len - (size_t) (line - buf)))) {
                                *nl = '\0';
                                if (waitlog_line(line, re, after, stamp)) {
                                        rc = 0;
                                        goto done;
                                }
                                line = nl + 1;
                        }
                        /* the unfinished last line stays; one longer than
                         * the buffer is dropped */
                        len -= (size_t) (line - buf);
                        memmove(buf, line, len);
                        if (len == WAITLOG_LINE_MAX)
                                len = 0;
                }
                if (bench_now_usec() >= deadline)
                        break;
                nanosleep(&period, NULL);
        }
done:
        if (fd >= 0)
                close(fd);
        return rc;
}

static int waitlog(const char *path, const char *ere, const char *after_s, const char *timeout_s) {
        uint64_t stamp;
        regex_t re;
        int rc;

        if (atol(timeout_s) <= 0 || regcomp(&re, ere, REG_EXTENDED | REG_NOSUB) != 0)
                return 2;
        rc = waitlog_until(-1, path, &re, strtoull(after_s, NULL, 10),
                           bench_now_usec() + (uint64_t) atol(timeout_s) * 1000000u, &stamp);
        if (rc == 0)
                printf("%" PRIu64 "\n", stamp);
        regfree(&re);
        return rc;
}

/* kill, then waitlog from the kill's time, in this one process: the
 * shell then forks and execs nothing while the cluster reacts.  On these
 * 2 cores a `bench-tool kill` in a command substitution, then a waitlog
 * started by the shell, took the shell and the tool about 2.5 ms of CPU
 * right after each SIGKILL (traced with sched_switch): the driver, woken
 * by the executor's closed connection, waited for a core behind them.
 * The log is opened at its end before the kill: a line stamped at the
 * kill or later is written after that, and the lines before it, a
 * driver's whole log by then, are not read and matched in the interval
 * measured. */
static int killwait(const char *sig_s, const char *pid_s, const char *path, const char *ere, const char *timeout_s) {
        int sig = atoi(sig_s), fd, rc;
        pid_t pid = (pid_t) atol(pid_s);
        uint64_t t, stamp;
        regex_t re;

        if (sig <= 0 || pid <= 1 || atol(timeout_s) <= 0 || regcomp(&re, ere, REG_EXTENDED | REG_NOSUB) != 0)
                return 2;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || lseek(fd, 0, SEEK_END) < 0) {
                fprintf(stderr, "bench-tool: %s: %s\n", path, strerror(errno));
                if (fd >= 0)
                        close(fd);
                regfree(&re);
                return 2;
        }
        t = bench_now_usec();
        if (kill(pid, sig) < 0) {
                fprintf(stderr, "bench-tool: kill %d %d: %s\n", sig, (int) pid, strerror(errno));
                close(fd);
                regfree(&re);
                return 2;
        }
        rc = waitlog_until(fd, path, &re, t, t + (uint64_t) atol(timeout_s) * 1000000u, &stamp);
        if (rc == 0)
                printf("%" PRIu64 " %" PRIu64 "\n", t, stamp);
        else
                printf("%" PRIu64 "\n", t);
        regfree(&re);
        return rc;
}

int main(int argc, char **argv) {
        if (argc == 2 && streq(argv[1], "now")) {
                printf("%" PRIu64 "\n", bench_now_usec());
                return 0;
        }
        if (argc == 4 && streq(argv[1], "kill")) {
                int sig = atoi(argv[2]);
                pid_t pid = (pid_t) atol(argv[3]);
                uint64_t t;

                if (sig <= 0 || pid <= 1)
                        return 2;
                t = bench_now_usec();
                if (kill(pid, sig) < 0) {
                        fprintf(stderr, "bench-tool: kill %d %d: %s\n", sig, (int) pid, strerror(errno));
                        return 1;
                }
                printf("%" PRIu64 "\n", t);
                return 0;
        }
        if (argc == 2 && streq(argv[1], "tslog"))
                return tslog();
        if (argc == 3 && streq(argv[1], "rss"))
                return rss(argv[2]);
        if ((argc == 3 || argc == 4) && streq(argv[1], "ctxsw") && atol(argv[2]) > 0) {
                printf("%" PRIu64 "\n", bench_ctxsw_of((pid_t) atol(argv[2]), argc == 4 ? argv[3] : NULL));
                return 0;
        }
        if (argc == 4 && streq(argv[1], "fsync"))
                return fsync_cost(argv[2], atol(argv[3]));
        if (argc == 5 && streq(argv[1], "poll"))
                return poll_http(argv[2], argv[3], atol(argv[4]));
        if (argc == 6 && streq(argv[1], "waitlog"))
                return waitlog(argv[2], argv[3], argv[4], argv[5]);
        if (argc == 7 && streq(argv[1], "killwait"))
                return killwait(argv[2], argv[3], argv[4], argv[5], argv[6]);
        fprintf(stderr, "usage: bench-tool now | kill SIGNAL PID | tslog | rss PID | ctxsw PID [PREFIX] | "
                        "fsync DIR COUNT | poll HOST:PORT PATH PERIOD_MS | waitlog FILE ERE AFTER TIMEOUT_S | "
                        "killwait SIGNAL PID FILE ERE TIMEOUT_S\n");
        return 2;
}
