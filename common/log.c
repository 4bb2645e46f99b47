/* See log.h.  The only process-wide state in the project: where logs go. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

/* log_write_journal() sends its own CODE_FILE, CODE_LINE and CODE_FUNC,
 * the caller's: sd_journal_sendv()'s would be this file's */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"

static const char *log_identifier = "spark";
static int log_max_level = LOG_INFO;
static bool log_journal = false;

/* systemd sets JOURNAL_STREAM=dev:ino when stderr is connected to the
 * journal; only then is a direct journal write the same destination. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_setup(const char *identifier, LogTarget target) {
        const char *lvl;

        if (identifier)
                log_identifier = identifier;
        log_journal = target == LOG_TARGET_JOURNAL || (target == LOG_TARGET_AUTO && stderr_is_journal());

        lvl = getenv("SPARK_LOG_LEVEL");
        if (lvl && log_level_from_string(lvl) >= 0)
                log_max_level = log_level_from_string(lvl);
}

void log_set_max_level(int level) {
        log_max_level = level;
}

int log_get_max_level(void) {
        return log_max_level;
}

bool log_to_journal(void) {
        return log_journal;
}

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
        [LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

int log_level_from_string(const char *s) {
        for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
                if (level_names[i] && strcmp(level_names[i], s) == 0)
                        return (int) i;
        return -EINVAL;
}

static void log_write_journal(int level, const LogFields *f, const char *file, int line,
                              const char *func, const char *message) {
        char buf[12][320];
        struct iovec iov[13];
        size_t n = 0;
        char *msg = NULL;

#define ADD(i, ...)                                                                    \
        do {                                                                           \
                int _l = snprintf(buf[i], sizeof(buf[i]), __VA_ARGS__);                \
                iov[n++] = (struct iovec) { buf[i], (size_t) MIN(_l, (int) sizeof(buf[i]) - 1) }; \
        } while (0)

        if (asprintf(&msg, "MESSAGE=%s", message) < 0)
                return;
        iov[n++] = (struct iovec) { msg, strlen(msg) };
        ADD(0, "PRIORITY=%d", level);
        ADD(1, "SYSLOG_IDENTIFIER=%s", log_identifier);
        ADD(2, "CODE_FILE=%s", file);
        ADD(3, "CODE_LINE=%d", line);
        ADD(4, "CODE_FUNC=%s", func);
        if (f) {
                if (f->message_id)
                        ADD(5, "MESSAGE_ID=%s", f->message_id);
                if (f->app_id)
                        ADD(6, "SPARK_APP_ID=%s", f->app_id);
                if (f->executor_id > 0)
                        ADD(7, "SPARK_EXECUTOR_ID=%d", f->executor_id);
                if (f->worker_id)
                        ADD(8, "SPARK_WORKER_ID=%s", f->worker_id);
                if (f->job_id)
                        ADD(9, "SPARK_JOB_ID=%s", f->job_id);
                if (f->unit)
                        ADD(10, "UNIT=%s", f->unit);
                if (f->peer)
                        ADD(11, "SPARK_PEER=%s", f->peer);
        }
#undef ADD
        sd_journal_sendv(iov, (int) n);
        free(msg);
}

static void log_write_stderr(int level, const LogFields *f, const char *message) {
        char ctx[600] = "";
        size_t o = 0;

        if (f) {
                /* what tests match on, as journalctl MESSAGE_ID= does */
                if (f->message_id)
                        o += snprintf(ctx + o, sizeof(ctx) - o, " id=%s", f->message_id);
                if (f->app_id && o < sizeof(ctx))
                        o += snprintf(ctx + o, sizeof(ctx) - o, " app=%s", f->app_id);
                if (f->executor_id > 0 && o < sizeof(ctx))
                        o += snprintf(ctx + o, sizeof(ctx) - o, " executor=%d", f->executor_id);
                if (f->worker_id && o < sizeof(ctx))
                        o += snprintf(ctx + o, sizeof(ctx) - o, " worker=%s", f->worker_id);
                if (f->job_id && o < sizeof(ctx))
                        o += snprintf(ctx + o, sizeof(ctx) - o, " job=%s", f->job_id);
                if (f->peer && o < sizeof(ctx))
                        o += snprintf(ctx + o, sizeof(ctx) - o, " peer=%s", f->peer);
        }
        fprintf(stderr, "%s[%d]: %s: %s%s%s%s\n", log_identifier, (int) getpid(),
                level_names[level & 7], message, o ? " [" : "", o ? ctx + 1 : "", o ? "]" : "");
}

int log_internal(int level, int error, const LogFields *fields, const char *file, int line,
                 const char *func, const char *format, ...) {
        char message[2048];
        va_list ap;
        int saved = errno;

        if (error < 0)
                error = -error;
        if (level > log_max_level)
                return -error;

        errno = error;  /* so that %m formats the error we were given */
        va_start(ap, format);
        vsnprintf(message, sizeof(message), format, ap);
        va_end(ap);

        if (log_journal)
                log_write_journal(level, fields, file, line, func, message);
        else
                log_write_stderr(level, fields, message);

        errno = saved;
        return -error;
}
