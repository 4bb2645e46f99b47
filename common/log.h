/* Logging for the daemons: to the journal with structured fields when
 * running under systemd (JOURNAL_STREAM points at our stderr), to stderr
 * otherwise.  Only programs log; the rest of common/ returns errors. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

/* MESSAGE_IDs of the key events (journalctl MESSAGE_ID=...). */
#define SPARK_MESSAGE_WORKER_REGISTERED   "71fd255192894ef29e41e7fd928d7248"
#define SPARK_MESSAGE_WORKER_LOST         "e2e52f9e8541498b964403823d71c888"
#define SPARK_MESSAGE_EXECUTOR_LAUNCHED   "640e343a9e4e4f1d9839b3b47d15c633"
#define SPARK_MESSAGE_EXECUTOR_EXITED     "c4bf19d4d07048528aa4706fbcaf670d"
#define SPARK_MESSAGE_EXECUTOR_LOST       "6de9fe76ecc64406b624f0e727cdfc8a"
#define SPARK_MESSAGE_EXECUTOR_REGISTERED "bbcaeaf8d8664148991cf71443b87688"
#define SPARK_MESSAGE_APP_REGISTERED      "3a8034a69c924a579c59dedf5e8d2088"
#define SPARK_MESSAGE_APP_REMOVED         "94ed9599a89b47538f780ca75a698531"
#define SPARK_MESSAGE_JOB_SUBMITTED       "b8cfe4dac92f4c3f92006f42b2404edf"
#define SPARK_MESSAGE_JOB_FINISHED        "9c706f2bdb554c37b9c9329498aaa954"
#define SPARK_MESSAGE_TLS_REFUSED         "90b569b3beff473b96f719c40eb372b6"
/* cluster.insecure is set: logged at every start */
#define SPARK_MESSAGE_INSECURE            "60c2b902debc44b6b8a510164d1f53e1"
#define SPARK_MESSAGE_ROLE_REFUSED        "f84ae17c40cb4abbb33a6b1871b84391"
#define SPARK_MESSAGE_EXECUTOR_REFUSED    "f407a2a9b1c2403f8f8872ecf32227f9"
/* a worker removed a finished application's work dirs (worker.work_dir_retention_s) */
#define SPARK_MESSAGE_WORK_DIR_REMOVED    "64dfbc9fd9b44262a892b69300394179"
/* sparkctl drain: a worker starts draining, and has drained (no executors) */
#define SPARK_MESSAGE_WORKER_DRAINING     "a4183d86b05a4d3fbf85d4180cece914"
#define SPARK_MESSAGE_WORKER_DRAINED      "742fe8f62a5a45298db796a64134e60e"
/* the chargeback line: what an ended application's executors used */
#define SPARK_MESSAGE_APP_USAGE           "2aeb71a023b848faaf90892568713de9"
/* the master became the leader of its ZooKeeper election (docs/ha.md) */
#define SPARK_MESSAGE_MASTER_LEADER       "8ed35f825ca94f449fa951a76074df3c"
/* the leader lost its ZooKeeper connection (suspended) or session (deposed) */
#define SPARK_MESSAGE_MASTER_FENCED       "397984dd07a44c0baeb7a7f942c2519a"
/* elastic executors: a driver gave executors back (driver and master log it) */
#define SPARK_MESSAGE_EXECUTORS_RELEASED  "8f4f42f3cfb248c496886cc8a600ec72"
/* elastic executors: a driver changed the number of executors it wants */
#define SPARK_MESSAGE_EXECUTORS_WANTED    "38fbadc095ad449c860aa586ec08894b"
/* fair share: an executor taken back from an application above its share */
#define SPARK_MESSAGE_EXECUTOR_PREEMPTED  "6e81d6f446c34e68b50acd30eaa95a29"
/* a worker offers none of a named resource: its discovery script failed or
 * printed something it refuses (docs/resources.md) */
#define SPARK_MESSAGE_RESOURCE_DISCOVERY_FAILED "a07b8614fd9742f990555acbc47735c4"
/* the named resources and labels a worker offers, logged at its start */
#define SPARK_MESSAGE_RESOURCES_OFFERED   "237eb11226dd4775852d6ea6395490c2"

/* The structured fields of one log line; NULL / zero members are left out. */
typedef struct LogFields {
        const char *message_id;
        const char *app_id;
        int executor_id;           /* executor ids start at 1; 0: none */
        const char *worker_id;
        const char *job_id;
        const char *unit;          /* UNIT= for the executor's unit */
        const char *peer;          /* SPARK_PEER=: who asked (rpc_request_peer_describe()) */
} LogFields;

#define LOG_FIELDS(...) (&(const LogFields) { __VA_ARGS__ })

typedef enum LogTarget {
        LOG_TARGET_AUTO,
        LOG_TARGET_STDERR,
        LOG_TARGET_JOURNAL,
} LogTarget;

void log_setup(const char *identifier, LogTarget target);
void log_set_max_level(int level);
int log_get_max_level(void);
bool log_to_journal(void);

/* Returns -abs(error) (or 0 when error is 0), so that callers can write
 * `return log_error_errno(r, "Failed to ...: %m");`.  %m formats error. */
int log_internal(int level, int error, const LogFields *fields, const char *file, int line,
                 const char *func, const char *format, ...) _printf_(7, 8);

#define log_full_errno(level, error, fields, ...) \
        log_internal(level, error, fields, __FILE__, __LINE__, __func__, __VA_ARGS__)

#define log_debug(...)   log_full_errno(LOG_DEBUG, 0, NULL, __VA_ARGS__)
#define log_info(...)    log_full_errno(LOG_INFO, 0, NULL, __VA_ARGS__)
#define log_notice(...)  log_full_errno(LOG_NOTICE, 0, NULL, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, NULL, __VA_ARGS__)
#define log_error(...)   log_full_errno(LOG_ERR, 0, NULL, __VA_ARGS__)

#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, e, NULL, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, NULL, __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, e, NULL, __VA_ARGS__)

/* A line with structured fields: log_struct(LOG_INFO, LOG_FIELDS(.app_id = id,
 * .message_id = SPARK_MESSAGE_APP_REGISTERED), "Registered %s", id); */
#define log_struct(level, fields, ...) log_full_errno(level, 0, fields, __VA_ARGS__)
#define log_struct_errno(level, e, fields, ...) log_full_errno(level, e, fields, __VA_ARGS__)

#define log_oom() log_error_errno(ENOMEM, "Out of memory.")

int log_level_from_string(const char *s);
