/* local-peer.h against the kernel's real socket table: the owner of the
 * connecting end of a loopback TCP connection, seen from the accepting
 * end; a connection that does not exist; the dynamic-user range. */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-run.h"
#include "local-peer.h"
#include "macro.h"

static nng_sockaddr to_nng(const struct sockaddr_in *sa) {
        nng_sockaddr n = { .s_in = { .sa_family = NNG_AF_INET, .sa_port = sa->sin_port,
                                     .sa_addr = sa->sin_addr.s_addr } };
        return n;
}

/* A loopback connection: *server the accepted end, *client the other. */
static void connect_loopback(int *listener, int *client, int *server) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);

        *listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(*listener, 0);
        ck_assert_int_eq(bind(*listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(*listener, 1), 0);
        ck_assert_int_eq(getsockname(*listener, (struct sockaddr *) &sa, &len), 0);
        *client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(*client, 0);
        ck_assert_int_eq(connect(*client, (struct sockaddr *) &sa, sizeof(sa)), 0);
        *server = accept4(*listener, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(*server, 0);
}

START_TEST(test_tcp_uid_of_the_connecting_end) {
        _cleanup_close_ int listener = -EBADF, client = -EBADF, server = -EBADF;
        struct sockaddr_in local, remote;
        socklen_t len = sizeof(local);
        nng_sockaddr l, r;
        uid_t uid = (uid_t) -1;

        connect_loopback(&listener, &client, &server);
        ck_assert_int_eq(getsockname(server, (struct sockaddr *) &local, &len), 0);
        len = sizeof(remote);
        ck_assert_int_eq(getpeername(server, (struct sockaddr *) &remote, &len), 0);
        l = to_nng(&local);
        r = to_nng(&remote);
        ck_assert_int_eq(local_peer_tcp_uid(&r, &l, &uid), 0);
        ck_assert_int_eq(uid, geteuid());

        /* no socket has these four addresses */
        r.s_in.sa_port = htons(ntohs(r.s_in.sa_port) == 1 ? 2 : 1);
        ck_assert_int_eq(local_peer_tcp_uid(&r, &l, &uid), -ENOENT);
        /* mixed families: refused before any lookup */
        r.s_in6.sa_family = NNG_AF_INET6;
        ck_assert_int_eq(local_peer_tcp_uid(&r, &l, &uid), -EAFNOSUPPORT);
}
END_TEST

/* The accepted socket itself, as the task channel asks (its clients' local
 * user); as root, also a client whose socket a job's dynamic user made. */
START_TEST(test_of_socket) {
        _cleanup_close_ int listener = -EBADF, client = -EBADF, server = -EBADF, not_socket = -EBADF;
        const uid_t task_uid = LOCAL_PEER_DYNAMIC_UID_MIN + 7;
        struct sockaddr_in sa;
        socklen_t len = sizeof(sa);
        LocalPeerKind kind = LOCAL_PEER_REMOTE;
        uid_t uid = (uid_t) -1;
        int status;
        pid_t pid;

        connect_loopback(&listener, &client, &server);
        ck_assert_int_eq(local_peer_of_socket(server, &kind, &uid), 0);
        ck_assert_int_eq(kind, LOCAL_PEER_UID);
        ck_assert_int_eq(uid, geteuid());
        ck_assert_int_eq(local_peer_of_socket(-1, &kind, &uid), -EINVAL);
        ck_assert_int_eq(local_peer_of_socket(listener, &kind, &uid), -ENOTCONN);
        not_socket = open("/dev/null", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(not_socket, 0);
        ck_assert_int_eq(local_peer_of_socket(not_socket, &kind, &uid), -ENOTSOCK);

        if (geteuid() != 0)
                return;
        /* the socket's owner is whoever made it: a child as the task's user */
        ck_assert_int_eq(getsockname(listener, (struct sockaddr *) &sa, &len), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd;

                if (setresgid(task_uid, task_uid, task_uid) < 0 || setresuid(task_uid, task_uid, task_uid) < 0)
                        _exit(2);
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                        _exit(3);
                (void) read(fd, &status, 1); /* until the parent has looked */
                _exit(0);
        }
        close(server);
        server = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(server, 0);
        ck_assert_int_eq(local_peer_of_socket(server, &kind, &uid), 0);
        ck_assert_int_eq(kind, LOCAL_PEER_UID);
        ck_assert_int_eq(uid, task_uid);
        ck_assert(local_peer_uid_is_dynamic(uid));
        close(server);
        server = -EBADF;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* An IPv4 client of an IPv6 listener: both addresses come as ::ffff:a.b.c.d,
 * while the client's socket is an IPv4 one. */
START_TEST(test_tcp_uid_v4_mapped) {
        _cleanup_close_ int listener = -EBADF, client = -EBADF, server = -EBADF;
        struct sockaddr_in6 any = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT }, local, remote;
        struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(any);
        nng_sockaddr l = { .s_in6.sa_family = NNG_AF_INET6 }, r = { .s_in6.sa_family = NNG_AF_INET6 };
        int off = 0;
        uid_t uid = (uid_t) -1;

        listener = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listener < 0)
                return; /* no IPv6 here */
        ck_assert_int_eq(setsockopt(listener, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)), 0);
        ck_assert_int_eq(bind(listener, (struct sockaddr *) &any, sizeof(any)), 0);
        ck_assert_int_eq(listen(listener, 1), 0);
        ck_assert_int_eq(getsockname(listener, (struct sockaddr *) &any, &len), 0);
        to.sin_port = any.sin6_port;
        client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(client, 0);
        ck_assert_int_eq(connect(client, (struct sockaddr *) &to, sizeof(to)), 0);
        server = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(server, 0);
        len = sizeof(local);
        ck_assert_int_eq(getsockname(server, (struct sockaddr *) &local, &len), 0);
        len = sizeof(remote);
        ck_assert_int_eq(getpeername(server, (struct sockaddr *) &remote, &len), 0);
        ck_assert(IN6_IS_ADDR_V4MAPPED(&remote.sin6_addr));
        l.s_in6.sa_port = local.sin6_port;
        memcpy(l.s_in6.sa_addr, &local.sin6_addr, 16);
        r.s_in6.sa_port = remote.sin6_port;
        memcpy(r.s_in6.sa_addr, &remote.sin6_addr, 16);
        ck_assert_int_eq(local_peer_tcp_uid(&r, &l, &uid), 0);
        ck_assert_int_eq(uid, geteuid());
}
END_TEST

START_TEST(test_dynamic_range) {
        ck_assert(!local_peer_uid_is_dynamic(0));
        ck_assert(!local_peer_uid_is_dynamic(1000));
        ck_assert(!local_peer_uid_is_dynamic(LOCAL_PEER_DYNAMIC_UID_MIN - 1));
        ck_assert(local_peer_uid_is_dynamic(LOCAL_PEER_DYNAMIC_UID_MIN));
        ck_assert(local_peer_uid_is_dynamic(LOCAL_PEER_DYNAMIC_UID_MAX));
        ck_assert(!local_peer_uid_is_dynamic(LOCAL_PEER_DYNAMIC_UID_MAX + 1));
        ck_assert(!local_peer_uid_is_dynamic(65534)); /* nobody */
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_tcp_uid_of_the_connecting_end,
                test_tcp_uid_v4_mapped,
                test_of_socket,
                test_dynamic_range,
                NULL,
        };

        return check_run_tests("local-peer", NULL, tests);
}
