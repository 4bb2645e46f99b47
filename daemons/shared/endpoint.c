/* See endpoint.h. */
#include <stdio.h>
#include <stdlib.h>

#include "endpoint.h"
#include "macro.h"

int host_name(char *buf, size_t size) {
        if (gethostname(buf, size) < 0)
                return -errno;
        buf[size - 1] = 0;
        return 0;
}

static const char *after_scheme(const char *url) {
        const char *p = strstr(url, "://");
        return p ? p + 3 : NULL;
}

unsigned endpoint_port(const char *url) {
        const char *rest, *colon;

        if (!url || strncmp(url, "ipc://", 6) == 0)
                return 0;
        rest = after_scheme(url);
        if (!rest)
                return 0;
        colon = strrchr(rest, ':');
        return colon ? (unsigned) strtoul(colon + 1, NULL, 10) : 0;
}

int endpoint_advertise(const char *listen, const char *host, char **ret) {
        char hn[256];
        const char *rest, *colon;
        int r;

        if (!listen || !(rest = after_scheme(listen)))
                return -EINVAL;
        colon = strrchr(rest, ':');
        if (strncmp(listen, "ipc://", 6) == 0 || !colon ||
            !(strncmp(rest, "0.0.0.0:", 8) == 0 || strncmp(rest, "*:", 2) == 0 || strncmp(rest, "[::]:", 5) == 0 ||
              rest == colon)) {
                *ret = strdup(listen);
                return *ret ? 0 : -ENOMEM;
        }
        if (isempty(host)) {
                r = host_name(hn, sizeof(hn));
                if (r < 0)
                        return r;
                host = hn;
        }
        if (asprintf(ret, "%.*s%s%s", (int) (rest - listen), listen, host, colon) < 0)
                return -ENOMEM;
        return 0;
}
