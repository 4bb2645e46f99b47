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

/* A daemon target's state for one input, and what fuzz_rpc_play() needs to
 * know of it. */
typedef struct FuzzRpcTarget {
        RpcEnvelopeHandler handler;
        void *userdata;                 /* the handler's, and the callbacks' below */
        size_t max_request_bytes;       /* the daemon's, to decode each request as it does */
        /* everything of the state a request may change, as text (freed by the caller) */
        char *(*digest)(void *userdata);
        FuzzRpcKick kick;               /* or NULL: see fuzz_rpc_call() */
        /* the daemon's work for a request goes on after its answer (a bus
         * round trip): run what is due before the state is looked at */
        bool settle;
        /* or NULL: the target's own oracles, after every request (req is
         * NULL if it did not decode) */
        void (*check)(void *userdata, const Envelope *req, const Envelope *reply);
} FuzzRpcTarget;

/* Splits data into at most FUZZ_RPC_MAX_REQUESTS requests (fuzz_split())
 * and sends them to t's handler in turn, checking what every daemon owes:
 * a request that does not decode gets the decoder's Error; an Error has a
 * negative code and a message, and leaves the digest as it was. */
#define FUZZ_RPC_MAX_REQUESTS 16
void fuzz_rpc_play(FuzzRpc *f, const uint8_t *data, size_t size, const FuzzRpcTarget *t);
