/* Function tasks for the fault-injection suite (tests/faults/).
 *
 * Each input line is "N" or "N hog": the result is N*N as text, after
 * SPARK_FAULT_TASK_MS milliseconds (default 5) so that a job lasts long
 * enough to break things under it.  A "hog" line, on its first attempt only,
 * allocates and touches memory until the executor's MemoryMax kills it; it
 * first writes the CLOCK_MONOTONIC time (µs) to $SPARK_FAULT_STAMP_DIR/hog-N,
 * so the suite can time the detection of the executor's death.  Retries of
 * a hog line are ordinary tasks. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spark/task.h>

SPARK_TASK_ABI;

#define EXPORT __attribute__((visibility("default")))

/* Far beyond any executor_memory_mb the suite uses: reaching it means the
 * limit was not enforced, which the task reports as its failure. */
#define HOG_LIMIT_MB 4096
#define HOG_CHUNK_MB 16

static long input_number(const spark_task_input *in, int *hog) {
        char buf[64];

        snprintf(buf, sizeof(buf), "%.*s", (int) (in->len < sizeof(buf) - 1 ? in->len : sizeof(buf) - 1),
                 (const char *) in->data);
        *hog = strstr(buf, "hog") != NULL;
        return atol(buf);
}

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
}

static long task_ms(void) {
        const char *e = getenv("SPARK_FAULT_TASK_MS");
        long ms = e ? atol(e) : 5;

        return ms >= 0 && ms <= 10000 ? ms : 5;
}

static void write_stamp(long n) {
        const char *dir = getenv("SPARK_FAULT_STAMP_DIR");
        struct timespec ts;
        char path[4096], buf[64];
        int fd, len;

        if (!dir || !*dir)
                return;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(path, sizeof(path), "%s/hog-%ld", dir, n);
        len = snprintf(buf, sizeof(buf), "%lld\n", (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return;
        if (write(fd, buf, (size_t) len) != len) {
                /* the suite then finds no stamp and says so */
        }
        close(fd);
}

/* Allocates and touches memory until killed; returns only if it got past
 * HOG_LIMIT_MB. */
static void hog(long n) {
        char **chunks = calloc(HOG_LIMIT_MB / HOG_CHUNK_MB, sizeof(char *));

        write_stamp(n);
        for (int i = 0; chunks && i < HOG_LIMIT_MB / HOG_CHUNK_MB; i++) {
                chunks[i] = malloc((size_t) HOG_CHUNK_MB << 20);
                if (!chunks[i])
                        break;
                memset(chunks[i], 0x5a, (size_t) HOG_CHUNK_MB << 20);
        }
        /* not killed: give it all back and fail this attempt */
        for (int i = 0; chunks && i < HOG_LIMIT_MB / HOG_CHUNK_MB; i++)
                free(chunks[i]);
        free(chunks);
}

/* N*N after SPARK_FAULT_TASK_MS; "N hog" first tries to exceed MemoryMax. */
EXPORT int fault_square(const spark_task_input *in, spark_task_output *out) {
        int is_hog;
        long n = input_number(in, &is_hog);
        char *s;

        if (is_hog && in->attempt == 1) {
                hog(n);
                snprintf(out->error, sizeof(out->error), "allocated %d MiB without being killed: MemoryMax not enforced",
                         HOG_LIMIT_MB);
                return 1;
        }
        sleep_ms(task_ms());
        s = malloc(32);
        if (!s) {
                snprintf(out->error, sizeof(out->error), "out of memory");
                return 1;
        }
        out->len = (size_t) snprintf(s, 32, "%lld\n", (long long) n * n);
        out->data = s;
        return 0;
}
