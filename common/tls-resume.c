/* See tls-resume.h.  mbedtls 2.28: resumption by session id, from its
 * session cache (locked by mbedtls: MBEDTLS_THREADING_C, as Debian builds
 * it). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ssl_cache.h>

#include "sha256.h"
#include "tls-resume.h"

/* A session is resumed within milliseconds of its making (the channel
 * follows the registration); one that waited longer is not worth a place. */
#define RESUME_TIMEOUT_S 300
/* Sessions of clients with no certificate: a couple of hundred bytes each. */
#define RESUME_MAX_ENTRIES 1024
/* Distinct server certificates in one process: the driver has one. */
#define RESUME_MAX_CACHES 4
#define RESUME_SERVER_NAME_MAX 256

typedef struct ServerCache {
        uint8_t cert_digest[SHA256_DIGEST_SIZE];
        mbedtls_ssl_cache_context cache;
} ServerCache;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ServerCache *server_caches[RESUME_MAX_CACHES];

static mbedtls_ssl_session remembered;
static bool have_remembered;
static char remembered_name[RESUME_SERVER_NAME_MAX];

static ServerCache *server_cache_for(const mbedtls_x509_crt *own_cert) {
        uint8_t digest[SHA256_DIGEST_SIZE];
        size_t i;

        sha256(own_cert->raw.p, own_cert->raw.len, digest);
        for (i = 0; i < RESUME_MAX_CACHES && server_caches[i]; i++)
                if (memcmp(server_caches[i]->cert_digest, digest, sizeof(digest)) == 0)
                        return server_caches[i];
        if (i == RESUME_MAX_CACHES)
                return NULL;
        /* kept for the life of the process: configurations point at it */
        server_caches[i] = calloc(1, sizeof(ServerCache));
        if (!server_caches[i])
                return NULL;
        memcpy(server_caches[i]->cert_digest, digest, sizeof(digest));
        mbedtls_ssl_cache_init(&server_caches[i]->cache);
        mbedtls_ssl_cache_set_timeout(&server_caches[i]->cache, RESUME_TIMEOUT_S);
        mbedtls_ssl_cache_set_max_entries(&server_caches[i]->cache, RESUME_MAX_ENTRIES);
        return server_caches[i];
}

static atomic_uint_fast64_t served;

/* mbedtls_ssl_cache_get(), counted: 0 when the session is found */
static int cache_get(void *cache, mbedtls_ssl_session *session) {
        int k = mbedtls_ssl_cache_get(cache, session);

        if (k == 0)
                atomic_fetch_add(&served, 1);
        return k;
}

uint64_t tls_resume_served(void) {
        return atomic_load(&served);
}

void tls_resume_serve(mbedtls_ssl_config *conf, const mbedtls_x509_crt *own_cert) {
        ServerCache *c = NULL;

        if (own_cert && own_cert->raw.p) {
                pthread_mutex_lock(&lock);
                c = server_cache_for(own_cert);
                pthread_mutex_unlock(&lock);
        }
        if (c)
                mbedtls_ssl_conf_session_cache(conf, &c->cache, cache_get, mbedtls_ssl_cache_set);
        else
                mbedtls_ssl_conf_session_cache(conf, NULL, NULL, NULL);
}

void tls_resume_remember(const mbedtls_ssl_context *ssl, const char *server_name) {
        mbedtls_ssl_session s;

        if (!server_name || strlen(server_name) >= sizeof(remembered_name) ||
            mbedtls_ssl_get_verify_result(ssl) != 0)
                return;
        mbedtls_ssl_session_init(&s);
        if (mbedtls_ssl_get_session(ssl, &s) != 0 || s.id_len == 0) {
                mbedtls_ssl_session_free(&s);
                return;
        }
        pthread_mutex_lock(&lock);
        if (have_remembered)
                mbedtls_ssl_session_free(&remembered);
        remembered = s; /* the session's heap parts move with it */
        have_remembered = true;
        strcpy(remembered_name, server_name);
        pthread_mutex_unlock(&lock);
}

bool tls_resume_offer(mbedtls_ssl_context *ssl, const char *server_name) {
        bool offered = false;

        if (!server_name)
                return false;
        pthread_mutex_lock(&lock);
        /* mbedtls_ssl_set_session() takes a copy */
        if (have_remembered && strcmp(remembered_name, server_name) == 0)
                offered = mbedtls_ssl_set_session(ssl, &remembered) == 0;
        pthread_mutex_unlock(&lock);
        return offered;
}
