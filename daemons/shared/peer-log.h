/* Logging who asked (docs/security.md): the refusals of the role checks
 * with MESSAGE_ID=SPARK_MESSAGE_ROLE_REFUSED, and the audit trail of the
 * requests that change state, both with SPARK_PEER=. */
#pragma once

#include "rpc-server.h"

/* Room for rpc_request_peer_describe(): a subject, or an address. */
#define PEER_DESCRIPTION_MAX (PEER_SUBJECT_MAX + 64)

/* An RpcRefusedHandler: logs the refusal with the peer's identity. */
void daemon_role_refused(RpcServer *s, RpcRequest *req, const char *reason, void *userdata);

/* Logs and answers a refusal decided by a handler; returns -EPERM. */
int daemon_refuse(RpcRequest *req, const char *app_id, const char *reason);

/* Logs req (which changes state) with SPARK_PEER= and, if valid, app_id. */
void daemon_audit(RpcRequest *req, const char *app_id);
