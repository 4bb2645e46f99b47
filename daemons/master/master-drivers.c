/* Drivers that are gone.  Nothing tells the master when a driver dies
 * (killed, crashed, its host lost): its executors find out, and exit with
 * SPARK_EXIT_DRIVER_UNREACHABLE.  Replaced, they would fail to reach it
 * again, for ever, holding the app's cores.  So the master asks the driver
 * itself; a driver that does not answer within worker_timeout_ms either is
 * gone, and its application is removed (which stops its executors).  Any
 * answer, even an error, means it is there: then the executor's trouble
 * was its own.
 *
 * A driver with a state directory comes back after a restart or a crash
 * and takes its application back (a RegisterApplication with its id and
 * key).  So a driver that does not answer is asked again, once a second,
 * for master.driver_reconnect_ms after its first silence, and only then is
 * its application removed. */
#include <inttypes.h>

#include "log.h"
#include "master.h"

typedef struct DriverCheck {
        Master *master;
        char app_id[APP_ID_MAX];
        char url[512];
        RpcClient *client;
        usec_t silent_since;     /* its first unanswered check; 0: none yet */
        sd_event_source *retry;  /* the next check, within the reconnect window */
} DriverCheck;

#define DRIVER_RECHECK_USEC USEC_PER_SEC

static void driver_check_free(DriverCheck *dc) {
        sd_event_source_disable_unref(dc->retry);
        rpc_client_free(dc->client);
        free(dc);
}

static void driver_check_ask(DriverCheck *dc, int timeout_ms);

static int on_driver_recheck(sd_event_source *s, uint64_t usec, void *userdata) {
        DriverCheck *dc = userdata;
        (void) s, (void) usec;

        dc->retry = sd_event_source_disable_unref(dc->retry);
        driver_check_ask(dc, (int) (DRIVER_RECHECK_USEC / USEC_PER_MSEC));
        return 0;
}

/* Whether the silent driver of dc is given more time (a check is armed). */
static bool driver_check_wait(DriverCheck *dc) {
        Master *m = dc->master;
        usec_t now = now_mono_usec(), window = (usec_t) m->config.master.driver_reconnect_ms * USEC_PER_MSEC;

        if (dc->silent_since == 0)
                dc->silent_since = now;
        if (now - dc->silent_since >= window)
                return false;
        if (sd_event_add_time_relative(m->event, &dc->retry, CLOCK_MONOTONIC,
                                       MIN(DRIVER_RECHECK_USEC, dc->silent_since + window - now), 10000,
                                       on_driver_recheck, dc) < 0)
                return false;
        if (now == dc->silent_since)
                log_struct(LOG_NOTICE, LOG_FIELDS(.app_id = dc->app_id),
                           "The driver of %s at %s does not answer; keeping the application for %" PRIi64
                           " ms, for the driver to come back",
                           dc->app_id, dc->url, m->config.master.driver_reconnect_ms);
        return true;
}

static void on_driver_answer(RpcClient *c, int error, const Envelope *reply, void *userdata) {
        DriverCheck *dc = userdata;
        Master *m = dc->master;
        App *a;
        (void) c;

        if (error == -ECANCELED)
                return;  /* master_drivers_free() is freeing us */

        a = cluster_app(m->cluster, dc->app_id);
        if (a && !reply && error < 0 && driver_check_wait(dc))
                return;
        hashmap_remove(m->driver_checks, dc->app_id);
        if (a && !reply && error < 0) {
                char why[600];

                /* cluster_remove_app() logs it */
                snprintf(why, sizeof(why), "neither its executors nor the master can reach its driver at %s (%s)",
                         dc->url, strerror(-error));
                (void) cluster_remove_app(m->cluster, dc->app_id, SPARK__APP_STATE__APP_FAILED, why);
        } else if (a)
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = dc->app_id), "The driver of %s at %s answers", dc->app_id,
                           dc->url);

        driver_check_free(dc);
}

static void driver_check_ask(DriverCheck *dc, int timeout_ms) {
        Spark__ClusterStateRequest csr = SPARK__CLUSTER_STATE_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        /* whatever it is asked, a driver answers */
        csr.app_id = dc->app_id;
        ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &csr);
        r = rpc_client_call(dc->client, &env, timeout_ms, on_driver_answer, dc);
        if (r < 0)
                on_driver_answer(dc->client, r, NULL, dc);
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

int master_app_driver_moved(Master *m, App *a, const char *driver_url, const char *driver_events,
                            uint32_t channel_port) {
        DriverCheck *dc = hashmap_get(m->driver_checks, a->id);
        _cleanup_free_ char *url = NULL, *events = NULL;

        if (dc) {
                hashmap_remove(m->driver_checks, a->id);
                driver_check_free(dc);
        }
        if (channel_port != a->driver_channel_port) {
                /* checked by the caller: a port */
                a->driver_channel_port = (uint16_t) channel_port;
                master_state_changed(m);
        }
        if (streq(a->driver_url, driver_url) && streq(strempty(a->driver_events), strempty(driver_events)))
                return 0;  /* a resent registration, or a driver back where it was */
        url = strdup(driver_url);
        events = strdup(strempty(driver_events));
        if (!url || !events)
                return -ENOMEM;
        free(a->driver_url);
        a->driver_url = TAKE_PTR(url);
        free(a->driver_events);
        a->driver_events = TAKE_PTR(events);
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = a->id, .message_id = SPARK_MESSAGE_APP_REGISTERED),
                   "The driver of %s came back at %s", a->id, driver_url);
        master_state_changed(m);
        return 0;
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
                driver_check_free(dc);
        }
        hashmap_free(m->driver_checks);
        m->driver_checks = NULL;
}
