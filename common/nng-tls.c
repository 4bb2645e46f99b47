/* See nng-tls.h.  The PEM files are read here rather than by nng's
 * *_file() helpers: nng_tls_config_cert_key_file() wants the certificate
 * and the key in one file, and reading them ourselves tells a missing or
 * unreadable file (errno) from one the TLS engine rejects (-EBADMSG). */

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "fileio.h"
#include "nng-tls-engine.h"
#include "nng-tls.h"
#include "nng-util.h"

typedef enum TlsFile {
        TLS_FILE_CA,
        TLS_FILE_CERT,
        TLS_FILE_KEY,
        _TLS_FILE_MAX,
        _TLS_FILE_INVALID = -EINVAL,
} TlsFile;

static const char *const tls_file_table[_TLS_FILE_MAX] = {
        [TLS_FILE_CA] = "CA certificate",
        [TLS_FILE_CERT] = "certificate",
        [TLS_FILE_KEY] = "private key",
};

static void tls_config_freep(nng_tls_config **c) {
        if (*c)
                nng_tls_config_free(*c);
}

int nng_tls_read_pem(const char *path, char **ret) {
        return read_full_file(path, 0, TLS_PEM_FILE_MAX, ret, NULL);
}

static int engine_error(int nng_rv) {
        if (nng_rv == 0)
                return 0;
        return nng_rv == NNG_ENOMEM ? -ENOMEM : -EBADMSG;
}

/* Loads t's files into c; *ret_failed says which one failed.  The
 * certificate is skipped if t names none (a dialer without one). */
static int config_load(nng_tls_config *c, const TlsSettings *t, TlsFile *ret_failed) {
        _cleanup_free_ char *ca = NULL, *cert = NULL, *key = NULL;
        int r;

        *ret_failed = TLS_FILE_CA;
        r = nng_tls_read_pem(t->ca_file, &ca);
        if (r < 0)
                return r;
        r = engine_error(nng_tls_config_ca_chain(c, ca, NULL));
        if (r < 0)
                return r;

        if (isempty(t->cert_file) && isempty(t->key_file))
                return 0;
        *ret_failed = isempty(t->cert_file) ? TLS_FILE_CERT : TLS_FILE_KEY;
        if (isempty(t->cert_file) || isempty(t->key_file))
                return -ENOKEY;

        *ret_failed = TLS_FILE_CERT;
        r = nng_tls_read_pem(t->cert_file, &cert);
        if (r < 0)
                return r;
        *ret_failed = TLS_FILE_KEY;
        r = nng_tls_read_pem(t->key_file, &key);
        if (r < 0)
                return r;
        /* mbedTLS parses both here; a failure is either's fault. */
        *ret_failed = _TLS_FILE_INVALID;
        r = engine_error(nng_tls_config_own_cert(c, cert, key, NULL));
        explicit_bzero(key, strlen(key));
        return r;
}

static int config_new_auth(nng_tls_mode mode, nng_tls_auth_mode auth, const TlsSettings *t, nng_tls_config **ret,
                           TlsFile *ret_failed) {
        _cleanup_(tls_config_freep) nng_tls_config *c = NULL;
        int r;

        *ret_failed = _TLS_FILE_INVALID;
        /* ours if it can be had, else nng's own (dearer handshakes) */
        (void) nng_tls_use_engine();
        r = nng_errno(nng_tls_config_alloc(&c, mode));
        if (r < 0)
                return r;
        r = nng_errno(nng_tls_config_auth_mode(c, auth));
        if (r < 0)
                return r;
        r = config_load(c, t, ret_failed);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

/* Both ways: a server insists on a client certificate, a client on the
 * server's. */
static int config_new(nng_tls_mode mode, const TlsSettings *t, nng_tls_config **ret, TlsFile *ret_failed) {
        return config_new_auth(mode, NNG_TLS_AUTH_MODE_REQUIRED, t, ret, ret_failed);
}

/* A tls+tcp:// listener with the given demand on its peers' certificates;
 * the CA is loaded all the same (nng wants one). */
static int setup_listener(nng_listener l, const char *url, const TlsSettings *t, nng_tls_auth_mode auth) {
        _cleanup_(tls_config_freep) nng_tls_config *c = NULL;
        TlsFile failed;
        int r;

        if (!tls_url(url))
                return 0;
        if (!tls_settings_can_listen(t))
                return -ENOKEY;
        r = config_new_auth(NNG_TLS_MODE_SERVER, auth, t, &c, &failed);
        if (r < 0)
                return r;
        /* The listener takes its own hold on c. */
        return nng_errno(nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, c));
}

int nng_tls_setup_listener_no_client_cert(nng_listener l, const char *url, const TlsSettings *t) {
        return setup_listener(l, url, t, NNG_TLS_AUTH_MODE_NONE);
}

int nng_tls_setup_listener(nng_listener l, const char *url, const TlsSettings *t) {
        return setup_listener(l, url, t, NNG_TLS_AUTH_MODE_REQUIRED);
}

int nng_tls_setup_dialer(nng_dialer d, const char *url, const TlsSettings *t) {
        _cleanup_(tls_config_freep) nng_tls_config *c = NULL;
        nng_url *u = NULL;
        TlsFile failed;
        int r;

        if (!tls_url(url))
                return 0;
        if (!tls_settings_can_dial(t))
                return -ENOKEY;
        r = config_new(NNG_TLS_MODE_CLIENT, t, &c, &failed);
        if (r < 0)
                return r;

        /* nng sets the server name from the URL only on the configuration
         * it made itself, not on one set through NNG_OPT_TLS_CONFIG. */
        r = nng_errno(nng_url_parse(&u, url));
        if (r < 0)
                return r;
        if (!isempty(u->u_hostname))
                r = nng_errno(nng_tls_config_server_name(c, u->u_hostname));
        nng_url_free(u);
        if (r < 0)
                return r;
        return nng_errno(nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, c));
}

static const char *tls_file_path(const TlsSettings *t, TlsFile f) {
        switch (f) {
        case TLS_FILE_CA:
                return t->ca_file;
        case TLS_FILE_CERT:
                return t->cert_file;
        case TLS_FILE_KEY:
                return t->key_file;
        default:
                return NULL;
        }
}

int nng_tls_check_settings(const TlsSettings *t, bool need_cert, char *error, size_t error_size) {
        _cleanup_(tls_config_freep) nng_tls_config *c = NULL;
        TlsFile failed;
        int r;

        if (!tls_settings_can_dial(t)) {
                snprintf(error, error_size, "no CA certificate given");
                return -ENOKEY;
        }
        if (need_cert && !tls_settings_can_listen(t)) {
                snprintf(error, error_size, "no %s given",
                         isempty(t->cert_file) ? "certificate" : "private key");
                return -ENOKEY;
        }
        r = config_new(need_cert ? NNG_TLS_MODE_SERVER : NNG_TLS_MODE_CLIENT, t, &c, &failed);
        if (r >= 0)
                return 0;

        if (failed < 0) {
                if (r == -EBADMSG)
                        snprintf(error, error_size,
                                 "the certificate %s and the private key %s cannot be used together "
                                 "(PEM files expected, the key unencrypted)",
                                 t->cert_file, t->key_file);
                else
                        snprintf(error, error_size, "cannot set up TLS: %s", strerror(-r));
        } else if (r == -ENOKEY)
                snprintf(error, error_size, "no %s given", tls_file_table[failed]);
        else if (r == -EBADMSG)
                snprintf(error, error_size, "%s %s: not a PEM %s the TLS engine accepts", tls_file_table[failed],
                         tls_file_path(t, failed), tls_file_table[failed]);
        else
                snprintf(error, error_size, "%s %s: %s", tls_file_table[failed], tls_file_path(t, failed),
                         strerror(-r));
        return r;
}
