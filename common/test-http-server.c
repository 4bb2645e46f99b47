/* The HTTP server on an sd-event loop: a handler's answer reaches a real
 * client over loopback; methods other than GET/HEAD are refused; a busy
 * port moves to the next one; the connection cap holds while the loop goes
 * on serving; addresses are checked. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check-run.h"
#include "http-server.h"
#include "time-util.h"

typedef struct Client {
        uint16_t port;
        const char *request;
        char response[4096];
        atomic_bool done;
} Client;

static void handler(const char *path, HttpReply *reply, void *userdata) {
        unsigned *calls = userdata;

        (*calls)++;
        if (streq(path, "/hello")) {
                fputs("hello\n", reply->body);
                return;
        }
        reply->status = 404;
        fprintf(reply->body, "no %s\n", path);
}

static int connect_to(uint16_t port) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *) &a, sizeof(a)), 0);
        return fd;
}

static void *client_thread(void *p) {
        Client *c = p;
        int fd = connect_to(c->port);
        size_t n = 0;
        ssize_t k;

        ck_assert_int_eq(write(fd, c->request, strlen(c->request)), (ssize_t) strlen(c->request));
        while (n + 1 < sizeof(c->response) && (k = read(fd, c->response + n, sizeof(c->response) - 1 - n)) > 0)
                n += (size_t) k;
        c->response[n] = '\0';
        close(fd);
        atomic_store(&c->done, true);
        return NULL;
}

static void run_until_done(sd_event *e, Client *c) {
        usec_t deadline = now_mono_usec() + 10 * USEC_PER_SEC;

        while (!atomic_load(&c->done) && now_mono_usec() < deadline)
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        ck_assert(atomic_load(&c->done));
}

static void request(sd_event *e, uint16_t port, const char *req, char *resp, size_t size) {
        Client c = { .port = port, .request = req };
        pthread_t t;

        ck_assert_int_eq(pthread_create(&t, NULL, client_thread, &c), 0);
        run_until_done(e, &c);
        pthread_join(t, NULL);
        snprintf(resp, size, "%s", c.response);
}

START_TEST(test_get_and_404) {
        _cleanup_(http_server_freep) HttpServer *s = NULL;
        sd_event *e = NULL;
        unsigned calls = 0;
        char resp[4096];

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(http_server_new(e, &(HttpServerConfig) { .listen = "127.0.0.1:0" }, handler, &calls, &s,
                                         NULL, 0),
                         0);
        ck_assert_int_gt(http_server_port(s), 0);

        request(e, http_server_port(s), "GET /hello HTTP/1.0\r\n\r\n", resp, sizeof(resp));
        ck_assert_msg(strncmp(resp, "HTTP/1.0 200", 12) == 0 || strncmp(resp, "HTTP/1.1 200", 12) == 0, "%s", resp);
        ck_assert_ptr_nonnull(strstr(resp, "\r\n\r\nhello\n"));
        ck_assert_ptr_nonnull(strstr(resp, "Cache-Control: no-store"));

        request(e, http_server_port(s), "GET /nothing?x=1 HTTP/1.0\r\n\r\n", resp, sizeof(resp));
        ck_assert_msg(strstr(resp, " 404 ") != NULL, "%s", resp);
        ck_assert_ptr_nonnull(strstr(resp, "no /nothing\n"));

        request(e, http_server_port(s), "POST /hello HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", resp, sizeof(resp));
        ck_assert_msg(strstr(resp, " 405 ") != NULL, "%s", resp);
        ck_assert_int_eq(calls, 2);

        request(e, http_server_port(s), "this is not HTTP\r\n\r\n", resp, sizeof(resp));
        ck_assert_msg(resp[0] == '\0' || strstr(resp, " 400 ") != NULL, "%s", resp);
        ck_assert_int_eq(calls, 2);

        s = http_server_free(s);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_oversized_header) {
        _cleanup_(http_server_freep) HttpServer *s = NULL;
        _cleanup_free_ char *req = NULL;
        sd_event *e = NULL;
        unsigned calls = 0;
        char resp[4096];
        size_t n = 2 * HTTP_CONNECTION_MEMORY;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(http_server_new(e, &(HttpServerConfig) { .listen = "127.0.0.1:0" }, handler, &calls, &s,
                                         NULL, 0),
                         0);
        req = malloc(n + 64);
        ck_assert_ptr_nonnull(req);
        strcpy(req, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ");
        memset(req + strlen(req), 'a', n);
        strcpy(req + strlen("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ") + n, "\r\n\r\n");
        request(e, http_server_port(s), req, resp, sizeof(resp));
        ck_assert_msg(resp[0] == '\0' || strstr(resp, " 431 ") != NULL || strstr(resp, " 413 ") != NULL, "%s",
                      resp);
        ck_assert_int_eq(calls, 0);
        s = http_server_free(s);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_next_free_port) {
        _cleanup_(http_server_freep) HttpServer *a = NULL, *b = NULL;
        _cleanup_free_ char *url = NULL;
        sd_event *e = NULL;
        unsigned calls = 0;
        char listen[64], err[256] = "";
        uint16_t port;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(http_server_new(e, &(HttpServerConfig) { .listen = "127.0.0.1:0" }, handler, &calls, &a,
                                         NULL, 0),
                         0);
        port = http_server_port(a);
        snprintf(listen, sizeof(listen), "127.0.0.1:%u", port);
        ck_assert_int_eq(http_server_new(e, &(HttpServerConfig) { .listen = listen }, handler, &calls, &b, err,
                                         sizeof(err)),
                         -EADDRINUSE);
        ck_assert_ptr_nonnull(strstr(err, "taken"));
        if (http_server_new(e, &(HttpServerConfig) { .listen = listen, .port_tries = 21 }, handler, &calls, &b,
                            err, sizeof(err)) == 0) {
                ck_assert_int_gt(http_server_port(b), port);
                ck_assert_int_le(http_server_port(b), port + 20);
                url = http_server_url(b, NULL);
                ck_assert_ptr_nonnull(strstr(url, "http://127.0.0.1:"));
        }
        a = http_server_free(a);
        b = http_server_free(b);
        sd_event_unref(e);
}
END_TEST

/* Connections over the cap are not served, and do not stop the loop from
 * serving once one is closed; idle ones are closed by the timeout. */
START_TEST(test_connection_cap) {
        _cleanup_(http_server_freep) HttpServer *s = NULL;
        sd_event *e = NULL;
        unsigned calls = 0;
        int fds[4];
        char resp[4096];
        usec_t deadline;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(http_server_new(e,
                                         &(HttpServerConfig) {
                                                 .listen = "127.0.0.1:0", .max_connections = 4, .timeout_s = 1 },
                                         handler, &calls, &s, NULL, 0),
                         0);
        for (size_t i = 0; i < 4; i++) {
                fds[i] = connect_to(http_server_port(s));
                ck_assert_int_eq(write(fds[i], "GET /hel", 8), 8); /* a slow client */
        }
        deadline = now_mono_usec() + USEC_PER_SEC / 2;
        while (now_mono_usec() < deadline)
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        ck_assert_int_eq(http_server_connections(s), 4);

        /* the idle timeout frees the slots, and the server answers again */
        deadline = now_mono_usec() + 5 * USEC_PER_SEC;
        while (http_server_connections(s) > 0 && now_mono_usec() < deadline)
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        ck_assert_int_eq(http_server_connections(s), 0);
        request(e, http_server_port(s), "GET /hello HTTP/1.0\r\n\r\n", resp, sizeof(resp));
        ck_assert_ptr_nonnull(strstr(resp, "hello\n"));
        for (size_t i = 0; i < 4; i++)
                close(fds[i]);
        s = http_server_free(s);
        sd_event_unref(e);
}
END_TEST

START_TEST(test_listen_parse) {
        char host[64], err[256];
        uint16_t port;

        ck_assert_int_eq(http_listen_parse("127.0.0.1:8080", host, sizeof(host), &port, err, sizeof(err)), 0);
        ck_assert_str_eq(host, "127.0.0.1");
        ck_assert_int_eq(port, 8080);
        ck_assert_int_eq(http_listen_parse("[::1]:4040", host, sizeof(host), &port, err, sizeof(err)), 0);
        ck_assert_str_eq(host, "::1");
        ck_assert_int_eq(port, 4040);
        ck_assert_int_eq(http_listen_parse("localhost:0", host, sizeof(host), &port, err, sizeof(err)), 0);
        ck_assert_int_eq(http_listen_parse("127.0.0.1", host, sizeof(host), &port, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(http_listen_parse(":80", host, sizeof(host), &port, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(http_listen_parse("h:65536", host, sizeof(host), &port, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(http_listen_parse("h:-1", host, sizeof(host), &port, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(http_listen_parse("h:80x", host, sizeof(host), &port, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(http_listen_parse("a b:80", host, sizeof(host), &port, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(http_listen_parse("http://h:80", host, sizeof(host), &port, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(http_listen_parse("::1:80", host, sizeof(host), &port, err, sizeof(err)), 0);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_get_and_404,
                test_oversized_header,
                test_next_free_port,
                test_connection_cap,
                test_listen_parse,
                NULL,
        };
        const CheckOptions options = { .timeout = 30 };

        return check_run_tests("http-server", &options, tests);
}
