/* Which TLS settings a daemon uses: the cluster CA, with its own certificate
 * and key when its section names them.  Master, worker and driver on one host
 * each need a certificate of their own role; a single-role host may keep
 * using cluster.tls_cert_file and tls_key_file. */
#include "config.h"

TlsSettings config_tls_for(const SparkConfig *c, ConfigSection s) {
        TlsSettings t = c->cluster.tls;
        const char *cert = NULL, *key = NULL;

        switch (s) {
        case CONFIG_SECTION_MASTER:
                cert = c->master.tls_cert_file;
                key = c->master.tls_key_file;
                break;
        case CONFIG_SECTION_WORKER:
                cert = c->worker.tls_cert_file;
                key = c->worker.tls_key_file;
                break;
        case CONFIG_SECTION_DRIVER:
                cert = c->driver.tls_cert_file;
                key = c->driver.tls_key_file;
                break;
        default:
                break;
        }
        /* config_load() lets them be set only together */
        if (!isempty(cert) || !isempty(key)) {
                t.cert_file = cert;
                t.key_file = key;
        }
        return t;
}
