/* Which local user is at the other end of a plaintext connection.
 *
 * On a plaintext endpoint there is no certificate, so no role: anyone who
 * can connect may ask anything (docs/security.md).  That is the single-host
 * set-up, on loopback — where the tasks of every job run too.  A task runs
 * as its application's dynamic user (worker.executor_user = "dynamic"), a
 * uid that systemd hands out from a range of its own, so the daemons can
 * tell a job from an operator by the uid of the connecting socket:
 *   - ipc://: the kernel's peer credentials (SO_PEERCRED, through nng);
 *   - tcp:// on loopback: the connecting socket's owner, which the kernel's
 *     socket table gives for the connection's four addresses
 *     (NETLINK_SOCK_DIAG, as ss(8) reads it).
 * A peer on another host has no local uid (LOCAL_PEER_REMOTE). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <nng/nng.h>

/* systemd's range for DynamicUser= (systemd.exec(5), "DynamicUser="). */
#define LOCAL_PEER_DYNAMIC_UID_MIN ((uid_t) 61184)
#define LOCAL_PEER_DYNAMIC_UID_MAX ((uid_t) 65519)

typedef enum LocalPeerKind {
        LOCAL_PEER_UID,    /* a local process: uid set */
        LOCAL_PEER_REMOTE, /* another host: no local user to speak of */
} LocalPeerKind;

/* The owner of the socket at the other end of a TCP connection from
 * remote to local, both on this host (loopback).  -ENOENT: no such
 * connection (gone already); -EAFNOSUPPORT: not TCP/IP; other < 0: the
 * kernel's socket table could not be read. */
int local_peer_tcp_uid(const nng_sockaddr *remote, const nng_sockaddr *local, uid_t *ret);

/* Who is at the other end of pipe p: *kind, and *uid for LOCAL_PEER_UID.
 * < 0 when a local peer's uid cannot be found. */
int local_peer_of_pipe(nng_pipe p, LocalPeerKind *kind, uid_t *uid);

/* The same for a TCP socket of ours (the task channel's, whose peer
 * connected to us).  -EAFNOSUPPORT: not TCP/IP. */
int local_peer_of_socket(int fd, LocalPeerKind *kind, uid_t *uid);

/* A uid from systemd's dynamic range: the user of a job's tasks. */
bool local_peer_uid_is_dynamic(uid_t uid);
