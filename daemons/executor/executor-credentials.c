/* See executor_load_credentials() in executor.h. */
#include <stdio.h>
#include <unistd.h>

#include "executor.h"
#include "tls.h"

int executor_load_credentials(Executor *e) {
        const char *dir = getenv("CREDENTIALS_DIRECTORY");
        _cleanup_free_ char *path = NULL;
        int r;

        if (isempty(dir)) {
                log_struct(LOG_WARNING, EXECUTOR_LOG_FIELDS(e),
                           "No $CREDENTIALS_DIRECTORY: registering without an executor secret, which the driver "
                           "refuses. (The worker passes it to the executor unit as the credential %s.)",
                           EXECUTOR_SECRET_CREDENTIAL);
                if (tls_url(e->args.driver_url))
                        return log_error_errno(-ENOKEY, "No CA to verify the driver %s with: the credential %s is "
                                                        "missing.", e->args.driver_url, EXECUTOR_CA_CREDENTIAL);
                return 0;
        }

        if (asprintf(&path, "%s/%s", dir, EXECUTOR_SECRET_CREDENTIAL) < 0)
                return log_oom();
        r = executor_secret_read(path, e->secret);
        if (r == -EBADMSG)
                return log_error_errno(r, "Credential %s does not hold a %u-byte executor secret.", path,
                                       EXECUTOR_SECRET_SIZE);
        if (r < 0)
                return log_error_errno(r, "Failed to read the credential %s: %m", path);
        e->secret_len = EXECUTOR_SECRET_SIZE;

        if (!tls_url(e->args.driver_url))
                return 0;
        free(path);
        path = NULL;
        if (asprintf(&path, "%s/%s", dir, EXECUTOR_CA_CREDENTIAL) < 0)
                return log_oom();
        if (access(path, R_OK) < 0)
                return log_error_errno(-errno, "No CA to verify the driver %s with: %s: %m", e->args.driver_url,
                                       path);
        e->ca_file = TAKE_PTR(path);
        return 0;
}
