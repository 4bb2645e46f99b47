/* See local-peer.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "local-peer.h"
#include "macro.h"
#include "nng-util.h"

/* ::ffff:a.b.c.d, an IPv4 peer of an IPv6 listener: its socket is an IPv4
 * one, listed under AF_INET. */
static bool v4_mapped(const nng_sockaddr *sa, uint32_t *v4) {
        static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

        if (sa->s_family != NNG_AF_INET6 || memcmp(sa->s_in6.sa_addr, prefix, sizeof(prefix)) != 0)
                return false;
        memcpy(v4, sa->s_in6.sa_addr + 12, sizeof(*v4));
        return true;
}

static bool sockaddr_is_loopback(const nng_sockaddr *sa) {
        static const uint8_t v6_loopback[16] = { [15] = 1 };
        uint32_t v4;

        if (v4_mapped(sa, &v4))
                return (ntohl(v4) >> 24) == 127;
        switch (sa->s_family) {
        case NNG_AF_INET:
                return (ntohl(sa->s_in.sa_addr) >> 24) == 127;
        case NNG_AF_INET6:
                return memcmp(sa->s_in6.sa_addr, v6_loopback, sizeof(v6_loopback)) == 0;
        default:
                return false;
        }
}

/* The sock_diag request for one TCP socket, found by its own address
 * (src, sport) and its peer's (dst, dport): for the connecting socket, its
 * own address is what our side calls the remote one. */
static int fill_request(struct inet_diag_req_v2 *req, const nng_sockaddr *remote, const nng_sockaddr *local) {
        if (remote->s_family != local->s_family)
                return -EAFNOSUPPORT;
        *req = (struct inet_diag_req_v2) {
                .sdiag_protocol = IPPROTO_TCP,
                .idiag_states = UINT32_MAX,
                .id.idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE },
        };
        switch (remote->s_family) {
        case NNG_AF_INET:
                req->sdiag_family = AF_INET;
                req->id.idiag_sport = remote->s_in.sa_port;
                req->id.idiag_dport = local->s_in.sa_port;
                req->id.idiag_src[0] = remote->s_in.sa_addr;
                req->id.idiag_dst[0] = local->s_in.sa_addr;
                return 0;
        case NNG_AF_INET6:
                if (v4_mapped(remote, &req->id.idiag_src[0]) && v4_mapped(local, &req->id.idiag_dst[0])) {
                        req->sdiag_family = AF_INET;
                        req->id.idiag_sport = remote->s_in6.sa_port;
                        req->id.idiag_dport = local->s_in6.sa_port;
                        return 0;
                }
                req->sdiag_family = AF_INET6;
                req->id.idiag_sport = remote->s_in6.sa_port;
                req->id.idiag_dport = local->s_in6.sa_port;
                memcpy(req->id.idiag_src, remote->s_in6.sa_addr, sizeof(req->id.idiag_src));
                memcpy(req->id.idiag_dst, local->s_in6.sa_addr, sizeof(req->id.idiag_dst));
                return 0;
        default:
                return -EAFNOSUPPORT;
        }
}

int local_peer_tcp_uid(const nng_sockaddr *remote, const nng_sockaddr *local, uid_t *ret) {
        struct {
                struct nlmsghdr nlh;
                struct inet_diag_req_v2 req;
        } msg = {
                .nlh = {
                        .nlmsg_len = sizeof(msg),
                        .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                        .nlmsg_flags = NLM_F_REQUEST,
                        .nlmsg_seq = 1,
                },
        };
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        /* one inet_diag_msg, or an nlmsgerr; room for either and attributes */
        union {
                struct nlmsghdr nlh;
                uint8_t bytes[1024];
        } buf;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;
        int r;

        if (!remote || !local || !ret)
                return -EINVAL;
        r = fill_request(&msg.req, remote, local);
        if (r < 0)
                return r;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (fd < 0)
                return -errno;
        if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0)
                return -errno;
        n = recv(fd, &buf, sizeof(buf), 0);
        if (n < 0)
                return -errno;
        /* Trust nothing of the reply's lengths beyond what arrived. */
        if ((size_t) n < sizeof(struct nlmsghdr) || buf.nlh.nlmsg_len > (size_t) n ||
            buf.nlh.nlmsg_len < sizeof(struct nlmsghdr))
                return -EBADMSG;
        if (buf.nlh.nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(&buf.nlh);

                if (buf.nlh.nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                        return -EBADMSG;
                return e->error < 0 ? e->error : -EPROTO;
        }
        if (buf.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
            buf.nlh.nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
                return -EBADMSG;
        *ret = (uid_t) ((const struct inet_diag_msg *) NLMSG_DATA(&buf.nlh))->idiag_uid;
        return 0;
}

/* A TCP peer: the owner of its socket if it is on this host. */
static int local_peer_of_tcp(const nng_sockaddr *remote, const nng_sockaddr *local, LocalPeerKind *kind, uid_t *uid) {
        uid_t u;
        int r;

        r = local_peer_tcp_uid(remote, local, &u);
        if (r == -ENOENT && !sockaddr_is_loopback(remote)) {
                /* no socket of this host's: the peer is elsewhere */
                *kind = LOCAL_PEER_REMOTE;
                return 0;
        }
        if (r < 0)
                return r;
        *kind = LOCAL_PEER_UID;
        *uid = u;
        return 0;
}

static int sockaddr_to_nng(const struct sockaddr_storage *ss, nng_sockaddr *ret) {
        *ret = (nng_sockaddr) {};
        switch (ss->ss_family) {
        case AF_INET: {
                const struct sockaddr_in *in = (const struct sockaddr_in *) ss;

                ret->s_in.sa_family = NNG_AF_INET;
                ret->s_in.sa_port = in->sin_port;
                ret->s_in.sa_addr = in->sin_addr.s_addr;
                return 0;
        }
        case AF_INET6: {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) ss;

                ret->s_in6.sa_family = NNG_AF_INET6;
                ret->s_in6.sa_port = in6->sin6_port;
                memcpy(ret->s_in6.sa_addr, &in6->sin6_addr, sizeof(ret->s_in6.sa_addr));
                ret->s_in6.sa_scope = in6->sin6_scope_id;
                return 0;
        }
        default:
                return -EAFNOSUPPORT;
        }
}

int local_peer_of_socket(int fd, LocalPeerKind *kind, uid_t *uid) {
        struct sockaddr_storage rss, lss;
        socklen_t rlen = sizeof(rss), llen = sizeof(lss);
        nng_sockaddr remote, local;
        int r;

        if (fd < 0 || !kind || !uid)
                return -EINVAL;
        if (getpeername(fd, (struct sockaddr *) &rss, &rlen) < 0 || getsockname(fd, (struct sockaddr *) &lss, &llen) < 0)
                return -errno;
        r = sockaddr_to_nng(&rss, &remote);
        if (r >= 0)
                r = sockaddr_to_nng(&lss, &local);
        if (r < 0)
                return r;
        return local_peer_of_tcp(&remote, &local, kind, uid);
}

int local_peer_of_pipe(nng_pipe p, LocalPeerKind *kind, uid_t *uid) {
        nng_sockaddr remote, local;
        uint64_t peer_uid;
        int r;

        if (!kind || !uid)
                return -EINVAL;
        r = nng_errno(nng_pipe_get_addr(p, NNG_OPT_REMADDR, &remote));
        if (r < 0)
                return r;
        switch (remote.s_family) {
        case NNG_AF_IPC:
                r = nng_errno(nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &peer_uid));
                if (r < 0)
                        return r;
                *kind = LOCAL_PEER_UID;
                *uid = (uid_t) peer_uid;
                return 0;
        case NNG_AF_INPROC:
                /* this very process */
                *kind = LOCAL_PEER_UID;
                *uid = geteuid();
                return 0;
        case NNG_AF_INET:
        case NNG_AF_INET6:
                r = nng_errno(nng_pipe_get_addr(p, NNG_OPT_LOCADDR, &local));
                if (r < 0)
                        return r;
                return local_peer_of_tcp(&remote, &local, kind, uid);
        default:
                *kind = LOCAL_PEER_REMOTE;
                return 0;
        }
}

bool local_peer_uid_is_dynamic(uid_t uid) {
        return uid >= LOCAL_PEER_DYNAMIC_UID_MIN && uid <= LOCAL_PEER_DYNAMIC_UID_MAX;
}
