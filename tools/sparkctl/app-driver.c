/* See app-driver.h. */
#include <stdlib.h>
#include <string.h>

#include "app-driver.h"
#include "codec.h"
#include "config.h"
#include "output.h"
#include "sparkctl.h"
#include "wire-names.h"

static bool app_is_live(const Spark__AppInfo *a) {
        return a->state == SPARK__APP_STATE__APP_WAITING || a->state == SPARK__APP_STATE__APP_RUNNING;
}

const Spark__AppInfo *app_find(const Spark__ClusterState *cs, const char *app, char *err, size_t err_size) {
        const Spark__AppInfo *found = NULL;
        size_t n = 0, used;
        char shown[128];

        for (size_t i = 0; i < cs->n_apps; i++)
                if (streq_ptr(cs->apps[i]->app_id, app))
                        return cs->apps[i];
        for (size_t i = 0; i < cs->n_apps; i++)
                if (streq_ptr(cs->apps[i]->name, app) && app_is_live(cs->apps[i])) {
                        found = cs->apps[i];
                        n++;
                }
        string_sanitize(app, shown, sizeof(shown));
        if (n == 1)
                return found;
        if (n == 0) {
                snprintf(err, err_size, "the master knows no application with the id or name '%s'", shown);
                return NULL;
        }
        used = (size_t) snprintf(err, err_size, "%zu applications are named '%s'; give one of their ids:", n, shown);
        for (size_t i = 0; i < cs->n_apps && used < err_size; i++)
                if (streq_ptr(cs->apps[i]->name, app) && app_is_live(cs->apps[i]))
                        used += (size_t) snprintf(err + used, err_size - used, " %s",
                                                  string_sanitize(cs->apps[i]->app_id, shown, sizeof(shown)));
        return NULL;
}

int app_driver_url(const Daemon *master, const char *app, char **ret) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__ClusterStateRequest req = SPARK__CLUSTER_STATE_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        const Spark__AppInfo *a;
        char err[1024];
        int r;

        ENVELOPE_SET(&env, CLUSTER_STATE_REQUEST, cluster_state_request, &req);
        r = call_daemon(master, &env, SPARK__ENVELOPE__BODY_CLUSTER_STATE, &reply);
        if (r > 0)
                return r;
        a = app_find(reply->cluster_state, app, err, sizeof(err));
        if (!a) {
                fprintf(stderr, "sparkctl: %s\n", err);
                return SPARKCTL_EXIT_FAILED;
        }
        /* a URL from the network: dialled only if it is an endpoint */
        if (config_endpoint_check(a->driver_url)) {
                fprintf(stderr, "sparkctl: the master lists no usable driver URL for %s\n", a->app_id);
                return SPARKCTL_EXIT_FAILED;
        }
        *ret = strdup(a->driver_url);
        return *ret ? SPARKCTL_EXIT_OK : SPARKCTL_EXIT_FAILED;
}
