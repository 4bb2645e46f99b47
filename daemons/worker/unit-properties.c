/* See unit-properties.h. */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "error-buf.h"
#include "executor-env.h"
#include "resources.h"
#include "executor-secret.h"
#include "ids.h"
#include "macro.h"
#include "unit-properties.h"
#include "unit-sandbox.h"
#include "utf8.h"

#define PATH_LEN_MAX 2048

char **unit_strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **p = l; *p; p++)
                free(*p);
        free(l);
        return NULL;
}

static const char *shown(const char *s) {
        return s ? s : "(null)";
}

/* A refused launch: the reason in error, -EINVAL. */
#define fail(error, size, ...) error_buf_invalid(error, size, __VA_ARGS__)

/* Absolute, normalised enough that no component is "..", no '$' (systemd
 * expands $VAR in ExecStart= arguments), printable. */
static bool path_is_safe(const char *p) {
        const char *c;

        if (isempty(p) || p[0] != '/' || strlen(p) >= PATH_LEN_MAX / 2 || strchr(p, '$') ||
            !utf8_text_is_valid(p, false))
                return false;
        for (c = p; (c = strstr(c, "..")); c += 2)
                if ((c == p || c[-1] == '/') && (c[2] == '/' || c[2] == 0))
                        return false;
        return true;
}

static bool unit_name_char_ok(char c) {
        return isalnum((unsigned char) c) || strchr(":_.-\\@", c);
}

static bool slice_is_valid(const char *s) {
        size_t n = strlen(s);

        if (n <= strlen(".slice") || n >= UNIT_NAME_MAX || !streq(s + n - strlen(".slice"), ".slice"))
                return false;
        for (const char *p = s; *p; p++)
                if (!unit_name_char_ok(*p) || *p == '@')
                        return false;
        return true;
}

static bool user_is_valid(const char *u) {
        size_t n = strlen(u);

        if (n == 0 || n > 32 || u[0] == '-')
                return false;
        for (const char *p = u; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("_.-", *p))
                        return false;
        return true;
}

/* Printable ASCII without blanks, quotes, '$' or '\\': an endpoint such as
 * tcp://host:port, tls+tcp://…, ipc:///run/…. */
static bool driver_url_is_valid(const char *u) {
        size_t n = strlen(u);

        if (n == 0 || n >= EXECUTOR_DRIVER_URL_MAX || !strstr(u, "://"))
                return false;
        for (const char *p = u; *p; p++)
                if (*p <= 0x20 || *p >= 0x7f || strchr("$\\\"'`", *p))
                        return false;
        return true;
}

static int env_entry_check(const char *e, char *error, size_t size) {
        const char *eq = e ? strchr(e, '=') : NULL;
        size_t klen;

        if (!eq || eq == e)
                return fail(error, size, "executor_env entry \"%.64s\" is not KEY=VALUE", shown(e));
        klen = (size_t) (eq - e);
        if (strlen(e) > EXECUTOR_ENV_ENTRY_MAX)
                return fail(error, size, "executor_env entry %.*s is longer than %d bytes",
                            (int) MIN(klen, 64), e, EXECUTOR_ENV_ENTRY_MAX);
        if (!(isalpha((unsigned char) e[0]) || e[0] == '_'))
                return fail(error, size, "executor_env key \"%.*s\" is not a valid name", (int) MIN(klen, 64), e);
        for (size_t i = 1; i < klen; i++)
                if (!(isalnum((unsigned char) e[i]) || e[i] == '_'))
                        return fail(error, size, "executor_env key \"%.*s\" is not a valid name",
                                    (int) MIN(klen, 64), e);
        if (executor_env_name_is_reserved(e, klen))
                return fail(error, size, "executor_env may not set %.*s: the worker sets it",
                            (int) MIN(klen, 64), e);
        if (!utf8_text_is_valid(eq + 1, true))
                return fail(error, size, "executor_env %.*s has control characters or invalid UTF-8",
                            (int) MIN(klen, 64), e);
        return 0;
}

/* LoadCredential= takes absolute paths; ':' would end the credential's
 * name in the property's text form, so none here either. */
static int credentials_validate(const ExecutorUnitSpec *spec, char *error, size_t size) {
        if (!path_is_safe(spec->secret_file) || strchr(spec->secret_file, ':'))
                return fail(error, size, "executor secret file \"%.80s\" is not a safe absolute path",
                            shown(spec->secret_file));
        if (spec->ca_file && (!path_is_safe(spec->ca_file) || strchr(spec->ca_file, ':')))
                return fail(error, size, "CA file \"%.80s\" is not a safe absolute path", spec->ca_file);
        return 0;
}

int executor_unit_spec_validate(const ExecutorUnitSpec *spec, bool system_bus, char *error,
                                size_t error_size) {
        int r;

        if (!spec)
                return fail(error, error_size, "no executor spec");
        if (!app_id_is_valid(spec->app_id))
                return fail(error, error_size, "invalid app id \"%.80s\"", shown(spec->app_id));
        if (spec->executor_id < 0)
                return fail(error, error_size, "invalid executor id %d", spec->executor_id);
        if (!worker_id_is_valid(spec->worker_id))
                return fail(error, error_size, "invalid worker id \"%.80s\"", shown(spec->worker_id));
        if (spec->cores < 1 || spec->cores > EXECUTOR_CORES_MAX)
                return fail(error, error_size, "cores %d out of range 1…%d", spec->cores, EXECUTOR_CORES_MAX);
        if (spec->memory_mb < 1 || spec->memory_mb > EXECUTOR_MEMORY_MB_MAX)
                return fail(error, error_size, "memory %" PRId64 " MB out of range 1…%" PRId64,
                            spec->memory_mb, (int64_t) EXECUTOR_MEMORY_MB_MAX);
        if (!spec->driver_url || !driver_url_is_valid(spec->driver_url))
                return fail(error, error_size, "invalid driver URL \"%.80s\"", shown(spec->driver_url));
        if (spec->driver_channel_port > UINT16_MAX)
                return fail(error, error_size, "driver channel port %u out of range", spec->driver_channel_port);
        if (!path_is_safe(spec->executor_binary))
                return fail(error, error_size, "executor binary \"%.80s\" is not a safe absolute path",
                            shown(spec->executor_binary));
        if (!path_is_safe(spec->work_dir))
                return fail(error, error_size, "work dir \"%.80s\" is not a safe absolute path",
                            shown(spec->work_dir));
        if (spec->slice && !slice_is_valid(spec->slice))
                return fail(error, error_size, "invalid slice name \"%.80s\"", spec->slice);
        if (system_bus && (!spec->user || !user_is_valid(spec->user)))
                return fail(error, error_size, "invalid executor user \"%.40s\"", shown(spec->user));
        if (spec->n_env > EXECUTOR_ENV_MAX)
                return fail(error, error_size, "%zu executor_env entries, at most %d", spec->n_env, EXECUTOR_ENV_MAX);
        if (spec->n_env > 0 && !spec->env)
                return fail(error, error_size, "executor_env missing");
        for (size_t i = 0; i < spec->n_env; i++) {
                r = env_entry_check(spec->env[i], error, error_size);
                if (r < 0)
                        return r;
        }
        if (spec->n_properties > 0 && !spec->properties)
                return fail(error, error_size, "executor_properties missing");
        for (size_t i = 0; i < spec->n_properties; i++) {
                ExecProperty p = {};
                char why[200] = "";

                r = exec_property_parse(spec->properties[i], &p, why, sizeof(why));
                exec_property_done(&p);
                if (r < 0)
                        return fail(error, error_size, "executor_properties: %s", why);
        }
        if (spec->n_resource_env > RESOURCE_KINDS_MAX || (spec->n_resource_env > 0 && !spec->resource_env))
                return fail(error, error_size, "invalid named resources");
        for (size_t i = 0; i < spec->n_resource_env; i++) {
                const char *e = spec->resource_env[i], *eq = strchr(e, '=');
                char name[RESOURCE_NAME_MAX + 1];
                size_t nlen = eq ? (size_t) (eq - e) : 0, plen = strlen(EXECUTOR_ENV_RESOURCE_PREFIX);

                if (!eq || nlen <= plen || nlen - plen > RESOURCE_NAME_MAX ||
                    strncmp(e, EXECUTOR_ENV_RESOURCE_PREFIX, plen) != 0 || strpbrk(eq, "\n\r\t "))
                        return fail(error, error_size, "invalid named resource entry \"%.80s\"", shown(e));
                /* the name upper-cased: lower it to check it */
                for (size_t k = 0; k < nlen - plen; k++)
                        name[k] = (char) tolower((unsigned char) e[plen + k]);
                name[nlen - plen] = '\0';
                if (!resource_name_is_valid(name))
                        return fail(error, error_size, "invalid named resource entry \"%.80s\"", shown(e));
        }
        if (spec->n_devices > 0 && !spec->devices)
                return fail(error, error_size, "devices missing");
        for (size_t i = 0; i < spec->n_devices; i++)
                if (!resource_device_is_valid(spec->devices[i]))
                        return fail(error, error_size, "device \"%.80s\" is not a node below /dev/",
                                    shown(spec->devices[i]));
        if (spec->n_hidden_paths > 0 && !spec->hidden_paths)
                return fail(error, error_size, "hidden paths missing");
        for (size_t i = 0; i < spec->n_hidden_paths; i++)
                if (!path_is_safe(spec->hidden_paths[i]))
                        return fail(error, error_size, "hidden path \"%.80s\" is not a safe absolute path",
                                    shown(spec->hidden_paths[i]));
        if (executor_unit_user_is_dynamic(spec, system_bus) &&
            strncmp(spec->work_dir, EXECUTOR_STATE_ROOT, strlen(EXECUTOR_STATE_ROOT)) != 0)
                return fail(error, error_size, "work dir \"%.80s\" is not under " EXECUTOR_STATE_ROOT
                            " as a dynamic executor user needs", spec->work_dir);
        return credentials_validate(spec, error, error_size);
}

int unit_strv_push_printf(char **l, size_t *n, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&l[*n], fmt, ap);
        va_end(ap);
        if (r < 0) {
                l[*n] = NULL;
                return -ENOMEM;
        }
        (*n)++;
        l[*n] = NULL;
        return 0;
}

int executor_unit_argv(const ExecutorUnitSpec *spec, char ***ret) {
        _cleanup_(unit_strv_freep) char **l = NULL;
        size_t n = 0;

        l = calloc(14, sizeof(char *));
        if (!l)
                return -ENOMEM;
        if (unit_strv_push_printf(l, &n, "%s", spec->executor_binary) < 0 ||
            unit_strv_push_printf(l, &n, "--driver") < 0 ||
            unit_strv_push_printf(l, &n, "%s", spec->driver_url) < 0 ||
            unit_strv_push_printf(l, &n, "--app-id") < 0 ||
            unit_strv_push_printf(l, &n, "%s", spec->app_id) < 0 ||
            unit_strv_push_printf(l, &n, "--executor-id") < 0 ||
            unit_strv_push_printf(l, &n, "%d", spec->executor_id) < 0 ||
            unit_strv_push_printf(l, &n, "--cores") < 0 ||
            unit_strv_push_printf(l, &n, "%d", spec->cores) < 0 ||
            unit_strv_push_printf(l, &n, "--worker-id") < 0 ||
            unit_strv_push_printf(l, &n, "%s", spec->worker_id) < 0)
                return -ENOMEM;
        if (spec->driver_channel_port > 0 &&
            (unit_strv_push_printf(l, &n, "--driver-channel-port") < 0 ||
             unit_strv_push_printf(l, &n, "%u", spec->driver_channel_port) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

int executor_unit_environment(const ExecutorUnitSpec *spec, char ***ret) {
        _cleanup_(unit_strv_freep) char **l = NULL;
        size_t n = 0;

        l = calloc(spec->n_env + spec->n_resource_env + 10, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < spec->n_env; i++)
                if (unit_strv_push_printf(l, &n, "%s", spec->env[i]) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < spec->n_resource_env; i++)
                if (unit_strv_push_printf(l, &n, "%s", spec->resource_env[i]) < 0)
                        return -ENOMEM;
        /* Every name set here must be one executor_env_name_is_reserved()
         * refuses in an app's executor_env. */
        if (unit_strv_push_printf(l, &n, EXECUTOR_ENV_APP_ID "=%s", spec->app_id) < 0 ||
            unit_strv_push_printf(l, &n, EXECUTOR_ENV_EXECUTOR_ID "=%d", spec->executor_id) < 0 ||
            unit_strv_push_printf(l, &n, EXECUTOR_ENV_WORKER_ID "=%s", spec->worker_id) < 0 ||
            unit_strv_push_printf(l, &n, EXECUTOR_ENV_DRIVER_URL "=%s", spec->driver_url) < 0 ||
            unit_strv_push_printf(l, &n, EXECUTOR_ENV_CORES "=%d", spec->cores) < 0 ||
            unit_strv_push_printf(l, &n, EXECUTOR_ENV_MEMORY_MB "=%" PRId64, spec->memory_mb) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

int executor_unit_work_dir(const ExecutorUnitSpec *spec, char *buf, size_t size) {
        size_t l = strlen(spec->work_dir);
        int n;

        /* "/var/lib/spark/work/" and "/" alike */
        while (l > 1 && spec->work_dir[l - 1] == '/')
                l--;
        n = snprintf(buf, size, "%.*s%s%s/%d", (int) l, spec->work_dir, l == 1 ? "" : "/",
                     spec->app_id, spec->executor_id);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

/* mkdir -p for the work dir itself, which the operator configured. */
static int mkdir_parents(const char *path, mode_t mode) {
        char buf[PATH_LEN_MAX];
        size_t n = strlen(path);

        if (n >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, n + 1);
        for (char *p = buf + 1;; p++) {
                if (*p == '/' || *p == 0) {
                        char c = *p;

                        *p = 0;
                        if (mkdir(buf, mode) < 0 && errno != EEXIST)
                                return -errno;
                        *p = c;
                        if (c == 0)
                                break;
                }
        }
        return 0;
}

/* mkdirat + open without following a symlink, then (system bus) fchown:
 * the executor's user owns these directories and could otherwise swap one
 * for a symlink to have us chown something else. */
static int make_owned_dir(int parent_fd, const char *name, const struct passwd *pw) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (mkdirat(parent_fd, name, 0750) < 0 && errno != EEXIST)
                return -errno;
        fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (pw) {
                if (fstat(fd, &st) < 0)
                        return -errno;
                if ((st.st_uid != pw->pw_uid || st.st_gid != pw->pw_gid) &&
                    fchown(fd, pw->pw_uid, pw->pw_gid) < 0)
                        return -errno;
        }
        return TAKE_FD(fd);
}

int executor_unit_make_work_dir(const ExecutorUnitSpec *spec, bool system_bus, char *buf, size_t size) {
        _cleanup_close_ int work_fd = -1, app_fd = -1, exec_fd = -1;
        _cleanup_free_ char *pwbuf = NULL;
        struct passwd pwd, *pw = NULL;
        char exec_name[16];
        int r;

        r = executor_unit_work_dir(spec, buf, size);
        if (r < 0)
                return r;
        /* systemd makes a dynamic user's directory (StateDirectory=). */
        if (executor_unit_user_is_dynamic(spec, system_bus))
                return strncmp(buf, EXECUTOR_STATE_ROOT, strlen(EXECUTOR_STATE_ROOT)) == 0 ? 0 : -EINVAL;

        if (system_bus) {
                long bufsize = sysconf(_SC_GETPW_R_SIZE_MAX);

                if (bufsize <= 0)
                        bufsize = 16384;
                pwbuf = malloc((size_t) bufsize);
                if (!pwbuf)
                        return -ENOMEM;
                r = getpwnam_r(spec->user, &pwd, pwbuf, (size_t) bufsize, &pw);
                if (r != 0)
                        return -r;
                if (!pw)
                        return -ESRCH;
        }

        r = mkdir_parents(spec->work_dir, 0755);
        if (r < 0)
                return r;
        work_fd = open(spec->work_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (work_fd < 0)
                return -errno;
        app_fd = make_owned_dir(work_fd, spec->app_id, pw);
        if (app_fd < 0)
                return app_fd;
        snprintf(exec_name, sizeof(exec_name), "%d", spec->executor_id);
        exec_fd = make_owned_dir(app_fd, exec_name, pw);
        if (exec_fd < 0)
                return exec_fd;
        return 0;
}

static int append_string(sd_bus_message *m, const char *name, const char *value) {
        return sd_bus_message_append(m, "(sv)", name, "s", value);
}

int unit_property_open(sd_bus_message *m, const char *name, const char *signature) {
        int r;

        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', name);
        if (r < 0)
                return r;
        return sd_bus_message_open_container(m, 'v', signature);
}

int unit_property_close(sd_bus_message *m) {
        int r;

        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int unit_property_open_array(sd_bus_message *m, const char *name, const char *element) {
        char signature[32];
        int r;

        if (snprintf(signature, sizeof(signature), "a%s", element) >= (int) sizeof(signature))
                return -EINVAL;
        r = unit_property_open(m, name, signature);
        if (r < 0)
                return r;
        return sd_bus_message_open_container(m, 'a', element);
}

int unit_property_close_array(sd_bus_message *m) {
        int r;

        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return unit_property_close(m);
}

static int append_strv(sd_bus_message *m, const char *name, char **l) {
        int r;

        r = unit_property_open(m, name, "as");
        if (r < 0)
                return r;
        r = sd_bus_message_append_strv(m, l);
        if (r < 0)
                return r;
        return unit_property_close(m);
}

/* ExecStart: a(sasb) — path, argv, ignore-failure. */
static int append_exec_start(sd_bus_message *m, char **argv) {
        int r;

        r = unit_property_open_array(m, "ExecStart", "(sasb)");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', "sasb");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", argv[0]);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, argv);
        if (r >= 0)
                r = sd_bus_message_append(m, "b", 0);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r < 0 ? r : unit_property_close_array(m);
}

/* LogExtraFields: aay, each "FIELD=value" without a terminating NUL. */
static int append_log_extra_fields(sd_bus_message *m, char **fields) {
        int r;

        r = unit_property_open_array(m, "LogExtraFields", "ay");
        for (char **f = fields; r >= 0 && *f; f++)
                r = sd_bus_message_append_array(m, 'y', *f, strlen(*f));
        return r < 0 ? r : unit_property_close_array(m);
}

/* LoadCredential: a(ss) — credential name, file.  systemd reads the
 * files (as root, on the system bus) when the unit starts and gives the
 * executor copies in $CREDENTIALS_DIRECTORY, readable by its user only; not
 * SetCredential=, whose value any local user can read over D-Bus. */
static int append_credentials(sd_bus_message *m, const ExecutorUnitSpec *spec) {
        int r;

        r = unit_property_open_array(m, "LoadCredential", "(ss)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(ss)", EXECUTOR_SECRET_CREDENTIAL, spec->secret_file);
        if (r >= 0 && spec->ca_file)
                r = sd_bus_message_append(m, "(ss)", EXECUTOR_CA_CREDENTIAL, spec->ca_file);
        return r < 0 ? r : unit_property_close_array(m);
}

int executor_unit_append_properties(sd_bus_message *m, const ExecutorUnitSpec *spec, bool system_bus,
                                    const char *work_dir) {
        _cleanup_(unit_strv_freep) char **argv = NULL, **env = NULL;
        _cleanup_free_ char *description = NULL, *f_app = NULL, *f_exec = NULL, *f_worker = NULL;
        uint64_t weight;
        int r;

        r = executor_unit_argv(spec, &argv);
        if (r < 0)
                return r;
        r = executor_unit_environment(spec, &env);
        if (r < 0)
                return r;
        if (asprintf(&description, "Spark executor %d of %s", spec->executor_id, spec->app_id) < 0 ||
            asprintf(&f_app, "SPARK_APP_ID=%s", spec->app_id) < 0 ||
            asprintf(&f_exec, "SPARK_EXECUTOR_ID=%d", spec->executor_id) < 0 ||
            asprintf(&f_worker, "SPARK_WORKER_ID=%s", spec->worker_id) < 0)
                return -ENOMEM;

        /* 100 per core, as systemd's default weight is one core's worth. */
        weight = MIN((uint64_t) spec->cores * 100, (uint64_t) 10000);

        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;

        r = append_string(m, "Description", description);
        if (r < 0)
                return r;
        /* exec: the start job fails when the binary cannot be executed,
         * instead of the unit starting and then failing. */
        r = append_string(m, "Type", "exec");
        if (r < 0)
                return r;
        r = append_exec_start(m, argv);
        if (r < 0)
                return r;
        if (spec->slice) {
                r = append_string(m, "Slice", spec->slice);
                if (r < 0)
                        return r;
        }
        r = executor_unit_append_user(m, spec, system_bus);
        if (r < 0)
                return r;
        r = append_string(m, "WorkingDirectory", work_dir);
        if (r < 0)
                return r;
        r = append_strv(m, "Environment", env);
        if (r < 0)
                return r;
        r = append_credentials(m, spec);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)", "MemoryAccounting", "b", 1);
        if (r < 0)
                return r;
        /* CPUUsageNSec, for the application's chargeback (worker-usage.c) */
        r = sd_bus_message_append(m, "(sv)", "CPUAccounting", "b", 1);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)", "MemoryMax", "t", (uint64_t) spec->memory_mb * 1024 * 1024);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)", "CPUQuotaPerSecUSec", "t", (uint64_t) spec->cores * 1000000ULL);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)", "CPUWeight", "t", weight);
        if (r < 0)
                return r;
        /* Gone as soon as it ends, failed or not: a relaunch with the same
         * name must not find a failed leftover.  The outcome is taken from
         * the signals, never from a later query. */
        r = append_string(m, "CollectMode", "inactive-or-failed");
        if (r < 0)
                return r;
        r = append_string(m, "KillMode", "control-group");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)", "TimeoutStopUSec", "t", (uint64_t) EXECUTOR_STOP_TIMEOUT_USEC);
        if (r < 0)
                return r;
        r = append_string(m, "SyslogIdentifier", EXECUTOR_SYSLOG_IDENTIFIER);
        if (r < 0)
                return r;
        r = append_log_extra_fields(m, (char *[]) { f_app, f_exec, f_worker, NULL });
        if (r < 0)
                return r;
        r = executor_unit_append_sandbox(m, spec, system_bus, work_dir);
        if (r < 0)
                return r;

        return sd_bus_message_close_container(m);
}
