/* See ids.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "ids.h"

static bool all_digits(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!isdigit((unsigned char) s[i]))
                        return false;
        return true;
}

static int format_stamp(char *buf, size_t size, time_t t) {
        struct tm tm;

        if (!gmtime_r(&t, &tm))
                return -EINVAL;
        if (strftime(buf, size, "%Y%m%d%H%M%S", &tm) != 14)
                return -ENOBUFS;
        return 0;
}

int app_id_format(char *buf, size_t size, time_t t, unsigned counter) {
        char stamp[16];
        int r, n;

        r = format_stamp(stamp, sizeof(stamp), t);
        if (r < 0)
                return r;
        n = snprintf(buf, size, "app-%s-%04u", stamp, counter);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

bool app_id_is_valid(const char *id) {
        size_t n;

        /* app-YYYYMMDDHHMMSS-NNNN, the counter may grow past four digits */
        if (!id || strncmp(id, "app-", 4) != 0)
                return false;
        n = strlen(id);
        if (n < 4 + 14 + 1 + 4 || n > APP_ID_MAX)
                return false;
        if (!all_digits(id + 4, 14) || id[18] != '-')
                return false;
        return all_digits(id + 19, n - 19);
}

static bool host_char_ok(char c) {
        return isalnum((unsigned char) c) || c == '.' || c == '-' || c == '_';
}

int worker_id_format(char *buf, size_t size, time_t t, const char *host, unsigned port) {
        char stamp[16];
        int r, n;

        if (isempty(host))
                return -EINVAL;
        for (const char *p = host; *p; p++)
                if (!host_char_ok(*p))
                        return -EINVAL;
        r = format_stamp(stamp, sizeof(stamp), t);
        if (r < 0)
                return r;
        n = snprintf(buf, size, "worker-%s-%s-%u", stamp, host, port);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

bool worker_id_is_valid(const char *id) {
        size_t n;

        if (!id || strncmp(id, "worker-", 7) != 0)
                return false;
        n = strlen(id);
        if (n <= 7 || n >= WORKER_ID_MAX || strstr(id, ".."))
                return false;
        for (const char *p = id; *p; p++)
                if (!host_char_ok(*p))
                        return false;
        return true;
}

int job_id_format(char *buf, size_t size, unsigned counter) {
        int n = snprintf(buf, size, "job-%04u", counter);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

#define UNIT_PREFIX "spark-executor-"
#define UNIT_SUFFIX ".service"

int executor_unit_name(char *buf, size_t size, const char *app_id, int executor_id) {
        int n;

        if (!app_id_is_valid(app_id) || executor_id < 0)
                return -EINVAL;
        n = snprintf(buf, size, UNIT_PREFIX "%s-%d" UNIT_SUFFIX, app_id, executor_id);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

int executor_unit_parse(const char *unit, char *app_buf, size_t app_size, int *ret_executor_id) {
        const char *app, *dash, *suffix;
        size_t app_len, len;
        long id = 0;

        if (!unit || strncmp(unit, UNIT_PREFIX, strlen(UNIT_PREFIX)) != 0)
                return -EINVAL;
        len = strlen(unit);
        if (len <= strlen(UNIT_PREFIX) + strlen(UNIT_SUFFIX))
                return -EINVAL;
        suffix = unit + len - strlen(UNIT_SUFFIX);
        if (strcmp(suffix, UNIT_SUFFIX) != 0)
                return -EINVAL;

        app = unit + strlen(UNIT_PREFIX);
        dash = suffix;
        while (dash > app && dash[-1] != '-')
                dash--;
        if (dash == app || dash == suffix || !all_digits(dash, (size_t) (suffix - dash)) ||
            suffix - dash > 9)
                return -EINVAL;
        for (const char *p = dash; p < suffix; p++)
                id = id * 10 + (*p - '0');

        app_len = (size_t) (dash - 1 - app);
        if (app_len + 1 > app_size)
                return -ENOBUFS;
        memcpy(app_buf, app, app_len);
        app_buf[app_len] = 0;
        if (!app_id_is_valid(app_buf))
                return -EINVAL;

        *ret_executor_id = (int) id;
        return 0;
}

int unit_name_escape(const char *s, char *buf, size_t size) {
        size_t o = 0;

        for (const char *p = s; *p; p++) {
                unsigned char c = (unsigned char) *p;
                char tmp[5];
                size_t l;

                if (c == '/') {
                        tmp[0] = '-';
                        l = 1;
                } else if (isalnum(c) || c == ':' || c == '_' || (c == '.' && p != s)) {
                        tmp[0] = (char) c;
                        l = 1;
                } else {
                        snprintf(tmp, sizeof(tmp), "\\x%02x", c);
                        l = 4;
                }
                if (o + l + 1 > size)
                        return -ENOBUFS;
                memcpy(buf + o, tmp, l);
                o += l;
        }
        if (size == 0)
                return -ENOBUFS;
        buf[o] = 0;
        return 0;
}
