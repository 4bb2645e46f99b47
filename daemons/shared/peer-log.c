/* See peer-log.h. */
#include "ids.h"
#include "log.h"
#include "peer-log.h"

static const char *valid_app_id(const char *app_id) {
        return app_id && app_id_is_valid(app_id) ? app_id : NULL;
}

static void log_refusal(RpcRequest *req, const char *app_id, const char *reason) {
        char peer[PEER_DESCRIPTION_MAX];

        rpc_request_peer_describe(req, peer, sizeof(peer));
        log_struct(LOG_WARNING,
                   LOG_FIELDS(.message_id = SPARK_MESSAGE_ROLE_REFUSED, .peer = peer,
                              .app_id = valid_app_id(app_id)),
                   "Refused %s from %s: %s", envelope_body_name(rpc_request_envelope(req)), peer, reason);
}

void daemon_role_refused(RpcServer *s, RpcRequest *req, const char *reason, void *userdata) {
        (void) s;
        (void) userdata;
        log_refusal(req, NULL, reason);
}

int daemon_refuse(RpcRequest *req, const char *app_id, const char *reason) {
        log_refusal(req, app_id, reason);
        (void) rpc_request_reply_error(req, -EPERM, "%s", reason);
        return -EPERM;
}

void daemon_audit(RpcRequest *req, const char *app_id) {
        char peer[PEER_DESCRIPTION_MAX];

        rpc_request_peer_describe(req, peer, sizeof(peer));
        log_struct(LOG_INFO, LOG_FIELDS(.peer = peer, .app_id = valid_app_id(app_id)), "%s from %s",
                   envelope_body_name(rpc_request_envelope(req)), peer);
}
