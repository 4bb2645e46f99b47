/* A TLS session on a non-blocking stream socket, with mbedtls 2.28 (the
 * one nng links): how the task channel is encrypted when the driver's
 * executor endpoint is tls+tcp:// (docs/DESIGN.md §4).  The server shows
 * its certificate and asks the client for none — executors hold no
 * certificate; their secret, in every request, is their proof — and the
 * client verifies the server's certificate against the CA and the host
 * name it dialled, as nng's tls+tcp:// dialer does.
 *
 * Reads go through a buffer of this file's own: mbedtls asks its input for
 * a record's header and then its body, which would be two system calls a
 * record; one recv() takes whatever has arrived instead.  Hence the rule
 * for callers: bytes may wait in the session that the socket's readiness
 * will not announce.  Keep reading while tls_session_pending() says so,
 * and read once a handshake is done (the peer's first record may have come
 * with its last handshake message).
 *
 * A client offers the session that an earlier connection of the process
 * made with the same host (tls-resume.h), and a server resumes the
 * sessions of its certificate's: an executor's channel takes up the
 * session of its nng connection to the driver without a full handshake.
 *
 * Threading: a session belongs to one thread at a time; contexts and the
 * process's random generator they draw from (nng-tls-engine.h, locked by
 * mbedtls) may be shared.  A context outlives its sessions. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct TlsContext TlsContext;
typedef struct TlsSession TlsSession;

/* A server with the certificate (chain) and key of these PEM files.  On
 * error *ret_failed names the file at fault ("certificate", "private
 * key"): -errno when it cannot be read, -EBADMSG when it does not parse,
 * -EKEYREJECTED when the key is not the certificate's. */
int tls_context_new_server(const char *cert_file, const char *key_file, TlsContext **ret, const char **ret_failed);
/* A client that trusts the certificates of ca_file (PEM); errors as above. */
int tls_context_new_client(const char *ca_file, TlsContext **ret);
TlsContext *tls_context_free(TlsContext *c);

/* A session on fd (connected or connecting; the caller keeps it and closes
 * it after freeing the session).  server_name: for a client, the name the
 * server's certificate must carry; NULL on a server. */
int tls_session_new(TlsContext *c, int fd, const char *server_name, TlsSession **ret);
/* Says close_notify if the socket takes it at once, and frees. */
TlsSession *tls_session_free(TlsSession *s);

/* Advances the handshake: 0 when it is done; -EAGAIN when it waits for the
 * socket (tls_session_wants_write() says which way); -EKEYREJECTED when the
 * server's certificate did not verify; -ECONNRESET when the peer closed;
 * -EPROTO when it broke the protocol or refused ours; another -errno from
 * the socket. */
int tls_session_handshake(TlsSession *s);
/* Plaintext of the stream: > 0 bytes, 0 at its end, -EAGAIN when nothing
 * is there yet, -EPROTO or -errno when the stream is broken. */
ssize_t tls_session_read(TlsSession *s, void *buf, size_t n);
/* Sends up to n bytes as a record: the count taken, or -EAGAIN when the
 * socket is full.  After -EAGAIN, call again with at least the bytes
 * offered before, unchanged at the front of buf: the record that holds
 * them is made already, and only its sending resumes. */
ssize_t tls_session_write(TlsSession *s, const void *buf, size_t n);
/* After -EAGAIN: whether the session waits to write rather than to read. */
bool tls_session_wants_write(const TlsSession *s);
/* Whether received bytes wait in the session, unread. */
bool tls_session_pending(const TlsSession *s);
/* A client's handshake is done and resumed an earlier session of the
 * process (tls-resume.h) rather than made a new one. */
bool tls_session_resumed(const TlsSession *s);
/* What went wrong last, in words (the certificate's faults when it did
 * not verify). */
void tls_session_strerror(const TlsSession *s, char *buf, size_t size);
