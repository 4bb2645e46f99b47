/* ExecutorLogRequest (sparkctl logs): the lines this host's journal holds
 * of an application's executor units, read with sd-journal, oldest first,
 * a bounded page per request.  An executor's lines are those logged under
 * SYSLOG_IDENTIFIER=spark-executor (the unit's) that belong to the
 * application: by SPARK_APP_ID (the system manager adds it to every line of
 * the unit, LogExtraFields=; the executor's own log lines carry it too) or
 * by the unit's name (a user manager adds no fields). */
#include <inttypes.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "worker.h"

#define LOG_PAGE_LINES_MAX 1000
#define LOG_MESSAGE_MAX 4096
#define LOG_CURSOR_MAX 1024

typedef struct LogPage {
        Spark__ExecutorLogLine *lines;
        Spark__ExecutorLogLine **ptrs;
        char (*messages)[LOG_MESSAGE_MAX];
        size_t n;
} LogPage;

static void log_page_done(LogPage *p) {
        free(p->lines);
        free(p->ptrs);
        free(p->messages);
}

/* The value of field in the current entry, cut to size and NUL-terminated. */
static int entry_field(sd_journal *j, const char *field, char *buf, size_t size) {
        size_t prefix = strlen(field) + 1, len;
        const void *data;
        int r;

        r = sd_journal_get_data(j, field, &data, &len);
        if (r < 0)
                return r;
        if (len < prefix)
                return -EBADMSG;
        len = MIN(len - prefix, size - 1);
        memcpy(buf, (const char *) data + prefix, len);
        buf[len] = '\0';
        return 0;
}

static bool parse_executor_id(const char *s, int *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || v < 1 || v > INT32_MAX)
                return false;
        *ret = (int) v;
        return true;
}

/* Whether the entry is a line of app_id's executor; its executor id. */
static bool entry_of_app(sd_journal *j, const char *app_id, int *ret_executor_id) {
        static const char *const unit_fields[] = { "_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT" };
        char value[256], app[APP_ID_MAX];
        int id;

        if (entry_field(j, "SPARK_APP_ID", value, sizeof(value)) >= 0) {
                if (!streq(value, app_id))
                        return false;
                if (entry_field(j, "SPARK_EXECUTOR_ID", value, sizeof(value)) >= 0 &&
                    parse_executor_id(value, ret_executor_id))
                        return true;
        }
        for (size_t i = 0; i < ELEMENTSOF(unit_fields); i++)
                if (entry_field(j, unit_fields[i], value, sizeof(value)) >= 0 &&
                    executor_unit_parse(value, app, sizeof(app), &id) >= 0 && streq(app, app_id)) {
                        *ret_executor_id = id;
                        return true;
                }
        return false;
}

/* Control characters would rewrite the reader's terminal: '?' instead. */
static void message_clean(char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 && *s != '\t')
                        *s = '?';
}

static int read_page(WorkerManager *w, const Spark__ExecutorLogRequest *lr, size_t max, LogPage *p,
                     char *cursor, size_t cursor_size, bool *ret_more) {
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        bool have_cursor = !isempty(lr->cursor);
        int r;

        (void) w;
        *ret_more = false;
        r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
        if (r < 0)
                return r;
        r = sd_journal_add_match(j, "SYSLOG_IDENTIFIER=spark-executor", 0);
        if (r < 0)
                return r;
        if (have_cursor)
                r = sd_journal_seek_cursor(j, lr->cursor);
        else if (lr->since_usec > 0)
                r = sd_journal_seek_realtime_usec(j, (uint64_t) lr->since_usec);
        else
                r = sd_journal_seek_head(j);
        if (r < 0)
                return r;
        if (have_cursor) {
                /* the cursor's entry was sent already */
                r = sd_journal_next(j);
                if (r > 0 && sd_journal_test_cursor(j, lr->cursor) <= 0)
                        (void) sd_journal_previous(j);
        }

        for (;;) {
                Spark__ExecutorLogLine *line;
                uint64_t t;
                char prio[8];
                int id;
                _cleanup_free_ char *c = NULL;

                r = sd_journal_next(j);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (p->n >= max) {
                        *ret_more = true;
                        break;
                }
                if (sd_journal_get_cursor(j, &c) >= 0 && strlen(c) < cursor_size)
                        strcpy(cursor, c);
                if (sd_journal_get_realtime_usec(j, &t) < 0 ||
                    (lr->since_usec > 0 && t < (uint64_t) lr->since_usec))
                        continue;
                if (!entry_of_app(j, lr->app_id, &id) || (lr->executor_id > 0 && id != lr->executor_id))
                        continue;
                line = &p->lines[p->n];
                spark__executor_log_line__init(line);
                line->realtime_usec = (int64_t) t;
                line->executor_id = id;
                line->priority = entry_field(j, "PRIORITY", prio, sizeof(prio)) >= 0 ? atoi(prio) : LOG_INFO;
                if (entry_field(j, "MESSAGE", p->messages[p->n], LOG_MESSAGE_MAX) < 0)
                        p->messages[p->n][0] = '\0';
                message_clean(p->messages[p->n]);
                line->message = p->messages[p->n];
                p->ptrs[p->n++] = line;
        }
        return 0;
}

int worker_handle_logs(WorkerManager *w, RpcRequest *req, const Spark__ExecutorLogRequest *lr) {
        Spark__ExecutorLogReply reply = SPARK__EXECUTOR_LOG_REPLY__INIT;
        _cleanup_(log_page_done) LogPage p = {};
        Envelope env = ENVELOPE_INIT;
        char cursor[LOG_CURSOR_MAX] = "";
        size_t max;
        bool more;
        int r;

        if (!app_id_is_valid(lr->app_id) || lr->executor_id < 0 || lr->since_usec < 0 ||
            strlen(strempty(lr->cursor)) >= LOG_CURSOR_MAX)
                return rpc_request_reply_error(req, -EINVAL, "invalid application id, executor id, time or cursor");
        max = lr->max_lines > 0 ? MIN((size_t) lr->max_lines, (size_t) LOG_PAGE_LINES_MAX) : LOG_PAGE_LINES_MAX;
        p.lines = calloc(max, sizeof(*p.lines));
        p.ptrs = calloc(max, sizeof(*p.ptrs));
        p.messages = calloc(max, sizeof(*p.messages));
        if (!p.lines || !p.ptrs || !p.messages)
                return rpc_request_reply_error(req, -ENOMEM, "out of memory");

        r = read_page(w, lr, max, &p, cursor, sizeof(cursor), &more);
        if (r < 0) {
                log_struct_errno(LOG_WARNING, r, LOG_FIELDS(.app_id = lr->app_id, .worker_id = w->id),
                                 "Failed to read the journal for the executors of %s: %m", lr->app_id);
                return rpc_request_reply_error(req, r, "cannot read the journal of %s: %s", w->host,
                                               strerror(-r));
        }
        reply.worker_id = w->id;
        reply.host = w->host;
        reply.lines = p.ptrs;
        reply.n_lines = p.n;
        /* no new entry: the caller's cursor stays where it was */
        reply.cursor = cursor[0] ? cursor : (char *) strempty(lr->cursor);
        reply.more = more;
        ENVELOPE_SET(&env, EXECUTOR_LOG_REPLY, executor_log_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}
