/* SparkPi as function tasks: each task throws darts at the unit square and
 * counts those inside the quarter circle; π ≈ 4 × inside / thrown.
 *
 *   sparkctl submit --function sparkpi.so:sparkpi --count 100 --arg 1000000
 *
 * The argument is the number of darts per task; each task prints
 * "INSIDE THROWN".  examples/sparkpi.sh adds them up. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spark/task.h>

SPARK_TASK_ABI;

int sparkpi(const spark_task_input *in, spark_task_output *out);

/* splitmix64: a small, good generator with no global state */
static uint64_t next_random(uint64_t *state) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

int sparkpi(const spark_task_input *in, spark_task_output *out) {
        char arg[32] = "";
        uint64_t darts, inside = 0, state;
        char *text;

        if (in->len >= sizeof(arg)) {
                snprintf(out->error, sizeof(out->error), "argument too long");
                return 1;
        }
        memcpy(arg, in->data, in->len);
        darts = in->len ? strtoull(arg, NULL, 10) : 1000000;
        if (darts == 0 || darts > UINT64_C(1) << 40) {
                snprintf(out->error, sizeof(out->error), "darts per task must be 1..2^40, not '%s'", arg);
                return 1;
        }
        /* a different stream per task, the same for every attempt */
        state = (uint64_t) in->index * 0x632be59bd9b4e019ULL + 1;
        for (uint64_t i = 0; i < darts; i++) {
                double x = (double) (next_random(&state) >> 11) / 9007199254740992.0;
                double y = (double) (next_random(&state) >> 11) / 9007199254740992.0;
                inside += x * x + y * y <= 1.0;
        }
        if (asprintf(&text, "%" PRIu64 " %" PRIu64 "\n", inside, darts) < 0)
                return 1;
        out->data = text;
        out->len = strlen(text);
        return 0;
}
