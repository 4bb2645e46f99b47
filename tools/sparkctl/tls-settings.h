/* The TLS settings sparkctl dials a tls+tcp:// URL with: --tls-ca,
 * --tls-cert and --tls-key if any of them is given, else
 * $SPARK_TLS_CA_FILE, $SPARK_TLS_CERT_FILE and $SPARK_TLS_KEY_FILE if any
 * is set, else cluster.tls_* in cluster.conf (in $SPARK_CONF_DIR or
 * /etc/spark) when it is readable.  A CA alone is allowed: the daemon then
 * refuses us, which is how one tests that it does. */
#pragma once

#include <stddef.h>

#include "tls.h"

typedef struct SparkctlTls {
        TlsSettings settings; /* points into the fields below */
        char *ca_file, *cert_file, *key_file;
        char *source; /* "--tls-ca/--tls-cert/--tls-key", "$SPARK_TLS_*" or the file */
} SparkctlTls;

/* ca, cert, key: the command line's values or NULL.  Returns 0 (the
 * settings may be empty: no source named a CA), or -ENOMEM. */
int sparkctl_tls_resolve(const char *ca, const char *cert, const char *key, SparkctlTls *ret);
void sparkctl_tls_done(SparkctlTls *t);
