/* Monotonic time for the fault-injection suite, on the clock the daemons
 * use for their timeouts (CLOCK_MONOTONIC, µs):
 *
 *   fault-stamp now     prints the current time
 *   fault-stamp         copies stdin to stdout, each line prefixed with the
 *                       time it was read and a space, flushed per line
 *
 * The daemons log to stderr without timestamps; the suite pipes their logs
 * through this, so a detection is timed from the log line itself. */
#include <stdio.h>
#include <string.h>
#include <time.h>

static long long now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv) {
        char line[8192];
        int at_start = 1;

        if (argc == 2 && strcmp(argv[1], "now") == 0) {
                printf("%lld\n", now_usec());
                return 0;
        }
        if (argc != 1) {
                fprintf(stderr, "usage: fault-stamp [now]\n");
                return 2;
        }
        /* a line longer than the buffer comes in pieces: stamp only the first */
        while (fgets(line, sizeof(line), stdin)) {
                if (at_start)
                        printf("%lld ", now_usec());
                fputs(line, stdout);
                at_start = line[strlen(line) - 1] == '\n';
                if (at_start)
                        fflush(stdout);
        }
        fflush(stdout);
        return 0;
}
