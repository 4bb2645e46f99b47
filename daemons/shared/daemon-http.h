/* What every daemon's HTTP server does the same way (docs/observability.md):
 * starting it from the configuration (a busy port moves on to the next free
 * ones, as Spark's do; the daemon runs on without HTTP if none is free),
 * the web UI's embedded files, the RPC families of /metrics, and the JSON
 * error of an /api/v1/ path that names nothing. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include <systemd/sd-event.h>

#include "http-server.h"
#include "rpc-server.h"

/* Ports tried after a busy one: 4040 → 4060 for a driver. */
#define DAEMON_HTTP_PORT_TRIES 21

/* listen "": *ret = NULL, nothing to do.  Logs what it does; returns < 0
 * only for a listen value that cannot work (bad address or certificate). */
int daemon_http_start(sd_event *e, const char *listen, const TlsSettings *tls, HttpHandler handler,
                      void *userdata, HttpServer **ret);

/* Serves path from the embedded UI files, "/" as page ("/master.html");
 * false if there is no such file. */
bool daemon_http_serve_asset(const char *path, const char *page, HttpReply *reply);

void daemon_http_not_found(const char *path, HttpReply *reply);

/* spark_rpc_requests_total / spark_rpc_errors_total {server,type} and
 * spark_rpc_handle_seconds {server} of each server (NULL ones skipped):
 * families written once, samples of every server. */
void daemon_http_rpc_metrics(FILE *f, RpcServer *const *servers, const char *const *names, size_t n);

/* "# TYPE spark_up" ... the process's own: start time, build info. */
void daemon_http_process_metrics(FILE *f, const char *daemon);
