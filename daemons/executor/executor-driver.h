/* Blocking request/reply with the driver on a context of its own, for the
 * rare calls that a task thread makes itself (FetchLibrary), next to the
 * loop's polls on the same socket. */
#pragma once

#include <nng/nng.h>

#include "codec.h"

/* Sends req and waits up to timeout_ms in all for the answer, decoded with
 * max_bytes as the limit.  Returns 0 and the reply; the driver's Error code
 * (< 0) with the Error envelope in *ret (for its message); or another
 * negative errno (-ETIMEDOUT, -ESHUTDOWN when the socket is closed, a decode
 * error) with *ret NULL. */
int executor_driver_call_sync(nng_socket sock, Envelope *req, int timeout_ms, size_t max_bytes, Envelope **ret);
