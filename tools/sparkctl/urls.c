/* See urls.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"
#include "urls.h"

const char *daemon_kind_to_string(DaemonKind k) {
        return k == DAEMON_MASTER ? "master" : k == DAEMON_DRIVER ? "driver" : k == DAEMON_WORKER ? "worker" : NULL;
}

static const char *startswith(const char *s, const char *prefix) {
        size_t n = strlen(prefix);
        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

int url_listen_to_dial(const char *listen, char **ret) {
        static const struct {
                const char *host; /* as written in the listen address, with its ':' */
                const char *dial;
        } wildcards[] = {
                { "0.0.0.0:", "127.0.0.1:" },
                { "*:", "127.0.0.1:" },
                { ":", "127.0.0.1:" },
                { "[::]:", "[::1]:" },
                { "[0:0:0:0:0:0:0:0]:", "[::1]:" },
        };
        const char *schemes[] = { "tcp://", "tls+tcp://" };
        char *s;

        if (!listen)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(schemes); i++) {
                const char *rest = startswith(listen, schemes[i]);
                if (!rest)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(wildcards); k++) {
                        const char *port = startswith(rest, wildcards[k].host);
                        if (!port)
                                continue;
                        if (asprintf(&s, "%s%s%s", schemes[i], wildcards[k].dial, port) < 0)
                                return -ENOMEM;
                        *ret = s;
                        return 0;
                }
        }
        s = strdup(listen);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* The URL the configuration file names, or NULL (no file, unreadable, or
 * broken: then we warn and fall back to the default). */
static int url_from_config(DaemonKind k, char **ret) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_(config_done) SparkConfig c = {};
        _cleanup_free_ char *path = NULL;
        int r;

        *ret = NULL;
        r = config_default_path(k == DAEMON_MASTER ? "cluster" : "driver", &path);
        if (r < 0)
                return r;
        r = config_load(path, &c, &errors);
        if (r == -EINVAL) {
                if (errors && errors[0])
                        fprintf(stderr, "sparkctl: %s (file ignored)\n", errors[0]);
                else
                        fprintf(stderr, "sparkctl: %s: invalid configuration (file ignored)\n", path);
                return 0;
        }
        if (r < 0)
                return r == -ENOMEM ? r : 0; /* not there or not readable: not ours to complain about */
        if (k == DAEMON_MASTER) {
                *ret = strdup(c.cluster.master);
                return *ret ? 0 : -ENOMEM;
        }
        return url_listen_to_dial(c.driver.listen, ret);
}

int url_resolve(DaemonKind k, const char *flag, char **ret, char *err, size_t err_size) {
        const char *env_name = k == DAEMON_MASTER ? MASTER_URL_ENV : DRIVER_URL_ENV;
        const char *source = NULL, *url = NULL, *why;
        char *s = NULL;
        int r;

        if (flag) {
                url = flag;
                source = k == DAEMON_MASTER ? "--master" : "--driver";
        } else if (!isempty(getenv(env_name))) {
                url = getenv(env_name);
                source = env_name;
        }
        if (url) {
                why = k == DAEMON_MASTER ? config_endpoint_list_check(url) : config_endpoint_check(url);
                if (why) {
                        snprintf(err, err_size, "invalid %s URL '%s' (from %s): %s", daemon_kind_to_string(k), url,
                                 source, why);
                        return -EINVAL;
                }
                s = strdup(url);
        } else {
                r = url_from_config(k, &s);
                if (r < 0)
                        return r;
                if (!s)
                        s = strdup(k == DAEMON_MASTER ? MASTER_URL_DEFAULT : DRIVER_URL_DEFAULT);
        }
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}
