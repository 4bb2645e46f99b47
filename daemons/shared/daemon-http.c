/* See daemon-http.h. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "daemon-http.h"
#include "log.h"
#include "prom-writer.h"
#include "ui-assets.h"

static time_t daemon_started;

int daemon_http_start(sd_event *e, const char *listen, const TlsSettings *tls, HttpHandler handler,
                      void *userdata, HttpServer **ret) {
        _cleanup_free_ char *url = NULL;
        char err[512] = "";
        int r;

        *ret = NULL;
        daemon_started = time(NULL);
        if (isempty(listen))
                return 0;
        r = http_server_new(e,
                            &(HttpServerConfig) {
                                    .listen = listen,
                                    .port_tries = DAEMON_HTTP_PORT_TRIES,
                                    .tls = tls_settings_can_listen(tls) ? tls : NULL,
                            },
                            handler, userdata, ret, err, sizeof(err));
        if (r == -EADDRINUSE) {
                /* the UI is not worth failing the daemon's real work for */
                log_warning("HTTP server not started: %s", err);
                return 0;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to start the HTTP server on %s: %s", listen, err[0] ? err : "%m");
        url = http_server_url(*ret, NULL);
        log_info("Web UI and metrics on %s", strna(url));
        return 0;
}

bool daemon_http_serve_asset(const char *path, const char *page, HttpReply *reply) {
        if (streq(path, "/") || streq(path, "/index.html"))
                path = page;
        for (const UiAsset *a = ui_assets; a->path; a++)
                if (streq(a->path, path)) {
                        reply->content_type = a->content_type;
                        fwrite(a->data, 1, a->size, reply->body);
                        return true;
                }
        return false;
}

void daemon_http_not_found(const char *path, HttpReply *reply) {
        reply->status = 404;
        if (strncmp(path, "/api/", 5) == 0) {
                reply->content_type = "application/json";
                fputs("{\"error\":\"not found\"}\n", reply->body);
        } else
                fputs("not found\n", reply->body);
}

/* The envelope body's name for a body case: the field's name in the .proto. */
static const char *type_name(int body_case) {
        Envelope env = ENVELOPE_INIT;

        if (body_case == 0)
                return "invalid";
        env.body_case = body_case;
        return envelope_body_name(&env);
}

void daemon_http_rpc_metrics(FILE *f, RpcServer *const *servers, const char *const *names, size_t n) {
        static const struct {
                const char *name, *help;
                bool errors;
        } families[] = {
                { "spark_rpc_requests_total", "Requests received, by endpoint and message type.", false },
                { "spark_rpc_errors_total", "Requests answered with an error, by endpoint and message type.", true },
        };

        for (size_t k = 0; k < ELEMENTSOF(families); k++) {
                prom_family(f, families[k].name, "counter", families[k].help);
                for (size_t i = 0; i < n; i++) {
                        RpcServerStats st;

                        if (!servers[i])
                                continue;
                        rpc_server_get_stats(servers[i], &st);
                        for (int t = 0; t < RPC_STATS_TYPES; t++) {
                                uint64_t v = families[k].errors ? st.errors_by_type[t] : st.requests_by_type[t];
                                if (v > 0)
                                        prom_sample_u64(f, families[k].name,
                                                        (const char *const[]) { "server", names[i], "type",
                                                                                type_name(t), NULL },
                                                        v);
                        }
                }
        }
        prom_family(f, "spark_rpc_handle_seconds", "histogram",
                    "Time the event loop spent handling one request, by endpoint.");
        for (size_t i = 0; i < n; i++)
                if (servers[i])
                        prom_histogram_write(f, "spark_rpc_handle_seconds",
                                             (const char *const[]) { "server", names[i], NULL },
                                             rpc_server_handle_histogram(servers[i]));
}

void daemon_http_process_metrics(FILE *f, const char *daemon) {
        prom_family(f, "spark_build_info", "gauge", "Always 1; the labels say which daemon and version.");
        prom_sample(f, "spark_build_info", (const char *const[]) { "daemon", daemon, "version", SPARK_VERSION, NULL },
                    1);
        prom_family(f, "spark_start_time_seconds", "gauge", "When the daemon started, in Unix time.");
        prom_sample(f, "spark_start_time_seconds", NULL, (double) daemon_started);
}
