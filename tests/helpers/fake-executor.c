/* fake-executor: a stand-in for spark-executor in tests of the worker's
 * systemd side.  It takes (and ignores, beyond printing them) the real
 * executor's arguments, prints its arguments, working directory and SPARK_*
 * environment and the names and sizes of its credentials
 * ($CREDENTIALS_DIRECTORY) to stdout (the journal, under systemd), then does what
 * SPARK_FAKE_MODE says:
 *
 *   exit:N         exit with status N (default mode: exit:0)
 *   sleep[:SEC]    sleep SEC seconds (default: until killed), then exit 0
 *   kill-self:SIG  raise signal SIG (a number or a name: KILL, SEGV, …)
 *   alloc:MB       allocate and touch MB MiB, one MiB at a time, then sleep
 *                  (until the memory limit kills it)
 *   print:TEXT     print TEXT and exit 0
 *
 * --mode MODE on the command line overrides the environment. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int signal_from_string(const char *s) {
        char *end;
        long n;

        if (strncmp(s, "SIG", 3) == 0)
                s += 3;
        n = strtol(s, &end, 10);
        if (*s && !*end)
                return n > 0 && n < NSIG ? (int) n : -EINVAL;
        for (int sig = 1; sig < SIGRTMIN; sig++) {
                const char *name = sigabbrev_np(sig);

                if (name && strcmp(name, s) == 0)
                        return sig;
        }
        return -EINVAL;
}

static void sleep_seconds(double sec) {
        struct timespec ts = { .tv_sec = (time_t) sec, .tv_nsec = (long) ((sec - (double) (time_t) sec) * 1e9) };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* "credential NAME SIZE": what systemd gave us (LoadCredential=), by size,
 * never the contents. */
static void print_credentials(void) {
        const char *dir = getenv("CREDENTIALS_DIRECTORY");
        struct dirent *de;
        DIR *d;

        if (!dir || !(d = opendir(dir)))
                return;
        while ((de = readdir(d))) {
                char path[4096];
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (stat(path, &st) == 0)
                        printf("fake-executor: credential %s %lld\n", de->d_name, (long long) st.st_size);
        }
        closedir(d);
}

int main(int argc, char *argv[]) {
        const char *mode = getenv("SPARK_FAKE_MODE");
        char cwd[4096];

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
                        mode = argv[++i];
        if (!mode || !*mode)
                mode = "exit:0";

        printf("fake-executor: pid %d mode %s\n", (int) getpid(), mode);
        for (int i = 0; i < argc; i++)
                printf("fake-executor: argv[%d]=%s\n", i, argv[i]);
        if (getcwd(cwd, sizeof(cwd)))
                printf("fake-executor: cwd=%s\n", cwd);
        for (char **e = environ; *e; e++)
                if (strncmp(*e, "SPARK_", 6) == 0)
                        printf("fake-executor: env %s\n", *e);
        print_credentials();
        fflush(stdout);

        if (strncmp(mode, "exit:", 5) == 0)
                return atoi(mode + 5);

        if (strcmp(mode, "sleep") == 0) {
                for (;;)
                        pause();
        }
        if (strncmp(mode, "sleep:", 6) == 0) {
                sleep_seconds(atof(mode + 6));
                return 0;
        }

        if (strncmp(mode, "kill-self:", 10) == 0) {
                int sig = signal_from_string(mode + 10);

                if (sig < 0) {
                        fprintf(stderr, "fake-executor: bad signal %s\n", mode + 10);
                        return 2;
                }
                signal(sig, SIG_DFL);
                raise(sig);
                fprintf(stderr, "fake-executor: survived signal %d\n", sig);
                return 2;
        }

        if (strncmp(mode, "alloc:", 6) == 0) {
                long mb = atol(mode + 6);

                for (long i = 0; i < mb; i++) {
                        char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                        if (p == MAP_FAILED) {
                                fprintf(stderr, "fake-executor: mmap failed after %ld MiB\n", i);
                                return 3;
                        }
                        /* volatile: the stores must happen, page by page */
                        for (volatile char *q = p; q < p + (1 << 20); q += 4096)
                                *q = 0x5a;
                }
                printf("fake-executor: allocated %ld MiB and lives\n", mb);
                fflush(stdout);
                for (;;)
                        pause();
        }

        if (strncmp(mode, "print:", 6) == 0) {
                printf("%s\n", mode + 6);
                return 0;
        }

        fprintf(stderr, "fake-executor: unknown mode %s\n", mode);
        return 2;
}
