/* --app ID|NAME: the driver of an application, from the master's registry,
 * so that nobody needs to know the URLs when several drivers run. */
#pragma once

#include "call.h"

/* The application in cs whose id is app, else the one running application
 * named app.  NULL with the reason in err: none, or several of that name
 * (their ids listed). */
const Spark__AppInfo *app_find(const Spark__ClusterState *cs, const char *app, char *err, size_t err_size);

/* Asks the master for its state and returns 0 with the driver URL of app
 * (malloc()ed), or the exit status after saying why. */
int app_driver_url(const Daemon *master, const char *app, char **ret);
