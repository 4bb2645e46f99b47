/* See nng-tls-engine.h.  The contract is nng 1.5's
 * nng/supplemental/tls/engine.h: nng allocates (zeroed) and frees the
 * objects, locks a connection around each call into it and moves the
 * bytes (nng_tls_engine_send/recv); the engine turns bytes into records. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>
#include <nng/nng.h>
#include <nng/supplemental/tls/engine.h>

#include "nng-tls-engine.h"
#include "tls-resume.h"

typedef struct OwnCert {
        mbedtls_x509_crt crt;
        mbedtls_pk_context key;
        struct OwnCert *next;
} OwnCert;

struct nng_tls_engine_config {
        mbedtls_ssl_config conf;
        mbedtls_x509_crt ca;
        mbedtls_x509_crl crl;
        char *server_name;
        OwnCert *own; /* a server may have several (one per key type) */
};

struct nng_tls_engine_conn {
        mbedtls_ssl_context ssl;
        void *tls; /* nng's connection, for nng_tls_engine_send/recv */
        bool remembered;
};

const mbedtls_ecp_group_id tls_key_exchange_curves[] = {
        MBEDTLS_ECP_DP_CURVE25519,
        MBEDTLS_ECP_DP_SECP256R1,
        MBEDTLS_ECP_DP_SECP384R1,
        MBEDTLS_ECP_DP_NONE,
};

/* One generator for the process: mbedtls locks it (MBEDTLS_THREADING_C,
 * as Debian builds it), and nng calls in from many threads. */
static mbedtls_entropy_context entropy;
static mbedtls_ctr_drbg_context drbg;
static bool drbg_seeded;
static int setup_error;

static void seed_once(void) {
        static const char personal[] = "spark-deploy TLS";

        mbedtls_entropy_init(&entropy);
        mbedtls_ctr_drbg_init(&drbg);
        drbg_seeded = mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, (const unsigned char *) personal,
                                            sizeof(personal) - 1) == 0;
}

mbedtls_ctr_drbg_context *tls_random_generator(void) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        pthread_once(&once, seed_once);
        return drbg_seeded ? &drbg : NULL;
}

static int nng_error(int mbedtls_code) {
        switch (mbedtls_code) {
        case 0:
                return 0;
        case MBEDTLS_ERR_SSL_WANT_READ:
        case MBEDTLS_ERR_SSL_WANT_WRITE:
                return NNG_EAGAIN;
        case MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE:
        case MBEDTLS_ERR_SSL_CA_CHAIN_REQUIRED:
        case MBEDTLS_ERR_SSL_PEER_VERIFY_FAILED:
        case MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE:
        case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
                return NNG_EPEERAUTH;
        case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
                return NNG_ECONNREFUSED;
        case MBEDTLS_ERR_SSL_ALLOC_FAILED:
                return NNG_ENOMEM;
        case MBEDTLS_ERR_SSL_TIMEOUT:
                return NNG_ETIMEDOUT;
        case MBEDTLS_ERR_SSL_CONN_EOF:
                return NNG_ECLOSED;
        default:
                return NNG_ECRYPTO;
        }
}

static int bio_send(void *tls, const unsigned char *buf, size_t len) {
        size_t n = len;

        switch (nng_tls_engine_send(tls, buf, &n)) {
        case 0:
                return (int) n;
        case NNG_EAGAIN:
                return MBEDTLS_ERR_SSL_WANT_WRITE;
        default:
                return MBEDTLS_ERR_NET_SEND_FAILED;
        }
}

static int bio_recv(void *tls, unsigned char *buf, size_t len) {
        size_t n = len;

        switch (nng_tls_engine_recv(tls, buf, &n)) {
        case 0:
                return (int) n;
        case NNG_EAGAIN:
                return MBEDTLS_ERR_SSL_WANT_READ;
        default:
                return MBEDTLS_ERR_NET_RECV_FAILED;
        }
}

static int conn_init(nng_tls_engine_conn *c, void *tls, nng_tls_engine_config *cfg) {
        int k;

        c->tls = tls;
        c->remembered = false;
        mbedtls_ssl_init(&c->ssl);
        mbedtls_ssl_set_bio(&c->ssl, tls, bio_send, bio_recv, NULL);
        k = mbedtls_ssl_setup(&c->ssl, &cfg->conf);
        if (k == 0 && cfg->server_name)
                k = mbedtls_ssl_set_hostname(&c->ssl, cfg->server_name);
        return nng_error(k);
}

static void conn_fini(nng_tls_engine_conn *c) {
        mbedtls_ssl_free(&c->ssl);
}

static void conn_close(nng_tls_engine_conn *c) {
        (void) mbedtls_ssl_close_notify(&c->ssl);
}

static int conn_handshake(nng_tls_engine_conn *c) {
        int k = mbedtls_ssl_handshake(&c->ssl);

        /* for a task channel to resume (tls-resume.h); verified, or the
         * handshake would have failed (a client requires it) */
        if (k == 0 && c->ssl.conf->endpoint == MBEDTLS_SSL_IS_CLIENT && !c->remembered) {
                c->remembered = true;
                tls_resume_remember(&c->ssl, c->ssl.hostname);
        }
        return nng_error(k);
}

static int conn_recv(nng_tls_engine_conn *c, uint8_t *buf, size_t *size) {
        int k = mbedtls_ssl_read(&c->ssl, buf, *size > INT32_MAX ? INT32_MAX : *size);

        if (k < 0)
                return nng_error(k);
        *size = (size_t) k;
        return 0;
}

static int conn_send(nng_tls_engine_conn *c, const uint8_t *buf, size_t *size) {
        int k = mbedtls_ssl_write(&c->ssl, buf, *size > INT32_MAX ? INT32_MAX : *size);

        if (k < 0)
                return nng_error(k);
        *size = (size_t) k;
        return 0;
}

static bool conn_verified(nng_tls_engine_conn *c) {
        return mbedtls_ssl_get_verify_result(&c->ssl) == 0;
}

static void config_fini(nng_tls_engine_config *cfg) {
        mbedtls_ssl_config_free(&cfg->conf);
        mbedtls_x509_crt_free(&cfg->ca);
        mbedtls_x509_crl_free(&cfg->crl);
        free(cfg->server_name);
        while (cfg->own) {
                OwnCert *o = cfg->own;

                cfg->own = o->next;
                mbedtls_x509_crt_free(&o->crt);
                mbedtls_pk_free(&o->key);
                free(o);
        }
}

static int config_init(nng_tls_engine_config *cfg, nng_tls_mode mode) {
        bool server = mode == NNG_TLS_MODE_SERVER;
        int k;

        mbedtls_ssl_config_init(&cfg->conf);
        mbedtls_x509_crt_init(&cfg->ca);
        mbedtls_x509_crl_init(&cfg->crl);
        k = mbedtls_ssl_config_defaults(&cfg->conf, server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
                                        MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
        if (k != 0)
                return nng_error(k);
        /* as nng's: a server asks for no certificate unless told to */
        mbedtls_ssl_conf_authmode(&cfg->conf, server ? MBEDTLS_SSL_VERIFY_NONE : MBEDTLS_SSL_VERIFY_REQUIRED);
        mbedtls_ssl_conf_min_version(&cfg->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
        mbedtls_ssl_conf_rng(&cfg->conf, mbedtls_ctr_drbg_random, &drbg);
        mbedtls_ssl_conf_curves(&cfg->conf, tls_key_exchange_curves);
        return 0;
}

static int config_server(nng_tls_engine_config *cfg, const char *name) {
        char *copy = strdup(name);

        if (!copy)
                return NNG_ENOMEM;
        free(cfg->server_name);
        cfg->server_name = copy;
        return 0;
}

/* A listener that asks for no client certificate (the driver's executor
 * endpoint) keeps its sessions for the task channel to resume
 * (tls-resume.h); one of cluster members, whose connections live long and
 * carry certificates, keeps none. */
static void config_update_resumption(nng_tls_engine_config *cfg) {
        if (cfg->conf.endpoint == MBEDTLS_SSL_IS_SERVER && cfg->conf.authmode == MBEDTLS_SSL_VERIFY_NONE && cfg->own &&
            !cfg->own->next)
                tls_resume_serve(&cfg->conf, &cfg->own->crt);
        else
                mbedtls_ssl_conf_session_cache(&cfg->conf, NULL, NULL, NULL);
}

static int config_auth(nng_tls_engine_config *cfg, nng_tls_auth_mode mode) {
        switch (mode) {
        case NNG_TLS_AUTH_MODE_NONE:
                mbedtls_ssl_conf_authmode(&cfg->conf, MBEDTLS_SSL_VERIFY_NONE);
                break;
        case NNG_TLS_AUTH_MODE_OPTIONAL:
                mbedtls_ssl_conf_authmode(&cfg->conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
                break;
        case NNG_TLS_AUTH_MODE_REQUIRED:
                mbedtls_ssl_conf_authmode(&cfg->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
                break;
        default:
                return NNG_EINVAL;
        }
        config_update_resumption(cfg);
        return 0;
}

/* PEM strings: mbedtls counts their NUL in the length. */
static int config_ca_chain(nng_tls_engine_config *cfg, const char *certs, const char *crl) {
        int k = mbedtls_x509_crt_parse(&cfg->ca, (const unsigned char *) certs, strlen(certs) + 1);

        if (k != 0)
                return NNG_ECRYPTO;
        if (crl && mbedtls_x509_crl_parse(&cfg->crl, (const unsigned char *) crl, strlen(crl) + 1) != 0)
                return NNG_ECRYPTO;
        mbedtls_ssl_conf_ca_chain(&cfg->conf, &cfg->ca, crl ? &cfg->crl : NULL);
        return 0;
}

static int config_own_cert(nng_tls_engine_config *cfg, const char *cert, const char *key, const char *password) {
        OwnCert *o = calloc(1, sizeof(*o));
        int k;

        if (!o)
                return NNG_ENOMEM;
        mbedtls_x509_crt_init(&o->crt);
        mbedtls_pk_init(&o->key);
        k = mbedtls_x509_crt_parse(&o->crt, (const unsigned char *) cert, strlen(cert) + 1);
        if (k == 0)
                k = mbedtls_pk_parse_key(&o->key, (const unsigned char *) key, strlen(key) + 1,
                                         (const unsigned char *) password, password ? strlen(password) : 0);
        if (k == 0)
                k = mbedtls_ssl_conf_own_cert(&cfg->conf, &o->crt, &o->key);
        if (k != 0) {
                mbedtls_x509_crt_free(&o->crt);
                mbedtls_pk_free(&o->key);
                free(o);
                return k == MBEDTLS_ERR_SSL_ALLOC_FAILED ? NNG_ENOMEM : NNG_EINVAL;
        }
        o->next = cfg->own;
        cfg->own = o;
        config_update_resumption(cfg);
        return 0;
}

/* TLS 1.0–1.2 as asked; this mbedtls has no 1.3. */
static int config_version(nng_tls_engine_config *cfg, nng_tls_version min, nng_tls_version max) {
        if (min > max || min < NNG_TLS_1_0 || min > NNG_TLS_1_2)
                return NNG_ENOTSUP;
        if (max > NNG_TLS_1_2)
                max = NNG_TLS_1_2;
        mbedtls_ssl_conf_min_version(&cfg->conf, MBEDTLS_SSL_MAJOR_VERSION_3, (int) (min - NNG_TLS_1_0) + 1);
        mbedtls_ssl_conf_max_version(&cfg->conf, MBEDTLS_SSL_MAJOR_VERSION_3, (int) (max - NNG_TLS_1_0) + 1);
        return 0;
}

static nng_tls_engine_config_ops config_ops = {
        .size = sizeof(nng_tls_engine_config),
        .init = config_init,
        .fini = config_fini,
        .server = config_server,
        .auth = config_auth,
        .ca_chain = config_ca_chain,
        .own_cert = config_own_cert,
        .version = config_version,
};

static nng_tls_engine_conn_ops conn_ops = {
        .size = sizeof(nng_tls_engine_conn),
        .init = conn_init,
        .fini = conn_fini,
        .close = conn_close,
        .handshake = conn_handshake,
        .recv = conn_recv,
        .send = conn_send,
        .verified = conn_verified,
};

static const nng_tls_engine engine = {
        .version = NNG_TLS_ENGINE_VERSION,
        .config_ops = &config_ops,
        .conn_ops = &conn_ops,
        .name = "spark-mbedtls",
        .description = "mbed TLS " MBEDTLS_VERSION_STRING ", X25519 key exchange first",
        .fips_mode = false,
};

static void setup_once(void) {
        nng_tls_config *probe = NULL;

        if (!tls_random_generator()) {
                setup_error = -EIO;
                return;
        }
        /* nng registers its built-in engine when it initialises, on the
         * first call that needs it: an engine registered before that is
         * silently replaced.  A daemon checks its TLS files before it
         * opens any socket, so nng is made to initialise first (making a
         * configuration does; this one is nng's own, and goes at once). */
        if (nng_tls_config_alloc(&probe, NNG_TLS_MODE_CLIENT) == 0)
                nng_tls_config_free(probe);
        setup_error = nng_tls_engine_register(&engine) == 0 ? 0 : -ENOTSUP;
}

int nng_tls_use_engine(void) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        pthread_once(&once, setup_once);
        return setup_error;
}
