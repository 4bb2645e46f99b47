/* See http-server.h.
 *
 * libmicrohttpd offers two external-loop modes: select()-style
 * (MHD_get_fdset() before every wait, one sd-event source per connection fd
 * to add and drop as connections come and go) or MHD_USE_EPOLL, where it
 * keeps all its sockets in one epoll fd of its own.  The second is one io
 * source on that fd plus one timer, fixed for the server's life, so it is
 * what this uses: when the fd is readable, or the timer MHD asks for fires,
 * MHD_run() does the work that is ready without waiting, then the timer is
 * set to MHD_get_timeout()'s answer (0 when MHD still has ready connections
 * on its edge-triggered list, so the loop comes back to them after its
 * other events instead of starving them). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "alloc-util.h"
#include "error-buf.h"
#include "fileio.h"
#include "http-server.h"
#include "time-util.h"

#define HTTP_PEM_MAX (1024 * 1024)

struct HttpServer {
        sd_event *event;
        struct MHD_Daemon *daemon;
        sd_event_source *io;
        sd_event_source *timer;
        HttpHandler handler;
        void *userdata;
        char host[256];
        uint16_t port;
        bool https;
        unsigned connections;
        bool closed; /* a connection closed during MHD_run() */
        char *cert_pem, *key_pem; /* MHD keeps pointers to them */
};

int http_listen_parse(const char *s, char *host_buf, size_t host_size, uint16_t *ret_port, char *err,
                      size_t err_size) {
        const char *colon, *host = s, *end;
        unsigned long port;
        char *p;

        if (isempty(s))
                return error_buf_invalid(err, err_size, "empty address: HOST:PORT expected");
        colon = strrchr(s, ':');
        if (!colon)
                return error_buf_invalid(err, err_size, "\"%s\": HOST:PORT expected", s);
        end = colon;
        if (s[0] == '[') {
                if (colon == s || colon[-1] != ']')
                        return error_buf_invalid(err, err_size, "\"%s\": [ADDRESS]:PORT expected", s);
                host = s + 1;
                end = colon - 1;
        }
        if (end == host)
                return error_buf_invalid(err, err_size, "\"%s\": no host before the port", s);
        if ((size_t) (end - host) >= host_size)
                return error_buf_invalid(err, err_size, "\"%s\": the host is too long", s);
        for (const char *c = host; c < end; c++)
                if ((unsigned char) *c <= ' ' || *c == 0x7f || *c == '/' || *c == '[' || *c == ']')
                        return error_buf_invalid(err, err_size, "\"%s\": the host has a character not allowed", s);
        errno = 0;
        if (colon[1] < '0' || colon[1] > '9')
                return error_buf_invalid(err, err_size, "\"%s\": the port is not a number", s);
        port = strtoul(colon + 1, &p, 10);
        if (errno != 0 || *p != '\0' || port > 65535)
                return error_buf_invalid(err, err_size, "\"%s\": the port is not a number from 0 to 65535", s);
        memcpy(host_buf, host, end - host);
        host_buf[end - host] = '\0';
        *ret_port = (uint16_t) port;
        return 0;
}

/* A listening socket on host:port (a wildcard or numeric address, or a name
 * resolved at start).  MHD is handed the socket, so that the port search
 * and the error of a busy port are ours. */
static int listen_socket(const char *host, uint16_t port, int *ret_fd, uint16_t *ret_port, char *err,
                         size_t err_size) {
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
                        *res = NULL;
        char portstr[8];
        int r, fd, last = -EADDRNOTAVAIL;

        snprintf(portstr, sizeof(portstr), "%u", port);
        r = getaddrinfo(host, portstr, &hints, &res);
        if (r != 0)
                return error_buf_invalid(err, err_size, "cannot resolve \"%s\": %s", host, gai_strerror(r));

        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                union {
                        struct sockaddr sa;
                        struct sockaddr_in in;
                        struct sockaddr_in6 in6;
                } bound;
                socklen_t len = sizeof(bound);
                int one = 1;

                fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
                if (fd < 0) {
                        last = -errno;
                        continue;
                }
                (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
                if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0 ||
                    getsockname(fd, &bound.sa, &len) < 0) {
                        last = -errno;
                        close(fd);
                        continue;
                }
                *ret_port = ntohs(bound.sa.sa_family == AF_INET6 ? bound.in6.sin6_port : bound.in.sin_port);
                *ret_fd = fd;
                freeaddrinfo(res);
                return 0;
        }
        freeaddrinfo(res);
        return last;
}

static int run_now(HttpServer *s);

static int on_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src, (void) fd, (void) revents;
        return run_now(userdata);
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src, (void) usec;
        return run_now(userdata);
}

static int run_now(HttpServer *s) {
        MHD_UNSIGNED_LONG_LONG ms = 0;

        s->closed = false;
        (void) MHD_run(s->daemon);
        /* At the connection cap MHD takes the listening socket out of its
         * epoll set, and puts it back at the start of a later MHD_run(): when
         * a connection closed, that run must come even if nothing else is
         * pending, or accepting would stop for good. */
        if (s->closed) {
                (void) sd_event_source_set_time_relative(s->timer, 0);
                (void) sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
                return 0;
        }
        if (MHD_get_timeout(s->daemon, &ms) == MHD_YES) {
                (void) sd_event_source_set_time_relative(s->timer, (uint64_t) ms * USEC_PER_MSEC);
                (void) sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
        } else
                (void) sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        return 0;
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, const char *type, char *body,
                             size_t size) {
        struct MHD_Response *resp;
        enum MHD_Result ret;

        resp = MHD_create_response_from_buffer(size, body, MHD_RESPMEM_MUST_FREE);
        if (!resp) {
                free(body);
                return MHD_NO;
        }
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        (void) MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        /* the UI loads nothing from elsewhere, and nothing may frame it */
        (void) MHD_add_response_header(resp, "Content-Security-Policy",
                                       "default-src 'self'; frame-ancestors 'none'");
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        ret = MHD_queue_response(c, status, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result queue_text(struct MHD_Connection *c, unsigned status, const char *text) {
        char *body = strdup(text);

        if (!body)
                return MHD_NO;
        return queue(c, status, "text/plain; charset=utf-8", body, strlen(body));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
        HttpServer *s = cls;
        HttpReply reply = { .status = MHD_HTTP_OK, .content_type = "text/plain; charset=utf-8" };
        char *body = NULL;
        size_t size = 0;
        (void) version, (void) upload_data, (void) con_cls;

        /* read-only: anything else is answered at once, its body unread
         * (libmicrohttpd then closes the connection) */
        if (!streq(method, MHD_HTTP_METHOD_GET) && !streq(method, MHD_HTTP_METHOD_HEAD))
                return queue_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        if (*upload_data_size > 0)
                return queue_text(c, MHD_HTTP_BAD_REQUEST, "a GET has no body\n");

        reply.body = open_memstream(&body, &size);
        if (!reply.body)
                return queue_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        s->handler(url, &reply, s->userdata);
        if (fclose(reply.body) != 0) {
                free(body);
                return queue_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        }
        return queue(c, reply.status, reply.content_type, body, size);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
        HttpServer *s = cls;
        (void) c, (void) socket_context;

        if (code == MHD_CONNECTION_NOTIFY_STARTED)
                s->connections++;
        else if (code == MHD_CONNECTION_NOTIFY_CLOSED && s->connections > 0) {
                s->connections--;
                s->closed = true;
        }
}

int http_server_new(sd_event *e, const HttpServerConfig *c, HttpHandler handler, void *userdata,
                    HttpServer **ret, char *err, size_t err_size) {
        _cleanup_(http_server_freep) HttpServer *s = NULL;
        _cleanup_close_ int fd = -1;
        unsigned tries = MAX(c->port_tries, 1u), flags;
        uint16_t port;
        int r, epoll_fd;
        const union MHD_DaemonInfo *info;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->handler = handler;
        s->userdata = userdata;

        r = http_listen_parse(c->listen, s->host, sizeof(s->host), &port, err, err_size);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < tries; i++) {
                r = listen_socket(s->host, port, &fd, &s->port, err, err_size);
                if (r != -EADDRINUSE || port == 0 || port == UINT16_MAX)
                        break;
                port++;
        }
        if (r == -EADDRINUSE)
                return error_buf_set(err, err_size, r, "%s: the port%s taken", c->listen,
                                     tries > 1 ? " and the next ones are" : " is");
        if (r < 0)
                return r == -EINVAL ? r : error_buf_set(err, err_size, r, "%s: %s", c->listen, strerror(-r));

        /* no MHD_USE_ERROR_LOG: common/ does not log, errors come back to the caller */
        flags = MHD_USE_EPOLL;
        if (c->tls && !isempty(c->tls->cert_file) && !isempty(c->tls->key_file)) {
                r = read_full_file(c->tls->cert_file, 0, HTTP_PEM_MAX, &s->cert_pem, NULL);
                if (r < 0)
                        return error_buf_set(err, err_size, r, "%s: %s", c->tls->cert_file, strerror(-r));
                r = read_full_file(c->tls->key_file, 0, HTTP_PEM_MAX, &s->key_pem, NULL);
                if (r < 0)
                        return error_buf_set(err, err_size, r, "%s: %s", c->tls->key_file, strerror(-r));
                flags |= MHD_USE_TLS;
                s->https = true;
        }

        s->daemon = MHD_start_daemon(
                flags, 0, NULL, NULL, on_request, s,
                MHD_OPTION_LISTEN_SOCKET, fd,
                MHD_OPTION_CONNECTION_LIMIT, c->max_connections ?: HTTP_MAX_CONNECTIONS_DEFAULT,
                MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_ip_connections ?: HTTP_PER_IP_CONNECTIONS_DEFAULT,
                MHD_OPTION_CONNECTION_TIMEOUT, c->timeout_s ?: HTTP_TIMEOUT_S_DEFAULT,
                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) HTTP_CONNECTION_MEMORY,
                MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                s->https ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, s->cert_pem,
                MHD_OPTION_HTTPS_MEM_KEY, s->key_pem,
                MHD_OPTION_END);
        if (!s->daemon)
                return error_buf_set(err, err_size, -EPROTO, "%s: the HTTP server did not start%s", c->listen,
                                     s->https ? " (is the certificate or key bad?)" : "");
        TAKE_FD(fd); /* MHD closes it */

        info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_EPOLL_FD);
        if (!info)
                return error_buf_set(err, err_size, -EPROTO, "%s: the HTTP server has no epoll fd", c->listen);
        epoll_fd = info->epoll_fd;

        r = sd_event_add_io(e, &s->io, epoll_fd, EPOLLIN, on_io, s);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(e, &s->timer, CLOCK_MONOTONIC, 0, 0, on_timer, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);

        *ret = TAKE_PTR(s);
        return 0;
}

HttpServer *http_server_free(HttpServer *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->io);
        sd_event_source_disable_unref(s->timer);
        if (s->daemon)
                MHD_stop_daemon(s->daemon);
        sd_event_unref(s->event);
        free(s->cert_pem);
        if (s->key_pem) {
                explicit_bzero(s->key_pem, strlen(s->key_pem));
                free(s->key_pem);
        }
        free(s);
        return NULL;
}

uint16_t http_server_port(const HttpServer *s) {
        return s->port;
}

unsigned http_server_connections(const HttpServer *s) {
        return s->connections;
}

char *http_server_url(const HttpServer *s, const char *host_for_wildcard) {
        const char *host = s->host;
        char *url = NULL;

        if (streq(host, "0.0.0.0") || streq(host, "::") || streq(host, "*"))
                host = host_for_wildcard ?: "localhost";
        if (asprintf(&url, "%s://%s%s%s:%u", s->https ? "https" : "http", strchr(host, ':') ? "[" : "", host,
                     strchr(host, ':') ? "]" : "", s->port) < 0)
                return NULL;
        return url;
}
