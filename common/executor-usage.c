/* See executor-usage.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "executor-usage.h"
#include "macro.h"

static uint64_t timeval_ns(struct timeval tv) {
        return (uint64_t) tv.tv_sec * UINT64_C(1000000000) + (uint64_t) tv.tv_usec * 1000;
}

int executor_write_usage(const char *dir) {
        struct rusage self, children;
        char tmp[PATH_MAX], path[PATH_MAX];
        uint64_t cpu_ns, peak_bytes;
        FILE *f;

        if (getrusage(RUSAGE_SELF, &self) < 0 || getrusage(RUSAGE_CHILDREN, &children) < 0)
                return -errno;
        /* the executor's threads, and the command tasks it waited for */
        cpu_ns = timeval_ns(self.ru_utime) + timeval_ns(self.ru_stime) + timeval_ns(children.ru_utime) +
                 timeval_ns(children.ru_stime);
        /* ru_maxrss is in KiB: the larger of ours and our largest child's */
        peak_bytes = (uint64_t) MAX(self.ru_maxrss, children.ru_maxrss) * 1024;

        if (snprintf(tmp, sizeof(tmp), "%s/" EXECUTOR_USAGE_FILE ".tmp", dir) >= (int) sizeof(tmp) ||
            snprintf(path, sizeof(path), "%s/" EXECUTOR_USAGE_FILE, dir) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        f = fopen(tmp, "we");
        if (!f)
                return -errno;
        fprintf(f, EXECUTOR_USAGE_MAGIC " %" PRIu64 " %" PRIu64 "\n", cpu_ns, peak_bytes);
        if (fclose(f) != 0 || rename(tmp, path) < 0) {
                int r = -errno;
                (void) unlink(tmp);
                return r;
        }
        return 0;
}

static int parse_u64(const char *s, char **end, uint64_t *ret) {
        if (*s < '0' || *s > '9')
                return -EBADMSG;
        errno = 0;
        *ret = strtoull(s, end, 10);
        return errno == 0 ? 0 : -EBADMSG;
}

int executor_usage_parse(const char *text, uint64_t *ret_cpu_ns, uint64_t *ret_peak_bytes) {
        const char *p = text;
        char *end;
        uint64_t cpu, peak;

        if (strncmp(p, EXECUTOR_USAGE_MAGIC " ", strlen(EXECUTOR_USAGE_MAGIC) + 1) != 0)
                return -EBADMSG;
        p += strlen(EXECUTOR_USAGE_MAGIC) + 1;
        if (parse_u64(p, &end, &cpu) < 0 || *end != ' ')
                return -EBADMSG;
        if (parse_u64(end + 1, &end, &peak) < 0 || !streq(end, "\n"))
                return -EBADMSG;
        *ret_cpu_ns = cpu;
        *ret_peak_bytes = peak;
        return 0;
}
