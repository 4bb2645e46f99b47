/* See tls-session.h.  mbedtls 2.28 (Debian's, the one nng links). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include "macro.h"
#include "nng-tls-engine.h"
#include "nng-tls.h"
#include "tls-resume.h"
#include "tls-session.h"

/* One recv() takes this much: a whole record (16 KiB of plaintext plus its
 * overhead) and then some, so that a burst of small records is one call. */
#define READ_AHEAD_BYTES (32u * 1024u)

struct TlsContext {
        mbedtls_ssl_config conf;
        mbedtls_x509_crt crt; /* a server's own chain, or a client's CA */
        mbedtls_pk_context key;
        bool server;
};

struct TlsSession {
        mbedtls_ssl_context ssl;
        int fd;
        int last_error;      /* mbedtls's code of the last failure */
        int sys_errno;       /* ... and the socket's errno behind it */
        bool wants_write;
        /* a client's offer of an earlier session (tls-resume.h): its id */
        unsigned char offered_id[32];
        size_t offered_id_len;
        size_t write_retry;  /* the length of the record whose sending waits */
        size_t in_start, in_end;
        unsigned char in[READ_AHEAD_BYTES];
};

static void pem_freep(char **p) {
        if (*p) {
                explicit_bzero(*p, strlen(*p));
                free(*p);
        }
}

/* The PEM file's certificates into crt. */
static int parse_certificates(mbedtls_x509_crt *crt, const char *path) {
        _cleanup_(pem_freep) char *pem = NULL;
        int k = nng_tls_read_pem(path, &pem);

        if (k < 0)
                return k;
        return mbedtls_x509_crt_parse(crt, (const unsigned char *) pem, strlen(pem) + 1) == 0 ? 0 : -EBADMSG;
}

static int parse_key(mbedtls_pk_context *key, const char *path) {
        _cleanup_(pem_freep) char *pem = NULL;
        int k = nng_tls_read_pem(path, &pem);

        if (k < 0)
                return k;
        return mbedtls_pk_parse_key(key, (const unsigned char *) pem, strlen(pem) + 1, NULL, 0) == 0 ? 0 : -EBADMSG;
}

static int context_new(bool server, TlsContext **ret) {
        mbedtls_ctr_drbg_context *rng = tls_random_generator();
        TlsContext *c;

        if (!rng)
                return -EIO;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->server = server;
        mbedtls_ssl_config_init(&c->conf);
        mbedtls_x509_crt_init(&c->crt);
        mbedtls_pk_init(&c->key);
        if (mbedtls_ssl_config_defaults(&c->conf, server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
                                        MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
                tls_context_free(c);
                return -EIO;
        }
        /* the process's generator (nng-tls-engine.h): seeded once */
        mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, rng);
        /* not mbedtls's default, P-521 first (nng-tls-engine.h) */
        mbedtls_ssl_conf_curves(&c->conf, tls_key_exchange_curves);
        /* TLS 1.2, the newest this mbedtls speaks; nothing older */
        mbedtls_ssl_conf_min_version(&c->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
        *ret = c;
        return 0;
}

int tls_context_new_server(const char *cert_file, const char *key_file, TlsContext **ret, const char **ret_failed) {
        TlsContext *c = NULL;
        const char *failed = "certificate";
        int k;

        if (isempty(cert_file) || isempty(key_file) || !ret)
                return -EINVAL;
        k = context_new(true, &c);
        if (k < 0)
                goto fail;
        k = parse_certificates(&c->crt, cert_file);
        if (k < 0)
                goto fail;
        failed = "private key";
        k = parse_key(&c->key, key_file);
        if (k < 0)
                goto fail;
        if (mbedtls_pk_check_pair(&c->crt.pk, &c->key) != 0) {
                k = -EKEYREJECTED;
                goto fail;
        }
        /* executors show no certificate: their secret proves them */
        mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_NONE);
        if (mbedtls_ssl_conf_own_cert(&c->conf, &c->crt, &c->key) != 0) {
                k = -ENOMEM;
                goto fail;
        }
        /* executors resume the session of their nng connection */
        tls_resume_serve(&c->conf, &c->crt);
        *ret = c;
        return 0;
fail:
        if (ret_failed)
                *ret_failed = failed;
        tls_context_free(c);
        return k;
}

int tls_context_new_client(const char *ca_file, TlsContext **ret) {
        TlsContext *c = NULL;
        int k;

        if (isempty(ca_file) || !ret)
                return -EINVAL;
        k = context_new(false, &c);
        if (k < 0)
                return k;
        k = parse_certificates(&c->crt, ca_file);
        if (k < 0) {
                tls_context_free(c);
                return k;
        }
        mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
        mbedtls_ssl_conf_ca_chain(&c->conf, &c->crt, NULL);
        *ret = c;
        return 0;
}

TlsContext *tls_context_free(TlsContext *c) {
        if (!c)
                return NULL;
        mbedtls_ssl_config_free(&c->conf);
        mbedtls_x509_crt_free(&c->crt);
        mbedtls_pk_free(&c->key);
        free(c);
        return NULL;
}

static int bio_send(void *userdata, const unsigned char *buf, size_t len) {
        TlsSession *s = userdata;

        for (;;) {
                ssize_t n = send(s->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

                if (n >= 0)
                        return (int) n; /* mbedtls hands at most a record */
                if (errno == EINTR)
                        continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                        return MBEDTLS_ERR_SSL_WANT_WRITE;
                s->sys_errno = errno;
                return MBEDTLS_ERR_NET_SEND_FAILED;
        }
}

static int bio_recv(void *userdata, unsigned char *buf, size_t len) {
        TlsSession *s = userdata;
        size_t n;

        while (s->in_start == s->in_end) {
                ssize_t k = recv(s->fd, s->in, sizeof(s->in), MSG_DONTWAIT);

                if (k == 0)
                        return 0; /* the end of the stream */
                if (k > 0) {
                        s->in_start = 0;
                        s->in_end = (size_t) k;
                        break;
                }
                if (errno == EINTR)
                        continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                        return MBEDTLS_ERR_SSL_WANT_READ;
                s->sys_errno = errno;
                return MBEDTLS_ERR_NET_RECV_FAILED;
        }
        n = MIN(len, s->in_end - s->in_start);
        memcpy(buf, s->in + s->in_start, n);
        s->in_start += n;
        return (int) n;
}

int tls_session_new(TlsContext *c, int fd, const char *server_name, TlsSession **ret) {
        TlsSession *s;

        if (!c || fd < 0 || !ret || (!c->server && isempty(server_name)))
                return -EINVAL;
        s = malloc(sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->fd = fd;
        s->last_error = s->sys_errno = 0;
        s->wants_write = false;
        s->offered_id_len = 0;
        s->write_retry = s->in_start = s->in_end = 0;
        mbedtls_ssl_init(&s->ssl);
        if (mbedtls_ssl_setup(&s->ssl, &c->conf) != 0 ||
            (!c->server && mbedtls_ssl_set_hostname(&s->ssl, server_name) != 0)) {
                mbedtls_ssl_free(&s->ssl);
                free(s);
                return -ENOMEM;
        }
        if (!c->server && tls_resume_offer(&s->ssl, server_name) &&
            s->ssl.session_negotiate->id_len <= sizeof(s->offered_id)) {
                s->offered_id_len = s->ssl.session_negotiate->id_len;
                memcpy(s->offered_id, s->ssl.session_negotiate->id, s->offered_id_len);
        }
        mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
        *ret = s;
        return 0;
}

TlsSession *tls_session_free(TlsSession *s) {
        if (!s)
                return NULL;
        if (s->ssl.state == MBEDTLS_SSL_HANDSHAKE_OVER)
                (void) mbedtls_ssl_close_notify(&s->ssl);
        mbedtls_ssl_free(&s->ssl);
        free(s);
        return NULL;
}

/* mbedtls's code → the errno the header promises. */
static int session_error(TlsSession *s, int code) {
        s->wants_write = code == MBEDTLS_ERR_SSL_WANT_WRITE;
        switch (code) {
        case MBEDTLS_ERR_SSL_WANT_READ:
        case MBEDTLS_ERR_SSL_WANT_WRITE:
                return -EAGAIN;
        default:
                break;
        }
        s->last_error = code;
        switch (code) {
        case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
                return -EKEYREJECTED;
        case MBEDTLS_ERR_SSL_CONN_EOF:
        case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
                return -ECONNRESET;
        case MBEDTLS_ERR_NET_SEND_FAILED:
        case MBEDTLS_ERR_NET_RECV_FAILED:
                return s->sys_errno > 0 ? -s->sys_errno : -EIO;
        case MBEDTLS_ERR_SSL_ALLOC_FAILED:
                return -ENOMEM;
        default:
                return -EPROTO;
        }
}

int tls_session_handshake(TlsSession *s) {
        int k = mbedtls_ssl_handshake(&s->ssl);

        if (k != 0)
                return session_error(s, k);
        /* a channel that reconnects resumes this one (tls-resume.h) */
        if (s->ssl.conf->endpoint == MBEDTLS_SSL_IS_CLIENT && !tls_session_resumed(s))
                tls_resume_remember(&s->ssl, s->ssl.hostname);
        return 0;
}

ssize_t tls_session_read(TlsSession *s, void *buf, size_t n) {
        int k;

        if (n == 0)
                return -EINVAL;
        k = mbedtls_ssl_read(&s->ssl, buf, MIN(n, (size_t) INT_MAX));
        if (k >= 0)
                return k;
        k = session_error(s, k);
        return k == -ECONNRESET ? 0 : k;
}

ssize_t tls_session_write(TlsSession *s, const void *buf, size_t n) {
        int k;

        if (s->write_retry > 0) {
                if (n < s->write_retry)
                        return -EINVAL;
                n = s->write_retry;
        }
        k = mbedtls_ssl_write(&s->ssl, buf, MIN(n, (size_t) INT_MAX));
        if (k >= 0) {
                s->write_retry = 0;
                return k;
        }
        k = session_error(s, k);
        if (k == -EAGAIN)
                s->write_retry = n;
        return k;
}

bool tls_session_wants_write(const TlsSession *s) {
        return s->wants_write;
}

bool tls_session_pending(const TlsSession *s) {
        return s->in_start < s->in_end || mbedtls_ssl_get_bytes_avail(&s->ssl) > 0 ||
               mbedtls_ssl_check_pending(&s->ssl);
}

/* Our own words for what a peer most often does wrong.  Not
 * mbedtls_strerror(): its table would make spark-executor, which links
 * mbedtls statically, carry a copy Debian's lintian flags as an embedded
 * library. */
static const char *describe_code(int code, char *buf, size_t size) {
        switch (code) {
        case MBEDTLS_ERR_SSL_CONN_EOF:
        case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
                return "the peer closed the connection";
        case MBEDTLS_ERR_SSL_BAD_HS_CLIENT_HELLO:
                return "not a TLS client hello (does the peer speak TLS?)";
        case MBEDTLS_ERR_SSL_BAD_HS_SERVER_HELLO:
                return "not a TLS server hello (does the server speak TLS?)";
        case MBEDTLS_ERR_SSL_INVALID_RECORD:
                return "not a TLS record (does the peer speak TLS?)";
        case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
                return "the peer refused the handshake (a fatal alert)";
        case MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE:
                return "no cipher suite in common";
        case MBEDTLS_ERR_SSL_INVALID_MAC:
                return "a record failed its integrity check";
        case MBEDTLS_ERR_SSL_ALLOC_FAILED:
                return "out of memory";
        default:
                snprintf(buf, size, "TLS error -0x%04X", (unsigned) -code);
                return buf;
        }
}

void tls_session_strerror(const TlsSession *s, char *buf, size_t size) {
        uint32_t flags;
        char *nl;

        if (size == 0)
                return;
        if (s->last_error == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED &&
            (flags = mbedtls_ssl_get_verify_result(&s->ssl)) != 0 && flags != (uint32_t) -1 &&
            mbedtls_x509_crt_verify_info(buf, size, "", flags) > 0) {
                /* one line per fault: join them */
                while ((nl = strchr(buf, '\n')))
                        *nl = nl[1] ? ';' : '\0';
                return;
        }
        if (s->last_error == MBEDTLS_ERR_NET_SEND_FAILED || s->last_error == MBEDTLS_ERR_NET_RECV_FAILED) {
                snprintf(buf, size, "%s", strerror(s->sys_errno));
                return;
        }
        const char *what = describe_code(s->last_error, buf, size);

        if (what != buf)
                snprintf(buf, size, "%s", what);
}

bool tls_session_resumed(const TlsSession *s) {
        const mbedtls_ssl_session *now;

        if (!s || s->offered_id_len == 0 || s->ssl.state != MBEDTLS_SSL_HANDSHAKE_OVER)
                return false;
        /* a full handshake gets a new id from the server */
        now = mbedtls_ssl_get_session_pointer(&s->ssl);
        return now && now->id_len == s->offered_id_len && memcmp(now->id, s->offered_id, s->offered_id_len) == 0;
}
