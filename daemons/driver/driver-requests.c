/* The driver's request endpoints: listen, for executors (register, poll,
 * fetch a library) and clients (submit, status, results, cancel); and
 * executor_listen, when set, for executors only. */
#include "driver-executors.h"
#include "driver-jobs.h"
#include "log.h"
#include "peer-log.h"

/* Who may send the driver what (docs/security.md), on a TLS listener.  The
 * executors' requests need no role: an executor holds no certificate and
 * proves itself otherwise (its registration is checked against the
 * master's launches). */
uint32_t driver_required_roles(const Envelope *env, void *userdata) {
        (void) userdata;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_POLL:
        case SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR:
        case SPARK__ENVELOPE__BODY_FETCH_LIBRARY:
                return PEER_ROLES_NONE;
        case SPARK__ENVELOPE__BODY_SUBMIT_JOB:
        case SPARK__ENVELOPE__BODY_CANCEL_JOB:
        case SPARK__ENVELOPE__BODY_FETCH_RESULTS:
                return PEER_ROLE_BIT(PEER_ROLE_CLIENT) | PEER_ROLE_BIT(PEER_ROLE_ADMIN);
        default:
                /* JobStatus, ListJobs, and what the driver answers EOPNOTSUPP */
                return PEER_ROLES_ANY;
        }
}

int driver_handle_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Driver *d = userdata;
        (void) s;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_POLL:
                return driver_poll(d, req, env->poll);
        case SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR:
                return driver_register_executor(d, req, env->register_executor);
        case SPARK__ENVELOPE__BODY_FETCH_LIBRARY:
                return driver_fetch_library(d, req, env->fetch_library->hash);
        case SPARK__ENVELOPE__BODY_SUBMIT_JOB:
                /* audited by the job's "submitted" line, one line a job */
                return driver_submit_job(d, req, env->submit_job);
        case SPARK__ENVELOPE__BODY_JOB_STATUS:
                return driver_job_status(d, req, env->job_status->job_id);
        case SPARK__ENVELOPE__BODY_LIST_JOBS:
                return driver_list_jobs(d, req);
        case SPARK__ENVELOPE__BODY_FETCH_RESULTS:
                return driver_fetch_results(d, req, env->fetch_results);
        case SPARK__ENVELOPE__BODY_CANCEL_JOB:
                daemon_audit(req, NULL);
                return driver_cancel_job(d, req, env->cancel_job->job_id);
        default:
                return rpc_request_reply_error(req, -EOPNOTSUPP, "the driver does not handle %s requests",
                                               envelope_body_name(env));
        }
}

/* executor_listen asks for no certificate (executors have none): anyone
 * who reaches it may send to it, so it takes what an executor sends and
 * nothing else.  Registrations and polls must carry the executor's secret
 * (driver-secret.c). */
int driver_handle_executor_request(RpcServer *s, RpcRequest *req, const Envelope *env, void *userdata) {
        Driver *d = userdata;

        switch (env->body_case) {
        case SPARK__ENVELOPE__BODY_POLL:
        case SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR:
        case SPARK__ENVELOPE__BODY_FETCH_LIBRARY:
                return driver_handle_request(s, req, env, userdata);
        default:
                log_struct(LOG_WARNING, LOG_FIELDS(.app_id = d->app_id, .message_id = SPARK_MESSAGE_EXECUTOR_REFUSED),
                           "Refused a %s request on the executors' endpoint %s: executors send no such request",
                           envelope_body_name(env), d->config.driver.executor_listen);
                return rpc_request_reply_error(req, -EPERM,
                                               "%s is not an executor's request: the executors' endpoint takes "
                                               "registrations, polls and library fetches only",
                                               envelope_body_name(env));
        }
}
