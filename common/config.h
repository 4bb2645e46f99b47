/* Configuration: the keys of the /etc/spark files (spark.conf(5)), one schema row per
 * key, loaded with libconfig into a plain struct.  Nothing here logs: loading
 * returns every problem as a "FILE:LINE: message" string for the caller to print. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"
#include "tls.h"

#define CONFIG_DIR_DEFAULT "/etc/spark"
#define CONFIG_DIR_ENV "SPARK_CONF_DIR"
#define EXIT_CONFIG 78 /* EX_CONFIG from sysexits.h */

typedef struct SparkClusterConfig {
        char *master;        /* master's request endpoint */
        char *master_events; /* master's event endpoint */
        /* cluster.tls_ca_file, tls_cert_file, tls_key_file: "" when unset.
         * The strings are owned by the configuration (stored as char *).
         * A daemon's own <section>.tls_cert_file and tls_key_file take the
         * place of the last two: see config_tls_for(). */
        TlsSettings tls;
        bool insecure; /* plaintext tcp:// may listen beyond loopback */
} SparkClusterConfig;

typedef struct SparkMasterConfig {
        char *listen;
        char *events_listen;
        char *http_listen; /* HOST:PORT; "": no HTTP server */
        char *state_dir;
        int64_t worker_timeout_ms;
        bool spread_out;
        int64_t default_cores; /* 0: no cap */
        int64_t max_executor_retries;
        int64_t retained_apps;    /* finished applications kept as history */
        int64_t retained_workers; /* lost workers kept as history */
        int64_t driver_reconnect_ms; /* a driver gone without unregistering keeps its app this long */
        char *recovery_mode;  /* "filesystem" or "zookeeper" */
        char *zookeeper;      /* HOST:PORT,... */
        char *zookeeper_dir;  /* the masters' znode */
        int64_t zookeeper_session_timeout_ms;
        char *scheduling;     /* "fifo" or "fair" */
        int64_t preemption_timeout_ms;
        char *tls_cert_file; /* "": cluster.tls_cert_file */
        char *tls_key_file;  /* "": cluster.tls_key_file */
} SparkMasterConfig;

typedef struct SparkWorkerConfig {
        char *listen;
        char *events_listen;
        char *http_listen; /* HOST:PORT; "": no HTTP server */
        char *advertise_host; /* "": the host name */
        int64_t cores;        /* 0: detect */
        int64_t memory_mb;    /* 0: detect */
        int64_t memory_reserve_mb; /* not offered when memory_mb is detected */
        int64_t heartbeat_ms;
        char *systemd_bus; /* "system" or "user" */
        char *executor_slice;
        char *executor_user; /* ignored on the user bus */
        char *executor_binary;
        char *work_dir;
        int64_t work_dir_retention_s; /* 0: keep */
        char *tls_cert_file; /* "": cluster.tls_cert_file */
        char *tls_key_file;  /* "": cluster.tls_key_file */
        char **executor_properties; /* NULL-terminated "Name=value" (exec-property.h); NULL: none */
        char **labels;              /* NULL-terminated; NULL: none */
        /* NULL-terminated, one string per named resource in the form
         * resource_entry_parse() reads (resources.h); NULL: none */
        char **resources;
} SparkWorkerConfig;

typedef struct SparkDriverConfig {
        char *app_name;
        char *listen;
        char *events_listen;
        char *http_listen; /* HOST:PORT; "": no HTTP server */
        char *executor_listen; /* "": executors use listen */
        char *advertise_host; /* "": the host name */
        bool task_channel;    /* executors poll over a plain TCP stream (docs/DESIGN.md §4) */
        int64_t max_cores;    /* 0: no cap */
        int64_t cores_per_executor;
        int64_t executor_memory_mb;
        int64_t task_max_failures;
        int64_t locality_wait_ms;
        int64_t executor_heartbeat_timeout_ms;
        int64_t max_result_mb;
        char *state_dir;          /* "": no journal, jobs live in memory only */
        char *journal_sync;       /* "background" or "before-reply" (driver-journal.c) */
        int64_t result_memory_mb; /* results held in memory; beyond, on disk (with state_dir) */
        char **executor_env; /* NULL-terminated "NAME=value" strings, file order; NULL: none */
        int64_t weight;       /* in the master's fair share */
        char *tls_cert_file; /* "": cluster.tls_cert_file */
        char *tls_key_file;  /* "": cluster.tls_key_file */
        bool dynamic_allocation;        /* elastic executors (docs/elastic.md) */
        int64_t min_executors;
        int64_t max_executors;          /* 0: no cap */
        int64_t executor_idle_timeout_ms;
        int64_t backlog_timeout_ms;
        char **executor_resources; /* NULL-terminated "name=N" strings, file order; NULL: none */
        char **constraints;        /* NULL-terminated labels; NULL: none */
} SparkDriverConfig;

typedef struct SparkConfig {
        SparkClusterConfig cluster;
        SparkMasterConfig master;
        SparkWorkerConfig worker;
        SparkDriverConfig driver;
} SparkConfig;

typedef enum ConfigSection {
        CONFIG_SECTION_CLUSTER,
        CONFIG_SECTION_MASTER,
        CONFIG_SECTION_WORKER,
        CONFIG_SECTION_DRIVER,
        _CONFIG_SECTION_MAX,
        _CONFIG_SECTION_INVALID = -EINVAL,
} ConfigSection;

#define CONFIG_SECTION_MASK(s) (1u << (s))
#define CONFIG_SECTIONS_ALL ((1u << _CONFIG_SECTION_MAX) - 1)

typedef enum ConfigKeyType {
        CONFIG_KEY_STRING,   /* char *, checked by the row's validate() */
        CONFIG_KEY_ENDPOINT, /* char *: tcp://HOST:PORT, ipc://PATH or tls+tcp://HOST:PORT */
        CONFIG_KEY_INT,      /* int64_t within [min, max] (libconfig int or 64-bit int) */
        CONFIG_KEY_BOOL,     /* bool */
        CONFIG_KEY_ENV,      /* char **: a group of string settings, NAME = "value" */
        CONFIG_KEY_STRV,     /* char **: an array or list of strings, each checked by validate() */
        CONFIG_KEY_RESOURCES, /* char **: a group of named resources (worker.resources), resources.h */
        CONFIG_KEY_AMOUNTS,  /* char **: a group of name = integer, kept as "name=N" */
        _CONFIG_KEY_TYPE_MAX,
        _CONFIG_KEY_TYPE_INVALID = -EINVAL,
} ConfigKeyType;

/* One row of the schema.  Docs and tests iterate over config_schema(). */
typedef struct ConfigKey {
        ConfigSection section;
        const char *name; /* "worker_timeout_ms" */
        const char *key;  /* "master.worker_timeout_ms" */
        ConfigKeyType type;
        const char *default_string; /* STRING, ENDPOINT */
        int64_t default_int;        /* INT; BOOL as 0/1 */
        int64_t min, max;           /* INT */
        bool reloadable;            /* SIGHUP may change it at run time */
        size_t offset;              /* of the value in SparkConfig */
        /* STRING, ENDPOINT: NULL if the value is acceptable, else why not. */
        /* STRING, ENDPOINT, STRV (each element): NULL if the value is
         * acceptable, else why not.  STRV's may fill buf with the reason. */
        const char *(*validate)(const char *value);
        const char *(*validate_element)(const char *value, char *buf, size_t size);
        const char *description;
} ConfigKey;

const char *config_section_to_string(ConfigSection s);
ConfigSection config_section_from_string(const char *s);
const char *config_key_type_to_string(ConfigKeyType t);

/* The schema, in the order of spark.conf(5). */
const ConfigKey *config_schema(size_t *ret_n);
const ConfigKey *config_key_find(ConfigSection section, const char *name);
/* "master.worker_timeout_ms" */
const ConfigKey *config_key_find_by_key(const char *key);

static inline void *config_key_value(const ConfigKey *k, SparkConfig *c) {
        return (uint8_t *) c + k->offset;
}
static inline const void *config_key_value_const(const ConfigKey *k, const SparkConfig *c) {
        return (const uint8_t *) c + k->offset;
}

/* Validators used by the schema, exported for the tests and for other checks
 * of the same values (e.g. sparkctl --master URL). NULL: valid; else why not. */
const char *config_endpoint_check(const char *s);
/* The same, but "" (not set) is valid too. */
const char *config_optional_endpoint_check(const char *s);
/* One or more endpoints, comma-separated (cluster.master). */
const char *config_endpoint_list_check(const char *s);
bool config_env_name_is_valid(const char *s);

/* Fills *c with every default.  *c must not own anything (it is overwritten). */
int config_defaults(SparkConfig *c);
/* Frees what *c owns and zeroes it; NULL-safe, may be called twice.
 * Usable as _cleanup_(config_done) SparkConfig c = {}; */
void config_done(SparkConfig *c);

bool config_key_equal(const ConfigKey *k, const SparkConfig *a, const SparkConfig *b);
/* The value in libconfig syntax ("10000", "true", "\"tcp://…\"", "{ A = \"b\"; }"). */
int config_key_format_value(const ConfigKey *k, const SparkConfig *c, char **ret);

/* Loads the file at path (and what it @includes) over the defaults.
 * @include paths are relative to path's directory, also in nested includes
 * (libconfig 1.5 has one include directory); absolute ones are refused.
 * Settings of every section may be in any of the files.  On success fills *ret (overwritten, not
 * freed first) and returns 0.  On failure *ret is untouched and returns
 * -EINVAL for errors in the configuration, -errno if the file cannot be
 * read; if ret_errors is not NULL, *ret_errors then gets every error as a
 * NULL-terminated list of "FILE:LINE: message" lines (free with
 * config_errors_free()), and is set to NULL on success. */
int config_load(const char *path, SparkConfig *ret, char ***ret_errors);
char **config_errors_free(char **errors);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, config_errors_free);

/* For SIGHUP: the keys (of the sections in the mask) whose values differ
 * between old and new.  *ret_changed (if not NULL) gets them as a
 * NULL-terminated array in schema order (free() it; the rows are static).
 * Returns how many of them cannot change at run time (0: everything may be
 * applied), or -errno. */
int config_diff_reloadable(
                const SparkConfig *old,
                const SparkConfig *new,
                unsigned sections,
                const ConfigKey ***ret_changed);
/* Copies every reloadable key from new into *c; the others keep their value. */
int config_apply_reloadable(SparkConfig *c, const SparkConfig *new);

/* The TLS settings the daemon of section s (master, worker or driver) uses
 * for every listener and dialer: the cluster CA, and its own certificate and
 * key (<section>.tls_cert_file, tls_key_file) if set, else the cluster's.
 * For CONFIG_SECTION_CLUSTER: cluster.tls_* alone.  The strings belong to
 * c; "" or NULL where nothing is set. */
TlsSettings config_tls_for(const SparkConfig *c, ConfigSection s);

/* Whether url is a plaintext tcp:// endpoint whose host is not a loopback
 * address (127.0.0.0/8, ::1, localhost): "", 0.0.0.0 and [::] listen on
 * every address, a host name may resolve to anything.  ipc:// and
 * tls+tcp:// never are. */
bool config_endpoint_beyond_loopback(const char *url);
/* Whether k is a listen key (an endpoint whose name ends in "listen") and
 * its value in c is a plaintext endpoint beyond loopback, which config_load()
 * refuses unless cluster.insecure is set. */
bool config_key_listens_beyond_loopback(const ConfigKey *k, const SparkConfig *c);

/* Whether the TLS files the configuration names can be used (config_load()
 * checks only that they are readable): loads them as the sockets will, for
 * the cluster's settings and each daemon's own.  Returns 0 (also when TLS
 * is not configured), or a negative errno with a message in error. */
int config_check_tls(const SparkConfig *c, char *error, size_t error_size);

/* --check-config: prints "configuration OK" and returns 0, or prints each
 * error line and returns EXIT_CONFIG.  Includes config_check_tls(). */
int config_check_main(const char *path, FILE *out);

/* "$SPARK_CONF_DIR/<name>.conf", else "/etc/spark/<name>.conf"; name is
 * e.g. "master" or "driver-NAME". */
int config_default_path(const char *name, char **ret);
