/* The driver's link to the master (driver-master.c): registration, events,
 * snapshots. */
#pragma once

#include "driver.h"

void driver_register_app(Driver *d);
int driver_subscribe_master(Driver *d);
void driver_subscribe_worker(Driver *d, const char *events_url);
/* asks the master for a snapshot of the app, unless one is on its way */
void driver_request_snapshot(Driver *d);

