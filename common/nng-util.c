/* The only translation of nng error codes, and socket settings shared by
 * every nng user in the tree. */
#include <time.h>

#include "nng-tls.h"
#include "nng-util.h"

int nng_errno(int nng_rv) {
        if (nng_rv <= 0)
                return nng_rv;

        /* nng passes some system and transport errors through, tagged. */
        if (nng_rv & NNG_ESYSERR) {
                int e = nng_rv & ~NNG_ESYSERR;
                return e > 0 ? -e : -EIO;
        }
        if (nng_rv & NNG_ETRANERR)
                return -EIO;

        switch (nng_rv) {
        case NNG_EINTR:
                return -EINTR;
        case NNG_ENOMEM:
                return -ENOMEM;
        case NNG_EINVAL:
        case NNG_EADDRINVAL:
        case NNG_ENOARG:
        case NNG_EAMBIGUOUS:
        case NNG_EBADTYPE:
                return -EINVAL;
        case NNG_EBUSY:
                return -EBUSY;
        case NNG_ETIMEDOUT:
                return -ETIMEDOUT;
        case NNG_ECONNREFUSED:
                return -ECONNREFUSED;
        case NNG_ECLOSED:
                return -ESHUTDOWN;
        case NNG_EAGAIN:
                return -EAGAIN;
        case NNG_ENOTSUP:
                return -EOPNOTSUPP;
        case NNG_EADDRINUSE:
                return -EADDRINUSE;
        case NNG_ESTATE:
                return -EBADFD;
        case NNG_ENOENT:
                return -ENOENT;
        case NNG_EPROTO:
                return -EPROTO;
        case NNG_EUNREACHABLE:
                return -EHOSTUNREACH;
        case NNG_EPERM:
                return -EPERM;
        case NNG_EMSGSIZE:
                return -EMSGSIZE;
        case NNG_ECONNABORTED:
                return -ECONNABORTED;
        case NNG_ECONNRESET:
        case NNG_ECONNSHUT:
                return -ECONNRESET;
        case NNG_ECANCELED:
                return -ECANCELED;
        case NNG_ENOFILES:
                return -EMFILE;
        case NNG_ENOSPC:
                return -ENOSPC;
        case NNG_EEXIST:
                return -EEXIST;
        case NNG_EREADONLY:
                return -EROFS;
        case NNG_EWRITEONLY:
                return -EACCES;
        case NNG_ECRYPTO:
        case NNG_EPEERAUTH:
                return -EKEYREJECTED;
        default:
                return -EIO;
        }
}

int nng_util_set_recv_limit(nng_socket s, size_t max_bytes) {
        return nng_errno(nng_socket_set_size(s, NNG_OPT_RECVMAXSZ,
                                             max_bytes > 0 ? max_bytes : SPARK_MAX_MESSAGE_BYTES));
}

int nng_util_open(int (*open_fn)(nng_socket *), size_t max_bytes, nng_socket *ret) {
        nng_socket s;
        int r;

        r = nng_errno(open_fn(&s));
        if (r < 0)
                return r;
        r = nng_util_set_recv_limit(s, max_bytes);
        if (r < 0) {
                (void) nng_close(s);
                return r;
        }
        *ret = s;
        return 0;
}

int nng_util_set_reconnect(nng_socket s, int min_ms, int max_ms) {
        int r;

        if (min_ms > 0) {
                r = nng_socket_set_ms(s, NNG_OPT_RECONNMINT, min_ms);
                if (r != 0)
                        return nng_errno(r);
        }
        if (max_ms > 0) {
                r = nng_socket_set_ms(s, NNG_OPT_RECONNMAXT, MAX(max_ms, min_ms));
                if (r != 0)
                        return nng_errno(r);
        }
        return 0;
}

static int listen_with(nng_socket s, const char *url, const TlsSettings *tls,
                       int (*setup)(nng_listener, const char *, const TlsSettings *), nng_listener *ret) {
        nng_listener l;
        int r;

        r = nng_errno(nng_listener_create(&l, s, url));
        if (r < 0)
                return r;
        r = setup(l, url, tls);
        if (r >= 0)
                r = nng_errno(nng_listener_start(l, 0));
        if (r < 0) {
                (void) nng_listener_close(l);
                return r;
        }
        if (ret)
                *ret = l;
        return 0;
}

int nng_util_listen(nng_socket s, const char *url, const TlsSettings *tls, nng_listener *ret) {
        return listen_with(s, url, tls, nng_tls_setup_listener, ret);
}

int nng_util_listen_no_client_cert(nng_socket s, const char *url, const TlsSettings *tls, nng_listener *ret) {
        return listen_with(s, url, tls, nng_tls_setup_listener_no_client_cert, ret);
}

int nng_util_dial(nng_socket s, const char *url, const TlsSettings *tls, int flags, nng_dialer *ret) {
        nng_dialer d;
        int r;

        r = nng_errno(nng_dialer_create(&d, s, url));
        if (r < 0)
                return r;
        r = nng_tls_setup_dialer(d, url, tls);
        if (r >= 0)
                r = nng_errno(nng_dialer_start(d, flags));
        if (r < 0) {
                (void) nng_dialer_close(d);
                return r;
        }
        if (ret)
                *ret = d;
        return 0;
}

int nng_util_msg_from_envelope(Envelope *env, nng_msg **ret) {
        nng_msg *m;
        size_t len;
        int r;

        if (!env || !ret || env->body_case == SPARK__ENVELOPE__BODY__NOT_SET)
                return -EINVAL;

        env->version = SPARK_PROTOCOL_VERSION;
        len = spark__envelope__get_packed_size(env);
        r = nng_msg_alloc(&m, len);
        if (r != 0)
                return nng_errno(r);
        if (spark__envelope__pack(env, nng_msg_body(m)) != len) {
                nng_msg_free(m);
                return -EIO;
        }
        *ret = m;
        return 0;
}

int nng_util_msg_from_buf(const void *buf, size_t len, nng_msg **ret) {
        nng_msg *m;
        int r;

        if ((!buf && len > 0) || !ret)
                return -EINVAL;
        r = nng_msg_alloc(&m, len);
        if (r != 0)
                return nng_errno(r);
        if (len > 0)
                memcpy(nng_msg_body(m), buf, len);
        *ret = m;
        return 0;
}

int nng_util_check_url(const char *url) {
        static const char *const schemes[] = { "tcp", "tcp4", "tcp6", "ipc", "tls+tcp", "inproc" };
        nng_url *u = NULL;
        bool known = false;

        if (isempty(url))
                return -EINVAL;
        if (nng_url_parse(&u, url) != 0)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(schemes); i++)
                if (streq(u->u_scheme, schemes[i]))
                        known = true;
        nng_url_free(u);
        return known ? 0 : -EPROTONOSUPPORT;
}

uint64_t nng_util_now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

int nng_util_remaining_ms(uint64_t deadline_ms) {
        uint64_t now = nng_util_now_ms();

        if (now >= deadline_ms)
                return 0;
        return (int) MIN(deadline_ms - now, (uint64_t) INT32_MAX);
}
