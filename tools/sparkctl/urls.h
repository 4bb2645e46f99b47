/* Where sparkctl finds the master and the driver: --master/--driver, else
 * $SPARK_MASTER_URL/$SPARK_DRIVER_URL, else cluster.master in cluster.conf
 * and driver.listen in driver.conf (in $SPARK_CONF_DIR or /etc/spark) when
 * readable, else tcp://127.0.0.1:7077 and tcp://127.0.0.1:7091. */
#pragma once

#include <stddef.h>

#define MASTER_URL_ENV "SPARK_MASTER_URL"
#define DRIVER_URL_ENV "SPARK_DRIVER_URL"
#define MASTER_URL_DEFAULT "tcp://127.0.0.1:7077"
#define DRIVER_URL_DEFAULT "tcp://127.0.0.1:7091"

typedef enum DaemonKind {
        DAEMON_MASTER,
        DAEMON_DRIVER,
        DAEMON_WORKER, /* sparkctl logs: the URL comes from the master */
        _DAEMON_KIND_MAX,
} DaemonKind;

/* "master", "driver" */
const char *daemon_kind_to_string(DaemonKind k);

/* A listen address made dialable from this host: the wildcard hosts
 * (0.0.0.0, *, empty) become 127.0.0.1 and [::] becomes [::1]; anything
 * else is copied. */
int url_listen_to_dial(const char *listen, char **ret);

/* The URL to dial for k; flag is the command-line value or NULL.  Returns 0
 * and a malloc()ed URL, or -EINVAL with the reason in err when the URL given
 * by the flag or the environment is not a valid endpoint.  A configuration
 * file with errors is ignored with a warning on stderr. */
int url_resolve(DaemonKind k, const char *flag, char **ret, char *err, size_t err_size);
