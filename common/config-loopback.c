/* Which listen endpoints reach beyond this host in plaintext.  Anyone who
 * can send a request to a master or driver can run code on every worker, so
 * a plaintext tcp:// listener must stay on loopback unless the operator says
 * otherwise (cluster.insecure). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "config.h"

#define PLAIN_TCP "tcp://"

static bool host_is_loopback(const char *host, size_t n) {
        char buf[INET6_ADDRSTRLEN + 1];
        struct in_addr a4;
        struct in6_addr a6;

        if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
                host++;
                n -= 2;
        }
        if (n == 0 || n >= sizeof(buf))
                return false;
        memcpy(buf, host, n);
        buf[n] = '\0';

        if (strcasecmp(buf, "localhost") == 0 || strcasecmp(buf, "localhost.") == 0)
                return true;
        if (inet_pton(AF_INET, buf, &a4) == 1)
                return (ntohl(a4.s_addr) >> 24) == 127;
        if (inet_pton(AF_INET6, buf, &a6) == 1)
                return IN6_IS_ADDR_LOOPBACK(&a6) ||
                       (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
        return false; /* a name: it may resolve to any address */
}

bool config_endpoint_beyond_loopback(const char *url) {
        const char *host, *colon;

        if (!url || strncmp(url, PLAIN_TCP, strlen(PLAIN_TCP)) != 0)
                return false;
        host = url + strlen(PLAIN_TCP);
        colon = strrchr(host, ':');
        if (!colon)
                return true; /* not a valid endpoint: the schema says so */
        return !host_is_loopback(host, (size_t) (colon - host));
}

/* An http_listen key (HOST:PORT): the HTTP server is HTTPS when the daemon
 * has a certificate and key (config_tls_for()), else plain HTTP. */
static bool http_listen_beyond_loopback(const ConfigKey *k, const SparkConfig *c) {
        const char *v = *(char *const *) config_key_value_const(k, c), *colon;
        TlsSettings t;

        if (isempty(v))
                return false;
        t = config_tls_for(c, k->section);
        if (tls_settings_can_listen(&t))
                return false;
        colon = strrchr(v, ':');
        return !colon || !host_is_loopback(v, (size_t) (colon - v));
}

bool config_key_listens_beyond_loopback(const ConfigKey *k, const SparkConfig *c) {
        size_t n;

        if (k && c && k->type == CONFIG_KEY_STRING && streq(k->name, "http_listen"))
                return http_listen_beyond_loopback(k, c);
        if (!k || !c || k->type != CONFIG_KEY_ENDPOINT)
                return false;
        n = strlen(k->name);
        if (n < strlen("listen") || !streq(k->name + n - strlen("listen"), "listen"))
                return false;
        return config_endpoint_beyond_loopback(*(char *const *) config_key_value_const(k, c));
}
