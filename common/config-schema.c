/* The configuration schema: one row per key of spark.conf(5), with its type,
 * default, range and whether SIGHUP may change it, and the checks of the
 * string values.
 *
 * Reloadable keys are those a running daemon can simply start using for its
 * next decision: timeouts, intervals, placement and retry policy, what new
 * executors are started with.  Sockets (endpoints), identities registered
 * with a peer (app name, advertised host, a worker's resources, an app's
 * executor shape), on-disk state and the bus need a restart. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "endpoint-list.h"
#include "exec-property.h"
#include "resources.h"

#define ROW(S, s, n, t, r)                                                       \
        .section = CONFIG_SECTION_##S, .name = #n, .key = #s "." #n, .type = (t), \
        .reloadable = (r), .offset = offsetof(SparkConfig, s.n)

#define KEY_ENDPOINT(S, s, n, def, r, desc)                                              \
        { ROW(S, s, n, CONFIG_KEY_ENDPOINT, r), .default_string = (def),                    \
          .validate = config_endpoint_check, .description = (desc) }
/* Several endpoints, comma-separated (the masters of a cluster). */
#define KEY_ENDPOINT_LIST(S, s, n, def, r, desc)                                         \
        { ROW(S, s, n, CONFIG_KEY_ENDPOINT, r), .default_string = (def),                    \
          .validate = config_endpoint_list_check, .description = (desc) }
#define KEY_STRING(S, s, n, def, check, r, desc)                                          \
        { ROW(S, s, n, CONFIG_KEY_STRING, r), .default_string = (def), .validate = (check), \
          .description = (desc) }
#define KEY_INT(S, s, n, def, lo, hi, r, desc)                                            \
        { ROW(S, s, n, CONFIG_KEY_INT, r), .default_int = (def), .min = (lo), .max = (hi), \
          .description = (desc) }
#define KEY_BOOL(S, s, n, def, r, desc) \
        { ROW(S, s, n, CONFIG_KEY_BOOL, r), .default_int = (def), .description = (desc) }
#define KEY_ENV(S, s, n, r, desc) { ROW(S, s, n, CONFIG_KEY_ENV, r), .description = (desc) }
#define KEY_RESOURCES(S, s, n, r, desc) { ROW(S, s, n, CONFIG_KEY_RESOURCES, r), .description = (desc) }
#define KEY_AMOUNTS(S, s, n, lo, hi, r, desc) \
        { ROW(S, s, n, CONFIG_KEY_AMOUNTS, r), .min = (lo), .max = (hi), .description = (desc) }
#define KEY_STRV(S, s, n, check, r, desc) \
        { ROW(S, s, n, CONFIG_KEY_STRV, r), .validate_element = (check), .description = (desc) }
/* A cluster.tls_* key, kept in SparkConfig's cluster.tls.<field>. */
#define KEY_TLS_PATH(n, field, desc)                                                                  \
        { .section = CONFIG_SECTION_CLUSTER, .name = #n, .key = "cluster." #n, .type = CONFIG_KEY_STRING, \
          .reloadable = RESTART, .offset = offsetof(SparkConfig, cluster.tls.field), .default_string = "", \
          .validate = check_optional_path, .description = (desc) }
/* A daemon's own certificate and key, in place of cluster.tls_cert_file and
 * tls_key_file, so that the daemons of one host each present their role's. */
#define KEY_DAEMON_TLS(S, s)                                                                              \
        KEY_STRING(S, s, tls_cert_file, "", check_optional_path, RESTART,                                 \
                   "this daemon's certificate (PEM), signed by the cluster CA with the " #s " role; empty: " \
                   "cluster.tls_cert_file"),                                                              \
        KEY_STRING(S, s, tls_key_file, "", check_optional_path, RESTART,                                  \
                   "the private key of " #s ".tls_cert_file (PEM, unencrypted); empty: cluster.tls_key_file")

#define RELOAD true
#define RESTART false

#define MEMORY_MB_MAX (INT64_C(1) << 30) /* 1 PiB */
#define CORES_MAX 65536
#define MS_MAX 3600000 /* one hour */
#define RETENTION_S_MAX (INT64_C(366) * 86400) /* a year */

static const char *check_absolute_path(const char *s);
static const char *check_optional_path(const char *s);
static const char *check_host(const char *s);
static const char *check_http_listen(const char *s);
static const char *check_bus(const char *s);
static const char *check_recovery_mode(const char *s);
static const char *check_journal_sync(const char *s);
static const char *check_scheduling(const char *s);
static const char *check_zookeeper_hosts(const char *s);
static const char *check_znode_path(const char *s);
static const char *check_slice(const char *s);
static const char *check_user(const char *s);
static const char *check_app_name(const char *s);
static const char *check_exec_property(const char *s, char *buf, size_t size);
static const char *check_label(const char *s, char *buf, size_t size);

static const ConfigKey schema[] = {
        KEY_ENDPOINT_LIST(CLUSTER, cluster, master, "tcp://127.0.0.1:7077", RESTART,
                          "the masters' request endpoints, comma-separated, dialled by every daemon, which "
                          "follows the one that leads"),
        KEY_ENDPOINT_LIST(CLUSTER, cluster, master_events, "tcp://127.0.0.1:7078", RESTART,
                          "the masters' event endpoints, comma-separated, in the order of cluster.master"),
        KEY_TLS_PATH(tls_ca_file, ca_file,
                     "the cluster CA's certificate (PEM): peers of tls+tcp:// endpoints must present a "
                     "certificate it signed; empty: no TLS"),
        KEY_TLS_PATH(tls_cert_file, cert_file,
                     "this host's certificate (PEM), signed by the cluster CA, for its host names"),
        KEY_TLS_PATH(tls_key_file, key_file, "the private key of tls_cert_file (PEM, unencrypted)"),
        KEY_BOOL(CLUSTER, cluster, insecure, false, RESTART,
                 "allow plaintext tcp:// listen endpoints beyond loopback (anyone who reaches them may run "
                 "jobs on the workers); the daemons warn at every start"),

        KEY_ENDPOINT(MASTER, master, listen, "tcp://127.0.0.1:7077", RESTART,
                     "where the master accepts requests"),
        KEY_ENDPOINT(MASTER, master, events_listen, "tcp://127.0.0.1:7078", RESTART,
                     "where the master publishes events"),
        KEY_STRING(MASTER, master, http_listen, "127.0.0.1:8080", check_http_listen, RESTART,
                   "HOST:PORT of the master's HTTP server (/metrics, /api/v1/, the web UI); empty: none"),
        KEY_STRING(MASTER, master, state_dir, "/var/lib/spark/master", check_absolute_path, RESTART,
                   "where the master keeps the state it recovers after a restart"),
        KEY_INT(MASTER, master, worker_timeout_ms, 10000, 100, MS_MAX, RELOAD,
                "a worker silent for this long is lost"),
        KEY_BOOL(MASTER, master, spread_out, true, RELOAD,
                 "spread an application's executors over many workers rather than few"),
        KEY_INT(MASTER, master, default_cores, 0, 0, CORES_MAX, RELOAD,
                "cores given to an application that sets no max_cores; 0: no cap"),
        KEY_INT(MASTER, master, max_executor_retries, 10, 0, 10000, RELOAD,
                "executor failures in a row after which an application fails"),
        KEY_INT(MASTER, master, retained_apps, 200, 0, 100000, RELOAD,
                "finished applications kept as history"),
        KEY_INT(MASTER, master, retained_workers, 100, 0, 100000, RELOAD,
                "lost workers kept as history"),
        KEY_INT(MASTER, master, driver_reconnect_ms, 30000, 0, MS_MAX, RELOAD,
                "how long an application outlives a driver that went away without unregistering"),
        KEY_STRING(MASTER, master, recovery_mode, "filesystem", check_recovery_mode, RESTART,
                   "where the master keeps its state: \"filesystem\" (state_dir) or \"zookeeper\" "
                   "(standby masters, one leader elected in ZooKeeper)"),
        KEY_STRING(MASTER, master, zookeeper, "", check_zookeeper_hosts, RESTART,
                   "the ZooKeeper ensemble, \"HOST:PORT,HOST:PORT,...\" (recovery_mode \"zookeeper\")"),
        KEY_STRING(MASTER, master, zookeeper_dir, "/spark", check_znode_path, RESTART,
                   "the znode under which the masters elect a leader and keep the state"),
        KEY_INT(MASTER, master, zookeeper_session_timeout_ms, 6000, 100, 600000, RESTART,
                "the ZooKeeper session timeout asked for (the servers bound it to 2-20 ticks)"),
        KEY_STRING(MASTER, master, scheduling, "fifo", check_scheduling, RELOAD,
                   "how free cores are shared between applications: \"fifo\" (the oldest application "
                   "first) or \"fair\" (weighted dominant resource fairness, with preemption)"),
        KEY_INT(MASTER, master, preemption_timeout_ms, 30000, 100, MS_MAX, RELOAD,
                "with scheduling \"fair\": an application below its share for this long gets executors "
                "back from those above theirs"),
        KEY_DAEMON_TLS(MASTER, master),

        KEY_ENDPOINT(WORKER, worker, listen, "tcp://127.0.0.1:7081", RESTART,
                     "where the worker accepts requests"),
        KEY_ENDPOINT(WORKER, worker, events_listen, "tcp://127.0.0.1:7082", RESTART,
                     "where the worker publishes executor state changes"),
        KEY_STRING(WORKER, worker, http_listen, "127.0.0.1:8081", check_http_listen, RESTART,
                   "HOST:PORT of the worker's HTTP server (/metrics, /api/v1/, the web UI); empty: none"),
        KEY_STRING(WORKER, worker, advertise_host, "", check_host, RESTART,
                   "the host name peers use to reach this worker; empty: the host name"),
        KEY_INT(WORKER, worker, cores, 0, 0, CORES_MAX, RESTART,
                "cores offered to the master; 0: detect"),
        KEY_INT(WORKER, worker, memory_mb, 0, 0, MEMORY_MB_MAX, RESTART,
                "memory offered to the master, in MiB; 0: detect"),
        KEY_INT(WORKER, worker, memory_reserve_mb, 1024, 0, MEMORY_MB_MAX, RESTART,
                "with memory_mb = 0, the MiB of physical memory the worker keeps for the host and does "
                "not offer"),
        KEY_INT(WORKER, worker, heartbeat_ms, 1000, 10, 600000, RELOAD,
                "interval of heartbeats to the master"),
        KEY_STRING(WORKER, worker, systemd_bus, "system", check_bus, RESTART,
                   "\"system\", or \"user\" to run executors in the user's own manager"),
        KEY_STRING(WORKER, worker, executor_slice, "spark-executors.slice", check_slice, RELOAD,
                   "the slice new executor units are placed in"),
        KEY_STRING(WORKER, worker, executor_user, "dynamic", check_user, RESTART,
                   "the user executors run as; \"dynamic\": a user systemd allocates for each "
                   "application (ignored on the user bus)"),
        KEY_STRING(WORKER, worker, executor_binary, "/usr/lib/spark/spark-executor",
                   check_absolute_path, RELOAD, "the program new executor units run"),
        KEY_STRING(WORKER, worker, work_dir, "/var/lib/spark/work", check_absolute_path, RESTART,
                   "executors' working directories are created below it"),
        KEY_INT(WORKER, worker, work_dir_retention_s, 86400, 0, RETENTION_S_MAX, RELOAD,
                "seconds after an application's last executor here ended before its working "
                "directories are removed; 0: keep them"),
        KEY_DAEMON_TLS(WORKER, worker),
        KEY_STRV(WORKER, worker, executor_properties, check_exec_property, RELOAD,
                 "unit properties of new executors, \"Name=value\", each replacing the built-in "
                 "sandbox's property of that name"),
        KEY_STRV(WORKER, worker, labels, check_label, RESTART,
                 "labels of this worker, which applications' constraints ask for"),
        KEY_RESOURCES(WORKER, worker, resources, RESTART,
                      "named resources offered to executors, NAME = { addresses = [...]; devices = [...]; } "
                      "or NAME = { discovery = \"/path\"; }"),

        KEY_STRING(DRIVER, driver, app_name, "default", check_app_name, RESTART,
                   "the application's name, as the master shows it"),
        KEY_ENDPOINT(DRIVER, driver, listen, "tcp://127.0.0.1:7091", RESTART,
                     "where the driver accepts executors and clients"),
        KEY_ENDPOINT(DRIVER, driver, events_listen, "tcp://127.0.0.1:7092", RESTART,
                     "where the driver publishes job events"),
        KEY_STRING(DRIVER, driver, http_listen, "127.0.0.1:4040", check_http_listen, RESTART,
                   "HOST:PORT of the driver's HTTP server (/metrics, /api/v1/, the web UI); a busy port: the next free one, up to 20 more; empty: none"),
        { ROW(DRIVER, driver, executor_listen, CONFIG_KEY_ENDPOINT, RESTART), .default_string = "",
          .validate = config_optional_endpoint_check,
          .description = "where executors reach the driver (tls+tcp:// asks them for no certificate); "
                         "empty: listen" },
        KEY_STRING(DRIVER, driver, advertise_host, "", check_host, RESTART,
                   "the host name executors use to reach the driver; empty: the host name"),
        KEY_BOOL(DRIVER, driver, task_channel, true, RESTART,
                 "executors of a tcp:// endpoint poll over a plain TCP connection the driver's loop reads itself, "
                 "and clients call there beside tcp://; false: over nng"),
        KEY_INT(DRIVER, driver, max_cores, 0, 0, 1048576, RESTART,
                "most cores the application uses in the cluster; 0: no cap"),
        KEY_INT(DRIVER, driver, cores_per_executor, 1, 1, CORES_MAX, RESTART,
                "cores of each executor"),
        KEY_INT(DRIVER, driver, executor_memory_mb, 1024, 16, MEMORY_MB_MAX, RESTART,
                "memory of each executor, in MiB (the unit's MemoryMax)"),
        KEY_INT(DRIVER, driver, task_max_failures, 4, 1, 1000, RELOAD,
                "failed attempts of one task after which its job fails"),
        KEY_INT(DRIVER, driver, locality_wait_ms, 3000, 0, MS_MAX, RELOAD,
                "how long a task waits for a slot on a preferred host"),
        KEY_INT(DRIVER, driver, executor_heartbeat_timeout_ms, 10000, 100, MS_MAX, RELOAD,
                "an executor silent for this long is lost"),
        KEY_INT(DRIVER, driver, max_result_mb, 1024, 1, 1048576, RELOAD,
                "most MiB of results one job may return"),
        KEY_STRING(DRIVER, driver, state_dir, "", check_optional_path, RESTART,
                   "where the driver journals its jobs and results, to survive a restart; empty: in memory only"),
        KEY_STRING(DRIVER, driver, journal_sync, "background", check_journal_sync, RESTART,
                   "when the journal reaches the disk: \"background\", synced by a thread at most every 2 ms "
                   "(a crash of the driver loses nothing, one of the host the last few ms); \"before-reply\", "
                   "before each answer that shows what it holds"),
        KEY_INT(DRIVER, driver, result_memory_mb, 128, 1, 1048576, RELOAD,
                "most MiB of results held in memory; with a state_dir, more go to disk"),
        KEY_ENV(DRIVER, driver, executor_env, RELOAD,
                "environment variables of new executors, NAME = \"value\""),
        KEY_INT(DRIVER, driver, weight, 1, 1, 1000, RESTART,
                "the application's weight in the master's fair share (master.scheduling \"fair\")"),
        KEY_DAEMON_TLS(DRIVER, driver),
        KEY_BOOL(DRIVER, driver, dynamic_allocation, false, RESTART,
                 "elastic executors: ask the master for executors by the backlog, release idle ones"),
        KEY_INT(DRIVER, driver, min_executors, 0, 0, 1000000, RELOAD,
                "with dynamic_allocation, the executors kept however idle the application is"),
        KEY_INT(DRIVER, driver, max_executors, 0, 0, 1000000, RELOAD,
                "with dynamic_allocation, the most executors asked for; 0: no cap"),
        KEY_INT(DRIVER, driver, executor_idle_timeout_ms, 60000, 1, MS_MAX, RELOAD,
                "with dynamic_allocation, an executor idle this long is released"),
        KEY_INT(DRIVER, driver, backlog_timeout_ms, 1000, 1, MS_MAX, RELOAD,
                "with dynamic_allocation, tasks waiting this long make the driver ask for more executors"),
        KEY_AMOUNTS(DRIVER, driver, executor_resources, 1, RESOURCE_AMOUNT_MAX, RESTART,
                    "named resources each executor is given, NAME = count"),
        KEY_STRV(DRIVER, driver, constraints, check_label, RESTART,
                 "labels a worker must carry to run this application's executors"),
};

static const char *const section_table[_CONFIG_SECTION_MAX] = {
        [CONFIG_SECTION_CLUSTER] = "cluster",
        [CONFIG_SECTION_MASTER] = "master",
        [CONFIG_SECTION_WORKER] = "worker",
        [CONFIG_SECTION_DRIVER] = "driver",
};

static const char *const key_type_table[_CONFIG_KEY_TYPE_MAX] = {
        [CONFIG_KEY_STRING] = "string",
        [CONFIG_KEY_ENDPOINT] = "endpoint",
        [CONFIG_KEY_INT] = "integer",
        [CONFIG_KEY_BOOL] = "boolean",
        [CONFIG_KEY_ENV] = "environment",
        [CONFIG_KEY_STRV] = "list of strings",
        [CONFIG_KEY_RESOURCES] = "resources",
        [CONFIG_KEY_AMOUNTS] = "amounts",
};

const char *config_section_to_string(ConfigSection s) {
        if (s < 0 || s >= _CONFIG_SECTION_MAX)
                return NULL;
        return section_table[s];
}

ConfigSection config_section_from_string(const char *s) {
        if (!s)
                return _CONFIG_SECTION_INVALID;
        for (ConfigSection i = 0; i < _CONFIG_SECTION_MAX; i++)
                if (streq(section_table[i], s))
                        return i;
        return _CONFIG_SECTION_INVALID;
}

const char *config_key_type_to_string(ConfigKeyType t) {
        if (t < 0 || t >= _CONFIG_KEY_TYPE_MAX)
                return NULL;
        return key_type_table[t];
}

const ConfigKey *config_schema(size_t *ret_n) {
        if (ret_n)
                *ret_n = ELEMENTSOF(schema);
        return schema;
}

const ConfigKey *config_key_find(ConfigSection section, const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(schema); i++)
                if (schema[i].section == section && streq(schema[i].name, name))
                        return schema + i;
        return NULL;
}

const ConfigKey *config_key_find_by_key(const char *key) {
        if (!key)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(schema); i++)
                if (streq(schema[i].key, key))
                        return schema + i;
        return NULL;
}

static bool has_cc_or_space(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s <= ' ' || *s == 0x7f)
                        return true;
        return false;
}

static bool has_cc(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < ' ' || *s == 0x7f)
                        return true;
        return false;
}

static const char *startswith(const char *s, const char *prefix) {
        size_t n = strlen(prefix);

        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

const char *config_endpoint_check(const char *s) {
        const char *rest, *colon, *p;
        unsigned long port = 0;

        if (!s)
                return "missing";
        if (has_cc_or_space(s))
                return "must not contain spaces or control characters";

        rest = startswith(s, "ipc://");
        if (rest)
                return *rest ? NULL : "ipc:// needs a path";

        rest = startswith(s, "tcp://");
        if (!rest)
                rest = startswith(s, "tls+tcp://");
        if (!rest)
                return "must start with tcp://, ipc:// or tls+tcp://";

        colon = strrchr(rest, ':');
        if (!colon)
                return "must end in :PORT";
        if (colon[1] == '\0' || strlen(colon + 1) > 5)
                return "the port must be a number in 0..65535";
        for (p = colon + 1; *p; p++) {
                if (!isdigit((unsigned char) *p))
                        return "the port must be a number in 0..65535";
                port = port * 10 + (unsigned long) (*p - '0');
        }
        if (port > 65535)
                return "the port must be a number in 0..65535";

        /* The host: empty (every address), a name, an IPv4 address or a
         * bracketed IPv6 address, as nng takes it. */
        if (rest < colon && rest[0] == '[') {
                if (colon[-1] != ']' || colon - rest < 3)
                        return "an IPv6 address must be in brackets";
                return NULL;
        }
        for (p = rest; p < colon; p++) {
                if (*p == ':')
                        return "an IPv6 address must be in brackets";
                if (*p == '/' || *p == '[' || *p == ']' || *p == '@')
                        return "invalid host";
        }
        return NULL;
}

bool config_env_name_is_valid(const char *s) {
        if (isempty(s) || strlen(s) > 255)
                return false;
        if (!isalpha((unsigned char) s[0]) && s[0] != '_')
                return false;
        for (const char *p = s + 1; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_')
                        return false;
        return true;
}

static bool ascii_only(const char *s, const char *extra) {
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && !strchr(extra, *s))
                        return false;
        return true;
}

static const char *check_absolute_path(const char *s) {
        if (s[0] != '/')
                return "must be an absolute path";
        if (has_cc(s))
                return "must not contain control characters";
        if (strlen(s) >= 4096)
                return "too long";
        return NULL;
}

static const char *check_optional_path(const char *s) {
        return isempty(s) ? NULL : check_absolute_path(s);
}

const char *config_optional_endpoint_check(const char *s) {
        return isempty(s) ? NULL : config_endpoint_check(s);
}

static const char *check_host(const char *s) {
        if (strlen(s) > 253)
                return "too long";
        if (!ascii_only(s, ".-_:[]%"))
                return "must be empty, a host name or an IP address";
        return NULL;
}

/* HOST:PORT, [V6]:PORT, or empty (no HTTP server). */
static const char *check_http_listen(const char *s) {
        const char *colon;
        char *end;
        unsigned long port;

        if (isempty(s))
                return NULL;
        colon = strrchr(s, ':');
        if (!colon || colon == s)
                return "must be empty or HOST:PORT";
        if (strlen(s) > 260 || !ascii_only(s, ".-_:[]%"))
                return "must be empty or HOST:PORT, with a host name or an IP address";
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        if (colon[1] < '0' || colon[1] > '9' || *end || errno || port > 65535)
                return "must be empty or HOST:PORT, with a port from 0 to 65535";
        return NULL;
}

const char *config_endpoint_list_check(const char *s) {
        const char *p, *comma, *why;
        char one[ENDPOINT_LIST_URL_MAX];
        size_t n = 0;

        if (!s)
                return "missing";
        for (p = s;; p = comma + 1) {
                size_t len;

                comma = strchr(p, ',');
                len = comma ? (size_t) (comma - p) : strlen(p);
                if (len == 0)
                        return "an empty endpoint in the list";
                if (len >= sizeof(one))
                        return "an endpoint in the list is too long";
                if (++n > ENDPOINT_LIST_MAX)
                        return "too many endpoints (at most 8)";
                memcpy(one, p, len);
                one[len] = '\0';
                why = config_endpoint_check(one);
                if (why)
                        return why;
                if (!comma)
                        return NULL;
        }
}

/* A check that takes one of two words, and says which in its error. */
#define DEFINE_CHECK_EITHER(name, a, b)                                                         \
        static const char *name(const char *s) {                                                \
                return streq(s, a) || streq(s, b) ? NULL : "must be \"" a "\" or \"" b "\"";         \
        }

DEFINE_CHECK_EITHER(check_recovery_mode, "filesystem", "zookeeper")
DEFINE_CHECK_EITHER(check_scheduling, "fifo", "fair")
DEFINE_CHECK_EITHER(check_journal_sync, "background", "before-reply")

/* The connect string zookeeper_init() takes: HOST:PORT[,HOST:PORT...],
 * optionally followed by a chroot path, which we do not use: zookeeper_dir
 * says where. */
static const char *check_zookeeper_hosts(const char *s) {
        if (strlen(s) > 1024)
                return "too long";
        if (!ascii_only(s, ".-_:[],"))
                return "must be \"HOST:PORT\", comma-separated";
        if (s[0] == ',' || (s[0] && s[strlen(s) - 1] == ',') || strstr(s, ",,"))
                return "an empty host in the list";
        return NULL;
}

static const char *check_znode_path(const char *s) {
        if (s[0] != '/' || s[1] == '\0')
                return "must be an absolute znode path other than /";
        if (strlen(s) > 512)
                return "too long";
        if (s[strlen(s) - 1] == '/' || strstr(s, "//"))
                return "must not end in / or hold an empty element";
        if (!ascii_only(s, "/.-_"))
                return "may hold letters, digits and /.-_ only";
        for (const char *e = s; e; e = strchr(e + 1, '/'))
                if (streq(e, "/.") || streq(e, "/..") || startswith(e, "/./") || startswith(e, "/../"))
                        return "must not hold . or .. elements";
        return NULL;
}

DEFINE_CHECK_EITHER(check_bus, "system", "user")

static const char *check_slice(const char *s) {
        size_t n = strlen(s);

        if (n <= strlen(".slice") || n > 255 || !streq(s + n - strlen(".slice"), ".slice") ||
            !ascii_only(s, ":_.-\\") || s[0] == '.' || s[0] == '-')
                return "must be a unit name ending in .slice";
        return NULL;
}

static const char *check_user(const char *s) {
        if (isempty(s))
                return "must not be empty";
        /* A user name as systemd's relaxed check takes it, or a UID. */
        if (strlen(s) > 32 || !ascii_only(s, "_.-") || s[0] == '-' || s[0] == '.')
                return "must be a user name or a UID";
        return NULL;
}

static const char *check_app_name(const char *s) {
        if (isempty(s))
                return "must not be empty";
        if (strlen(s) > 128)
                return "too long (at most 128 bytes)";
        if (has_cc(s))
                return "must not contain control characters";
        return NULL;
}

static const char *check_exec_property(const char *s, char *buf, size_t size) {
        ExecProperty p = {};
        int r;

        r = exec_property_parse(s, &p, buf, size);
        exec_property_done(&p);
        if (r == -ENOMEM)
                return "out of memory";
        return r < 0 ? buf : NULL;
}

static const char *check_label(const char *s, char *buf, size_t size) {
        if (resource_label_is_valid(s))
                return NULL;
        snprintf(buf, size, "invalid label: letters, digits and ._- not starting with . _ or -, at most %d bytes",
                 LABEL_MAX);
        return buf;
}
