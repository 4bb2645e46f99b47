/* Seeing refused TLS handshakes.
 *
 * nng 1.5 tells no callback about a failed handshake: the connection never
 * becomes a pipe (so no pipe event), a listener just accepts the next one,
 * and a dialer retries (a blocking nng_dial() returns the error).  No peer
 * address is kept either.  What nng does keep is a statistic per listener
 * and per dialer, "auth": handshakes that failed — a peer without a
 * certificate, with one not signed by the CA or not for the host dialled,
 * or one that does not speak TLS at all.
 *
 * A TlsWatch polls those counters of every tls+tcp:// listener and dialer
 * of the process on the sd-event loop and reports increases per endpoint:
 * the first at once (within one poll), then at most once per report
 * interval with the count since the last report, so a peer retrying every
 * 100 ms does not flood the journal.
 *
 * Threading: loop thread only; the handler runs there. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "macro.h"

#define TLS_WATCH_POLL_USEC (2ULL * 1000000ULL)
#define TLS_WATCH_REPORT_USEC (10ULL * 1000000ULL)

typedef struct TlsWatch TlsWatch;

/* n handshakes failed on url since the last report.  listener: we refused
 * a peer (or it gave up on us); else our dialer's handshake failed. */
typedef void (*TlsRefusalHandler)(TlsWatch *w, const char *url, bool listener, uint64_t n, void *userdata);

/* poll_usec, report_usec: 0 means the defaults above. */
int tls_watch_new(sd_event *e, uint64_t poll_usec, uint64_t report_usec, TlsRefusalHandler handler, void *userdata,
                  TlsWatch **ret);
TlsWatch *tls_watch_free(TlsWatch *w);

/* Hands w to its event loop: it is freed with the loop, and the caller
 * must not free it any more. */
int tls_watch_set_floating(TlsWatch *w);

/* Reads the counters now (also done by the timer).  Returns the number of
 * reports made, or a negative errno. */
int tls_watch_poll(TlsWatch *w);

DEFINE_TRIVIAL_CLEANUP_FUNC(TlsWatch *, tls_watch_free);
