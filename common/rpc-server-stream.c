/* The task channel of an RpcServer (docs/DESIGN.md §4): a TCP listener
 * beside the nng one, on the same host, whose connections the loop reads
 * and writes itself — plain beside a tcp:// endpoint, TLS beside a
 * tls+tcp:// one (tls-session.h).  Each frame (stream-frame.h) is a request
 * like any other — the same decoding, stats and handler, parked and
 * answered the same way — and each connection is a pipe with an id of its
 * own, reported to the pipe handler when it comes and goes.  What it saves
 * is nng's threads: a poll and its answer cost the loop a read and a write,
 * nothing else.
 *
 * A connection is freed once it is closed and every request it brought is
 * answered (or abandoned); an answer to a closed connection is dropped, as
 * nng drops one to a pipe that is gone.  A TLS connection becomes a pipe
 * once its handshake is done; one that fails the handshake never does. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "nng-util.h"
#include "rpc-server-internal.h"
#include "stream-frame.h"
#include "time-util.h"

/* Executors keep two polls out at most, and a client waits for each answer;
 * a peer with more unanswered is neither. */
#define STREAM_MAX_REQUESTS_PER_CONN 16u
#define STREAM_MAX_CONNS 65536u
/* A TLS session holds about 70 KiB of buffers: fewer of those. */
#define STREAM_MAX_TLS_CONNS 4096u
/* Handshakes under way at once, and how long one may take: peers that
 * connect and say nothing hold few sessions, and not for long. */
#define STREAM_MAX_HANDSHAKES 64u
#define STREAM_HANDSHAKE_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* Pipe ids of the task channel, above nng's (which stay below 2^31). */
#define STREAM_PIPE_ID_BASE UINT32_C(0x80000000)

struct StreamConn {
        RpcServer *server;
        unsigned n_ref;          /* open: 1; + each unanswered request */
        int fd;
        sd_event_source *io;
        uint32_t pipe_id;
        StreamReader reader;
        StreamWriter writer;
        TlsSession *tls;                  /* NULL: plain */
        sd_event_source *handshake_timer; /* while its TLS handshake is under way */
        unsigned n_requests;
        bool handshaking;
        bool reported;                    /* the pipe handler has heard of it */
        bool closed;
        char peer[96];
        StreamConn *next, *prev;
};

static void conn_unref(StreamConn *c) {
        if (--c->n_ref > 0)
                return;
        stream_reader_done(&c->reader);
        stream_writer_done(&c->writer);
        free(c);
}

/* Closes the socket and reports the pipe gone; the struct stays until its
 * requests are answered. */
static void conn_close(StreamConn *c, const char *why) {
        RpcServer *s = c->server;

        if (c->closed)
                return;
        c->closed = true;
        if (why)
                log_debug("Connection from %s closed: %s", c->peer, why);
        c->io = sd_event_source_disable_unref(c->io);
        c->handshake_timer = sd_event_source_disable_unref(c->handshake_timer);
        if (c->handshaking)
                s->n_stream_handshakes--;
        c->handshaking = false;
        c->tls = tls_session_free(c->tls);
        close(c->fd);
        c->fd = -1;
        if (c->prev)
                c->prev->next = c->next;
        else
                s->stream_conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->next = c->prev = NULL;
        s->n_stream_conns--;
        if (!s->closed && c->reported)
                rpc_server_pipe_event(s, c->pipe_id, false);
        conn_unref(c);
}

static void request_unlink(RpcRequest *r) {
        RpcServer *s = r->server;

        if (r->stream_prev)
                r->stream_prev->stream_next = r->stream_next;
        else
                s->stream_requests = r->stream_next;
        if (r->stream_next)
                r->stream_next->stream_prev = r->stream_prev;
        r->stream_next = r->stream_prev = NULL;
}

void rpc_stream_request_free(RpcRequest *r) {
        free(r);
}

/* The request is done with its connection. */
static void request_finish(RpcRequest *r) {
        StreamConn *c = r->conn;

        request_unlink(r);
        c->n_requests--;
        conn_unref(c);
        if (!r->in_handler)
                rpc_stream_request_free(r);
}

static int conn_update_events(StreamConn *c) {
        uint32_t events;

        if (c->handshaking)
                events = tls_session_wants_write(c->tls) ? EPOLLOUT : EPOLLIN;
        else
                events = EPOLLIN | (stream_writer_pending(&c->writer) ? EPOLLOUT : 0);
        return sd_event_source_set_io_events(c->io, events);
}

static void conn_flush(StreamConn *c) {
        int k = c->tls ? stream_writer_flush_tls(&c->writer, c->tls) : stream_writer_flush(&c->writer, c->fd);

        if (k < 0) {
                conn_close(c, strerror(-k));
                return;
        }
        if (conn_update_events(c) < 0)
                conn_close(c, "cannot watch the socket");
}

void rpc_stream_request_answer(RpcRequest *r, nng_msg *m) {
        StreamConn *c = r->conn;

        if (!c->closed) {
                int k = stream_writer_append(&c->writer, r->tag, nng_msg_body(m), nng_msg_len(m));

                if (k < 0)
                        conn_close(c, "no memory for an answer");
                else
                        conn_flush(c);
        }
        nng_msg_free(m);
        request_finish(r);
}

void rpc_stream_request_drop(RpcRequest *r) {
        conn_close(r->conn, "a request was dropped");
        request_finish(r);
}

const char *rpc_stream_request_peer(const RpcRequest *r) {
        return r->conn->peer;
}

int rpc_stream_request_local_peer(const RpcRequest *r, LocalPeerKind *kind, uid_t *uid) {
        if (r->conn->closed)
                return -ENOTCONN;
        return local_peer_of_socket(r->conn->fd, kind, uid);
}

/* One frame: a request, delivered at once. */
static int conn_take_frame(StreamConn *c, uint32_t tag, const uint8_t *body, size_t len) {
        RpcServer *s = c->server;
        RpcRequest *r;

        if (c->n_requests >= STREAM_MAX_REQUESTS_PER_CONN) {
                log_warning("Connection from %s has %u requests unanswered, more than an executor or a "
                            "client sends: closing it.",
                            c->peer, c->n_requests);
                return -EPROTO;
        }
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->body = malloc(len > 0 ? len : 1);
        if (!r->body) {
                free(r);
                return -ENOMEM;
        }
        memcpy(r->body, body, len);
        r->body_len = len;
        r->server = s;
        r->conn = c;
        r->tag = tag;
        r->pipe_id = c->pipe_id;
        r->stream_next = s->stream_requests;
        if (r->stream_next)
                r->stream_next->stream_prev = r;
        s->stream_requests = r;
        c->n_requests++;
        c->n_ref++;
        rpc_request_deliver(s, r);
        return 0;
}

/* What the peer sent: each whole frame a request. */
static void conn_read(StreamConn *c) {
        RpcServer *s = c->server;
        int k = c->tls ? stream_reader_fill_tls(&c->reader, c->tls) : stream_reader_fill(&c->reader, c->fd);

        if (k == 0)
                conn_close(c, "closed by the peer");
        else if (k < 0 && k != -EAGAIN)
                conn_close(c, strerror(-k));
        while (!c->closed && !s->closed) {
                const uint8_t *body;
                uint32_t tag;
                size_t len;

                k = stream_reader_next(&c->reader, &tag, &body, &len);
                if (k == 0)
                        break;
                if (k > 0)
                        k = conn_take_frame(c, tag, body, len);
                if (k < 0)
                        conn_close(c, k == -EMSGSIZE ? "a frame longer than the limit" : strerror(-k));
        }
}

/* The connection is a pipe from now on. */
static void conn_report(StreamConn *c) {
        c->reported = true;
        rpc_server_pipe_event(c->server, c->pipe_id, true);
}

static void conn_handshake(StreamConn *c) {
        int k = tls_session_handshake(c->tls);

        if (k == -EAGAIN) {
                if (conn_update_events(c) < 0)
                        conn_close(c, "cannot watch the socket");
                return;
        }
        if (k < 0) {
                char why[256];

                tls_session_strerror(c->tls, why, sizeof(why));
                log_notice("TLS handshake with %s failed: %s", c->peer, why);
                conn_close(c, NULL);
                return;
        }
        c->handshake_timer = sd_event_source_disable_unref(c->handshake_timer);
        c->handshaking = false;
        c->server->n_stream_handshakes--;
        conn_report(c);
        if (c->closed)
                return;
        if (conn_update_events(c) < 0) {
                conn_close(c, "cannot watch the socket");
                return;
        }
        /* the first request may have come with the last handshake message */
        conn_read(c);
}

static int on_handshake_timeout(sd_event_source *source, uint64_t usec, void *userdata) {
        StreamConn *c = userdata;
        (void) source, (void) usec;

        log_notice("TLS handshake with %s not done in %llu s: closing the connection.", c->peer,
                   (unsigned long long) (STREAM_HANDSHAKE_TIMEOUT_USEC / USEC_PER_SEC));
        conn_close(c, NULL);
        return 0;
}

static int conn_on_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        StreamConn *c = userdata;
        RpcServer *s = c->server;
        (void) source, (void) fd;

        c->n_ref++; /* a handler may close it */
        rpc_server_ref(s);
        if (c->handshaking)
                conn_handshake(c);
        else {
                if (revents & EPOLLOUT)
                        conn_flush(c);
                if (!c->closed && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                        conn_read(c);
        }
        conn_unref(c);
        rpc_server_unref(s);
        return 0;
}

static void describe_peer(const struct sockaddr_storage *sa, const char *scheme, char *buf, size_t size) {
        char addr[INET6_ADDRSTRLEN] = "?";

        if (sa->ss_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) sa;

                inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
                snprintf(buf, size, "%s %s:%u (task channel)", scheme, addr, ntohs(in->sin_port));
        } else if (sa->ss_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) sa;

                inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
                snprintf(buf, size, "%s [%s]:%u (task channel)", scheme, addr, ntohs(in6->sin6_port));
        } else
                snprintf(buf, size, "unknown (task channel)");
}

static int on_accept(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        RpcServer *s = userdata;
        struct sockaddr_storage sa;
        socklen_t sa_len = sizeof(sa);
        StreamConn *c;
        int cfd, one = 1;
        (void) source, (void) revents;

        cfd = accept4(fd, (struct sockaddr *) &sa, &sa_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning_errno(errno, "Failed to accept a task channel connection on %s: %m", s->url);
                return 0;
        }
        if (s->n_stream_conns >= (s->stream_tls ? STREAM_MAX_TLS_CONNS : STREAM_MAX_CONNS) ||
            (s->stream_tls && s->n_stream_handshakes >= STREAM_MAX_HANDSHAKES)) {
                log_warning("Task channel of %s has %u connections (%u in a TLS handshake), refusing another.",
                            s->url, s->n_stream_conns, s->n_stream_handshakes);
                close(cfd);
                return 0;
        }
        (void) setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c = calloc(1, sizeof(*c));
        if (!c) {
                close(cfd);
                return 0;
        }
        c->server = s;
        c->n_ref = 1;
        c->fd = cfd;
        stream_reader_init(&c->reader, s->max_request_bytes);
        describe_peer(&sa, s->stream_tls ? "tls" : "tcp", c->peer, sizeof(c->peer));
        s->stream_next_pipe = s->stream_next_pipe + 1 >= STREAM_PIPE_ID_BASE ? 1 : s->stream_next_pipe + 1;
        c->pipe_id = STREAM_PIPE_ID_BASE | s->stream_next_pipe;
        c->next = s->stream_conns;
        if (c->next)
                c->next->prev = c;
        s->stream_conns = c;
        s->n_stream_conns++;
        /* from here on, conn_close() undoes all of it */
        if (sd_event_add_io(s->event, &c->io, cfd, EPOLLIN, conn_on_io, c) < 0) {
                log_warning("Failed to watch the connection from %s, closing it.", c->peer);
                conn_close(c, NULL);
                return 0;
        }
        if (!s->stream_tls) {
                conn_report(c);
                return 0;
        }
        if (tls_session_new(s->stream_tls, cfd, NULL, &c->tls) < 0 ||
            sd_event_add_time_relative(s->event, &c->handshake_timer, CLOCK_MONOTONIC,
                                       STREAM_HANDSHAKE_TIMEOUT_USEC, 0, on_handshake_timeout, c) < 0) {
                log_warning("No memory for a TLS session with %s, closing it.", c->peer);
                conn_close(c, NULL);
                return 0;
        }
        c->handshaking = true;
        s->n_stream_handshakes++;
        return 0;
}

int rpc_server_listen_stream(RpcServer *s, const TlsSettings *tls, uint16_t *ret_port, const char **ret_failed) {
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
        struct addrinfo *ai = NULL;
        struct sockaddr_storage bound;
        socklen_t bound_len = sizeof(bound);
        TlsContext *ctx = NULL;
        nng_url *u = NULL;
        int fd = -1, one = 1, k;

        if (!s || !ret_port)
                return -EINVAL;
        if (s->stream_fd >= 0)
                return -EBUSY;
        if (strncmp(s->url, "tcp://", 6) != 0 && !tls_url(s->url))
                return -EOPNOTSUPP;
        if (tls_url(s->url)) {
                if (!tls_settings_can_listen(tls))
                        return -ENOKEY;
                k = tls_context_new_server(tls->cert_file, tls->key_file, &ctx, ret_failed);
                if (k < 0)
                        return k;
        }
        k = nng_errno(nng_url_parse(&u, s->url));
        if (k < 0) {
                tls_context_free(ctx);
                return k;
        }
        /* the nng listener's host; "", "*" and "0.0.0.0": every address */
        k = getaddrinfo(isempty(u->u_hostname) || streq(u->u_hostname, "*") ? NULL : u->u_hostname, "0", &hints,
                        &ai);
        nng_url_free(u);
        if (k != 0) {
                k = k == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
                tls_context_free(ctx);
                return k;
        }

        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                k = -errno;
                freeaddrinfo(ai);
                tls_context_free(ctx);
                return k;
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        k = bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0 ||
                            getsockname(fd, (struct sockaddr *) &bound, &bound_len) < 0
                    ? -errno
                    : 0;
        freeaddrinfo(ai);
        if (k >= 0)
                k = sd_event_add_io(s->event, &s->stream_accept, fd, EPOLLIN, on_accept, s);
        if (k < 0) {
                close(fd);
                tls_context_free(ctx);
                return k;
        }
        s->stream_fd = fd;
        s->stream_tls = ctx;
        s->stream_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *) &bound)->sin6_port
                                                           : ((struct sockaddr_in *) &bound)->sin_port);
        *ret_port = s->stream_port;
        return 0;
}

void rpc_server_stream_close(RpcServer *s) {
        s->stream_accept = sd_event_source_disable_unref(s->stream_accept);
        if (s->stream_fd >= 0)
                close(s->stream_fd);
        s->stream_fd = -1;
        s->stream_port = 0;
        while (s->stream_conns)
                conn_close(s->stream_conns, NULL);
        while (s->stream_requests) {
                RpcRequest *r = s->stream_requests;

                if (r->delivered && r->abandon)
                        r->abandon(r, r->abandon_userdata);
                rpc_request_release(r);
                request_finish(r);
        }
        s->stream_tls = tls_context_free(s->stream_tls);
}
