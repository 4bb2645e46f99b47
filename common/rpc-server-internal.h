/* The insides of an RpcServer, shared by its nng side (rpc-server.c) and
 * its task channel (rpc-server-stream.c).  Loop-thread rules as in
 * rpc-server.h. */
#pragma once

#include <stdatomic.h>

#include <nng/nng.h>

#include "hashmap.h"
#include "local-peer.h"
#include "loop-queue.h"
#include "peer-proof.h"
#include "rpc-server.h"
#include "tls-session.h"

typedef struct StreamConn StreamConn;

#define RPC_SERVER_MAX_CONTEXTS 4096u
/* Pipes whose removal was reported recently; a request from one of them
 * that was still queued is dropped instead of delivered. */
#define REMOVED_PIPES_RING 64u

typedef enum RpcContextState {
        RPC_CONTEXT_IDLE,       /* not started, or stopped by close */
        RPC_CONTEXT_RECV,       /* nng: waiting for a request */
        RPC_CONTEXT_WAIT_REPLY, /* loop: queued, in the handler, or parked */
        RPC_CONTEXT_SEND,       /* nng: sending the answer */
        _RPC_CONTEXT_STATE_MAX,
        _RPC_CONTEXT_STATE_INVALID = -EINVAL,
} RpcContextState;

struct RpcRequest {
        RpcServer *server;
        nng_ctx ctx;
        nng_aio *aio;
        RpcContextState state;
        LoopQueueItem item;

        /* Owned by the loop while in WAIT_REPLY. */
        nng_msg *msg;
        uint32_t pipe_id;
        Envelope *env;
        bool delivered;
        bool in_handler;  /* rpc_request_deliver() is running its handler */
        RpcAbandonHandler abandon;
        void *abandon_userdata;

        /* A request that came on a task channel connection instead
         * (rpc-server-stream.c): allocated for it, freed once answered;
         * ctx, aio, state, item and msg are unused. */
        StreamConn *conn;
        uint32_t tag;
        void *body;
        size_t body_len;
        RpcRequest *stream_next, *stream_prev; /* the server's unanswered stream requests */
};

/* A connection whose role is proven, or on a plaintext listener the local
 * user behind it (loop-owned; dropped with the pipe). */
typedef struct PeerRecord {
        char key[12]; /* the pipe id in decimal: the map's key */
        PeerIdentity id;
        LocalPeerKind local_kind; /* plaintext: who connected (local-peer.h) */
        uid_t local_uid;          /* ... if LOCAL_PEER_UID */
} PeerRecord;

typedef struct PipeEvent {
        LoopQueueItem item;
        RpcServer *server;
        uint32_t pipe_id;
        bool added;
} PipeEvent;

struct RpcServer {
        unsigned n_ref;
        char *url;
        nng_socket sock;
        bool sock_open;
        LoopQueue *queue;

        RpcRequest *requests;
        unsigned n_requests;
        size_t max_request_bytes;

        RpcHandler raw_handler;
        RpcEnvelopeHandler envelope_handler;
        void *userdata;
        RpcPipeHandler pipe_handler;
        void *pipe_userdata;

        atomic_bool closing;      /* read by nng threads */
        atomic_uint_fast64_t pipe_events_lost;
        bool closed;

        uint32_t removed_pipes[REMOVED_PIPES_RING];
        unsigned removed_next;

        /* Roles (docs/security.md); loop-owned. */
        char *ca_file;            /* of a tls+tcp:// listener */
        RpcRoleCheck role_check;
        RpcRefusedHandler refused;
        void *role_userdata;
        PeerVerifier *verifier;
        PeerNonces *nonces;
        Hashmap *peers;           /* pipe id → PeerRecord */

        RpcServerStats stats;
        PromHistogram handle_time;

        /* The task channel (rpc-server-stream.c); loop-owned. */
        sd_event *event;
        int stream_fd;               /* the listening socket, -1: none */
        uint16_t stream_port;        /* its port */
        TlsContext *stream_tls;      /* of a tls+tcp:// server; else NULL */
        unsigned n_stream_handshakes;
        sd_event_source *stream_accept;
        StreamConn *stream_conns;    /* open ones */
        unsigned n_stream_conns;
        uint32_t stream_next_pipe;
        RpcRequest *stream_requests; /* delivered, not answered yet */
};


/* rpc-server.c, for the task channel */
void rpc_server_ref(RpcServer *s);
/* The request leaves the loop's hands: what it holds is freed. */
void rpc_request_release(RpcRequest *r);
void rpc_server_unref(RpcServer *s);
/* Hands a received request to the handler (checks, stats, the answer owed
 * when the handler fails). */
void rpc_request_deliver(RpcServer *s, RpcRequest *r);
/* A connection came or went: the pipe handler, and on removal the peer
 * record dropped. */
void rpc_server_pipe_event(RpcServer *s, uint32_t pipe_id, bool added);

/* rpc-server-stream.c */
/* Sends m (taken) as the answer of released stream request r, and frees r
 * (unless its handler is still running: rpc_request_deliver() frees it). */
void rpc_stream_request_answer(RpcRequest *r, nng_msg *m);
/* The same without an answer; its connection is closed, since its peer
 * would wait for the answer in vain. */
void rpc_stream_request_drop(RpcRequest *r);
void rpc_stream_request_free(RpcRequest *r);
/* "tcp ADDR:PORT (task channel)". */
const char *rpc_stream_request_peer(const RpcRequest *r);
/* Who is at the other end of r's connection (local-peer.h). */
int rpc_stream_request_local_peer(const RpcRequest *r, LocalPeerKind *kind, uid_t *uid);
/* At the server's close: every connection closed, each unanswered request
 * abandoned and freed. */
void rpc_server_stream_close(RpcServer *s);
