/* See tls-settings.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"
#include "tls-settings.h"

static int dup_or_null(const char *s, char **ret) {
        *ret = NULL;
        if (isempty(s))
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int take(SparkctlTls *t, const char *ca, const char *cert, const char *key, const char *source) {
        if (dup_or_null(ca, &t->ca_file) < 0 || dup_or_null(cert, &t->cert_file) < 0 ||
            dup_or_null(key, &t->key_file) < 0 || dup_or_null(source, &t->source) < 0)
                return -ENOMEM;
        t->settings = (TlsSettings) { t->ca_file, t->cert_file, t->key_file };
        return 0;
}

/* cluster.tls_* of cluster.conf; nothing if it cannot be loaded (then
 * url_resolve() has said why already, or there is no such file). */
static int from_config(SparkctlTls *t) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_(config_done) SparkConfig c = {};
        _cleanup_free_ char *path = NULL;
        int r;

        r = config_default_path("cluster", &path);
        if (r < 0)
                return r;
        r = config_load(path, &c, &errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        return take(t, c.cluster.tls.ca_file, c.cluster.tls.cert_file, c.cluster.tls.key_file, path);
}

int sparkctl_tls_resolve(const char *ca, const char *cert, const char *key, SparkctlTls *ret) {
        TlsSettings env = tls_settings_from_env();
        int r;

        *ret = (SparkctlTls) {};
        if (ca || cert || key)
                r = take(ret, ca, cert, key, "--tls-ca/--tls-cert/--tls-key");
        else if (!isempty(env.ca_file) || !isempty(env.cert_file) || !isempty(env.key_file))
                r = take(ret, env.ca_file, env.cert_file, env.key_file, "$" TLS_CA_FILE_ENV "/...");
        else
                r = from_config(ret);
        if (r < 0)
                sparkctl_tls_done(ret);
        return r;
}

void sparkctl_tls_done(SparkctlTls *t) {
        if (!t)
                return;
        free(t->ca_file);
        free(t->cert_file);
        free(t->key_file);
        free(t->source);
        *t = (SparkctlTls) {};
}
