/* Lists of endpoints: cluster.master with several masters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint-list.h"
#include "macro.h"

int endpoint_list_parse(const char *s, EndpointList *ret) {
        EndpointList l = {};
        const char *p, *comma;

        if (!s || !*s)
                return -EINVAL;
        for (p = s;; p = comma + 1) {
                size_t len;

                comma = strchr(p, ',');
                len = comma ? (size_t) (comma - p) : strlen(p);
                if (len == 0 || len >= ENDPOINT_LIST_URL_MAX || l.n >= ENDPOINT_LIST_MAX) {
                        endpoint_list_done(&l);
                        return -EINVAL;
                }
                l.urls[l.n] = strndup(p, len);
                if (!l.urls[l.n]) {
                        endpoint_list_done(&l);
                        return -ENOMEM;
                }
                l.n++;
                if (!comma)
                        break;
        }
        *ret = l;
        return 0;
}

void endpoint_list_done(EndpointList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->urls[i]);
        l->n = 0;
}

int endpoint_list_find(const EndpointList *l, const char *url) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->urls[i], url))
                        return (int) i;
        return -ENOENT;
}

int standby_reply_leader(int code, const char *message, char *buf, size_t size) {
        const char *url;

        if (code != -EREMCHG || !message || strncmp(message, "standby", 7) != 0)
                return -ENOENT;
        if (strncmp(message, STANDBY_LEADER_PREFIX, strlen(STANDBY_LEADER_PREFIX)) != 0)
                return -EREMCHG;
        url = message + strlen(STANDBY_LEADER_PREFIX);
        if (!*url || strlen(url) >= size || strlen(url) >= ENDPOINT_LIST_URL_MAX)
                return -EREMCHG;
        strcpy(buf, url);
        return 0;
}
