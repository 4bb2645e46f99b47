/* The request path of a daemon, in process, for its fuzz target: the real
 * RpcServer (rpc-server.h) listening on an inproc:// URL on the target's
 * sd-event loop, and a raw nng req socket that sends the fuzz input's bytes
 * as they are — nothing is decoded or checked on the way in except by the
 * server itself.  fuzz_rpc_call() runs the loop until the answer is back.
 *
 * The handler is switched per input (fuzz_rpc_set_handler), so a target can
 * build a fresh daemon state for every input and keep the one server. */
#pragma once

#include <systemd/sd-event.h>

#include "codec.h"
#include "rpc-server.h"

typedef struct FuzzRpc FuzzRpc;

/* Called when a request is parked (delivered, not answered) and the loop
 * has nothing else to do: the target makes the daemon answer it, e.g. by
 * firing its park timer. */
typedef void (*FuzzRpcKick)(void *userdata);

int fuzz_rpc_new(sd_event *e, const char *url, size_t max_request_bytes, FuzzRpc **ret);
FuzzRpc *fuzz_rpc_free(FuzzRpc *f);
RpcServer *fuzz_rpc_server(FuzzRpc *f);
void fuzz_rpc_set_handler(FuzzRpc *f, RpcEnvelopeHandler handler, void *userdata);

/* Sends data as one request and returns its answer, decoded (or aborts the
 * process: no answer within 10 s, or an answer that is not an envelope —
 * both are findings).  The answer is freed by the caller. */
Envelope *fuzz_rpc_call(FuzzRpc *f, const void *data, size_t len, FuzzRpcKick kick, void *kick_userdata);

/* Runs the loop for what is due now (timers at 0, queued work). */
void fuzz_rpc_run_pending(FuzzRpc *f);

/* With SPARK_FUZZ_VERBOSE=1, prints "BODY -> ANSWER" on stderr: to see
 * what a corpus entry does (decoded: envelope_decode()'s result for req). */
void fuzz_rpc_trace(const Envelope *req, int decoded, const Envelope *reply);
