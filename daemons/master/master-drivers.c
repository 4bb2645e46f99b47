/* Drivers that are gone.  Nothing tells the master when a driver dies
 * (killed, crashed, its host lost): its executors find out, and exit with
 * SPARK_EXIT_DRIVER_UNREACHABLE.  Replaced, they would fail to reach it
 * again, for ever, holding the app's cores.  So the master asks the driver
 * itself; a driver that does not answer within worker_timeout_ms either is
 * gone, and its application is removed (which stops its executors).  Any
 * answer, even an error, means it is there: then the executor's trouble
 * was its own. */
#include "log.h"
#include "master.h"

typedef struct DriverCheck {
        Master *master;
        char app_id[APP_ID_MAX];
        char url[512];
        RpcClient *client;
} DriverCheck;

static void on_driver_answer(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        DriverCheck *dc = userdata;
        Master *m = dc->master;
        App *a;
        (void) c;

        if (error == -ECANCELED)
                return;  /* master_drivers_free() is freeing us */
        hashmap_remove(m->driver_checks, dc->app_id);

        a = cluster_app(m->cluster, dc->app_id);
        if (a && !reply && error < 0) {
                char why[600];

                /* cluster_remove_app() logs it */
                snprintf(why, sizeof(why), "neither its executors nor the master can reach its driver at %s (%s)",
                         dc->url, strerror(-error));
                (void) cluster_remove_app(m->cluster, dc->app_id, SPARK__APP_STATE__APP_FAILED, why);
        } else if (a)
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = dc->app_id), "The driver of %s at %s answers", dc->app_id,
                           dc->url);

        dc->client = rpc_client_free(dc->client);
        free(dc);
}

void master_check_driver(Master *m, const char *app_id, int executor_id) {
        Spark__ClusterStateRequest csr = SPARK__CLUSTER_STATE_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        App *a = cluster_app(m->cluster, app_id);
        DriverCheck *dc;
        int r;

        if (!a || hashmap_get(m->driver_checks, app_id))
                return;  /* gone already, or being asked */
        dc = calloc(1, sizeof(*dc));
        if (!dc) {
                log_oom();
                return;
        }
        dc->master = m;
        snprintf(dc->app_id, sizeof(dc->app_id), "%s", a->id);
        snprintf(dc->url, sizeof(dc->url), "%s", a->driver_url);
        r = rpc_client_new(m->event, dc->url,
                           &(RpcClientConfig) { .tls = &m->tls, .queue = m->link_queue },
                           &dc->client);
        if (r >= 0) {
                /* whatever it is asked, a driver answers */
                csr.app_id = dc->app_id;
                ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &csr);
                r = rpc_client_call(dc->client, &env, (int) MAX(m->config.master.worker_timeout_ms, 1000),
                                    on_driver_answer, dc);
        }
        if (r >= 0)
                r = hashmap_put(m->driver_checks, dc->app_id, dc);
        if (r < 0) {
                log_struct_errno(LOG_WARNING, r, LOG_FIELDS(.app_id = app_id),
                                 "Failed to ask the driver of %s at %s whether it is there, ignoring: %m", app_id,
                                 dc->url);
                rpc_client_free(dc->client);
                free(dc);
                return;
        }
        log_struct(LOG_NOTICE, LOG_FIELDS(.app_id = app_id, .executor_id = executor_id),
                   "Executor %s/%d could not reach its driver; asking the driver at %s", app_id, executor_id,
                   dc->url);
}

void master_drivers_free(Master *m) {
        DriverCheck *dc;
        size_t i;

        if (!m->driver_checks)
                return;
        for (;;) {
                i = 0;
                if (!hashmap_iterate(m->driver_checks, &i, (void **) &dc, NULL))
                        break;
                hashmap_remove(m->driver_checks, dc->app_id);
                rpc_client_free(dc->client);
                free(dc);
        }
        hashmap_free(m->driver_checks);
        m->driver_checks = NULL;
}
