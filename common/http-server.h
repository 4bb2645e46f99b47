/* A small read-only HTTP server for a daemon's /metrics, /api/v1/ and web
 * UI (docs/observability.md): libmicrohttpd without threads of its own,
 * driven from the daemon's sd-event loop through its epoll fd, so that
 * handlers run on the loop, between the daemon's other events, and see its
 * state without locks.
 *
 * Connections are capped (in all and per client address), each has an idle
 * timeout and a fixed memory pool for its request (headers that do not fit
 * get 431 from libmicrohttpd), and only GET and HEAD are served: a slow or
 * hostile client costs one bounded connection, never the loop. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "tls.h"

/* What a handler fills: status 200 and text/plain unless it says
 * otherwise; body is an open memory stream it writes the response to. */
typedef struct HttpReply {
        unsigned status;
        const char *content_type; /* a static string */
        FILE *body;
} HttpReply;

/* Called on the loop for each GET or HEAD; path is the decoded path without
 * the query.  A handler that cannot answer sets reply->status (404, 500, ...). */
typedef void (*HttpHandler)(const char *path, HttpReply *reply, void *userdata);

typedef struct HttpServerConfig {
        const char *listen;         /* HOST:PORT ([V6]:PORT); port 0: any free port */
        unsigned port_tries;        /* a busy port: try the next ones, up to port + port_tries - 1; 0 = 1 */
        const TlsSettings *tls;     /* a certificate and key: HTTPS; NULL: plain HTTP */
        unsigned max_connections;   /* 0: HTTP_MAX_CONNECTIONS_DEFAULT */
        unsigned per_ip_connections;/* 0: HTTP_PER_IP_CONNECTIONS_DEFAULT */
        unsigned timeout_s;         /* idle timeout of a connection; 0: HTTP_TIMEOUT_S_DEFAULT */
} HttpServerConfig;

#define HTTP_MAX_CONNECTIONS_DEFAULT 64u
#define HTTP_PER_IP_CONNECTIONS_DEFAULT 32u
#define HTTP_TIMEOUT_S_DEFAULT 10u
/* Each connection's pool for the request line, headers and bookkeeping. */
#define HTTP_CONNECTION_MEMORY 32768u

typedef struct HttpServer HttpServer;

/* Listens on c->listen and serves on e.  Errors: -EINVAL for a bad
 * address (err says why), -EADDRINUSE when every port tried is taken, the
 * errno of socket calls, -EPROTO when libmicrohttpd refuses to start (a
 * bad certificate).  err may be NULL. */
int http_server_new(sd_event *e, const HttpServerConfig *c, HttpHandler handler, void *userdata,
                    HttpServer **ret, char *err, size_t err_size);
HttpServer *http_server_free(HttpServer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(HttpServer *, http_server_free);

/* The port it listens on (the one found when several were tried). */
uint16_t http_server_port(const HttpServer *s);
/* "http://HOST:PORT" or "https://HOST:PORT" with the configured host (a
 * wildcard host replaced by host_for_wildcard); NULL on ENOMEM. */
char *http_server_url(const HttpServer *s, const char *host_for_wildcard);
/* Connections open now. */
unsigned http_server_connections(const HttpServer *s);

/* Splits "HOST:PORT" or "[V6]:PORT"; host is copied into host_buf without
 * brackets.  -EINVAL (err says why) for anything else. */
int http_listen_parse(const char *s, char *host_buf, size_t host_size, uint16_t *ret_port, char *err,
                      size_t err_size);
