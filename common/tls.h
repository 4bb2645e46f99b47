/* Mutual TLS settings (docs/DESIGN.md §9): the cluster CA and this host's certificate
 * and key, as PEM files.  The configuration keeps them in
 * cluster.tls_ca_file / tls_cert_file / tls_key_file; the socket layer
 * (nng-tls.h) applies them to every tls+tcp:// listener and dialer.
 *
 * A field that is NULL or "" is not set.  Listeners need all three and
 * require a peer certificate signed by the CA; dialers need the CA (to
 * verify the server) and present their certificate when one is set. */
#pragma once

#include <stdbool.h>
#include <string.h>

#include "macro.h"

typedef struct TlsSettings {
        const char *ca_file;   /* the cluster CA's certificate(s) */
        const char *cert_file; /* this host's certificate, signed by the CA */
        const char *key_file;  /* its private key, unencrypted */
} TlsSettings;

/* How sparkctl may be given them.  (Never an executor: it holds no
 * certificate, and gets the CA as a systemd credential.) */
#define TLS_CA_FILE_ENV "SPARK_TLS_CA_FILE"
#define TLS_CERT_FILE_ENV "SPARK_TLS_CERT_FILE"
#define TLS_KEY_FILE_ENV "SPARK_TLS_KEY_FILE"

#define TLS_URL_PREFIX "tls+tcp://"

static inline bool tls_url(const char *url) {
        return url && strncmp(url, TLS_URL_PREFIX, strlen(TLS_URL_PREFIX)) == 0;
}

/* Whether t names a CA: enough to dial.  (NULL-safe.) */
static inline bool tls_settings_can_dial(const TlsSettings *t) {
        return t && !isempty(t->ca_file);
}

/* Whether t names a CA, a certificate and a key: enough to listen. */
static inline bool tls_settings_can_listen(const TlsSettings *t) {
        return tls_settings_can_dial(t) && !isempty(t->cert_file) && !isempty(t->key_file);
}

/* $SPARK_TLS_CA_FILE, $SPARK_TLS_CERT_FILE, $SPARK_TLS_KEY_FILE (NULL when
 * unset); the strings belong to the environment. */
static inline TlsSettings tls_settings_from_env(void) {
        return (TlsSettings) {
                .ca_file = getenv(TLS_CA_FILE_ENV),
                .cert_file = getenv(TLS_CERT_FILE_ENV),
                .key_file = getenv(TLS_KEY_FILE_ENV),
        };
}
