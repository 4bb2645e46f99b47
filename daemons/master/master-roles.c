/* Who may send the master what (docs/security.md).  Enforced on a TLS
 * listener only, by rpc-server from the table below; a plaintext listener
 * (loopback, or cluster.insecure) lets everyone do everything.  An app's own
 * requests are further bound to the driver that registered it: its
 * certificate subject, kept in memory (a master restarted from its state
 * binds an app again when its driver registers once more). */
#include "master.h"
#include "peer-log.h"

uint32_t master_required_roles(const Envelope *env, void *userdata) {
        (void) userdata;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_REGISTER_WORKER:
        case SPARK__ENVELOPE__BODY_HEARTBEAT:
        case SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED:
                return PEER_ROLE_BIT(PEER_ROLE_WORKER);
        case SPARK__ENVELOPE__BODY_REGISTER_APPLICATION:
        case SPARK__ENVELOPE__BODY_UNREGISTER_APPLICATION:
        case SPARK__ENVELOPE__BODY_REQUEST_EXECUTORS:
        case SPARK__ENVELOPE__BODY_RELEASE_EXECUTORS:
        case SPARK__ENVELOPE__BODY_EXECUTOR_LOAD:
                return PEER_ROLE_BIT(PEER_ROLE_DRIVER);
        case SPARK__ENVELOPE__BODY_KILL_APPLICATION:
        case SPARK__ENVELOPE__BODY_DRAIN_WORKER:
                return PEER_ROLE_BIT(PEER_ROLE_ADMIN);
        case SPARK__ENVELOPE__BODY_KILL_EXECUTOR:
                /* a driver: of its own app only (master_check_app_driver) */
                return PEER_ROLE_BIT(PEER_ROLE_ADMIN) | PEER_ROLE_BIT(PEER_ROLE_DRIVER);
        default:
                /* ClusterState, and what the master answers EOPNOTSUPP */
                return PEER_ROLES_ANY;
        }
}

int master_check_app_driver(Master *m, RpcRequest *req, const char *app_id) {
        const PeerIdentity *peer = rpc_request_peer(req);
        char reason[3 * PEER_SUBJECT_MAX];
        App *a;

        if (!peer->tls || peer->role != PEER_ROLE_DRIVER)
                return 0; /* plaintext, or an admin */
        a = cluster_app(m->cluster, app_id);
        if (!a || !a->driver_subject || streq(a->driver_subject, peer->subject))
                return 0;
        snprintf(reason, sizeof(reason), "application %s belongs to another driver (%s); you are %s", app_id,
                 a->driver_subject, peer->subject);
        return daemon_refuse(req, app_id, reason);
}

int master_bind_app_driver(Master *m, RpcRequest *req, App *a) {
        const PeerIdentity *peer = rpc_request_peer(req);
        (void) m;

        if (!peer->tls || peer->role < 0)
                return 0;
        if (!a->driver_subject) {
                a->driver_subject = strdup(peer->subject);
                return a->driver_subject ? 0 : -ENOMEM;
        }
        if (streq(a->driver_subject, peer->subject))
                return 0;
        return daemon_refuse(req, a->id, "the application is registered by another driver");
}

void master_audit(Master *m, RpcRequest *req, const Envelope *env) {
        const char *app_id;
        (void) m;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_REGISTER_WORKER:
        case SPARK__ENVELOPE__BODY_DRAIN_WORKER:
                app_id = NULL;
                break;
        case SPARK__ENVELOPE__BODY_EXECUTOR_STATE_CHANGED:
                app_id = env->executor_state_changed->app_id;
                break;
        case SPARK__ENVELOPE__BODY_REGISTER_APPLICATION:
                app_id = env->register_application->app_id;
                break;
        case SPARK__ENVELOPE__BODY_UNREGISTER_APPLICATION:
                app_id = env->unregister_application->app_id;
                break;
        case SPARK__ENVELOPE__BODY_REQUEST_EXECUTORS:
                app_id = env->request_executors->app_id;
                break;
        case SPARK__ENVELOPE__BODY_KILL_APPLICATION:
                app_id = env->kill_application->app_id;
                break;
        case SPARK__ENVELOPE__BODY_KILL_EXECUTOR:
                app_id = env->kill_executor->app_id;
                break;
        case SPARK__ENVELOPE__BODY_RELEASE_EXECUTORS:
                app_id = env->release_executors->app_id;
                break;
        default:
                return; /* reads, and the heartbeats (one a second per worker) */
        }
        daemon_audit(req, app_id);
}
