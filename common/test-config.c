/* Configuration loading: defaults, the schema, golden files (good-*.conf →
 * .ok dump, bad-*.conf → exact .err output), every key's range and type,
 * includes, the SIGHUP diff, --check-config and the default path.
 * Runs from the source root: data is read from tests/data/config. */
#include <check.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-run.h"
#include "config.h"
#include "macro.h"

#define DATA "tests/data/config"

static void *freed(void *p) {
        free(p);
        return NULL;
}

static char *read_text(const char *path) {
        _cleanup_fclose_ FILE *f = NULL;
        char *buf = NULL;
        size_t size = 0, n;
        char chunk[4096];
        FILE *m;

        f = fopen(path, "re");
        ck_assert_msg(f, "cannot open %s", path);
        m = open_memstream(&buf, &size);
        ck_assert(m);
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                fwrite(chunk, 1, n, m);
        ck_assert_int_eq(fclose(m), 0);
        return buf;
}

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ck_assert_msg(f, "cannot create %s", path);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

/* The lines joined as a file holds them: each ends in a newline. */
static char *join_lines(char **lines) {
        char *buf = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&buf, &size);

        ck_assert(m);
        for (char **l = lines; l && *l; l++)
                fprintf(m, "%s\n", *l);
        ck_assert_int_eq(fclose(m), 0);
        return buf;
}

/* "section.key = value" for every key, in schema order: the .ok format. */
static char *dump(const SparkConfig *c) {
        const ConfigKey *schema;
        char *buf = NULL;
        size_t n, size = 0;
        FILE *m = open_memstream(&buf, &size);

        ck_assert(m);
        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *v = NULL;

                ck_assert_int_eq(config_key_format_value(schema + i, c, &v), 0);
                fprintf(m, "%s = %s\n", schema[i].key, v);
        }
        ck_assert_int_eq(fclose(m), 0);
        return buf;
}

static char *replace_suffix(const char *path, const char *suffix) {
        const char *dot = strrchr(path, '.');
        char *s;

        ck_assert(dot);
        ck_assert_int_ge(asprintf(&s, "%.*s%s", (int) (dot - path), path, suffix), 0);
        return s;
}

static char tmp_dir[PATH_MAX];

static void tmp_setup(void) {
        strcpy(tmp_dir, "/tmp/test-config-XXXXXX");
        ck_assert(mkdtemp(tmp_dir));
}

static void tmp_teardown(void) {
        char path[PATH_MAX + 16];

        snprintf(path, sizeof(path), "%s/t.conf", tmp_dir);
        (void) unlink(path);
        ck_assert_int_eq(rmdir(tmp_dir), 0);
}

/* Writes text to a file in the temporary directory and loads it. */
static int load_text(const char *text, SparkConfig *c, char ***errors, char **ret_path) {
        char *path;
        int r;

        ck_assert_int_ge(asprintf(&path, "%s/t.conf", tmp_dir), 0);
        write_text(path, text);
        r = config_load(path, c, errors);
        if (ret_path)
                *ret_path = path;
        else
                free(path);
        return r;
}

/* spark.conf(5), written out independently of the schema table. */
static const struct {
        const char *key, *value;
} spec_defaults[] = {
        { "cluster.master", "\"tcp://127.0.0.1:7077\"" },
        { "cluster.master_events", "\"tcp://127.0.0.1:7078\"" },
        { "cluster.tls_ca_file", "\"\"" },
        { "cluster.tls_cert_file", "\"\"" },
        { "cluster.tls_key_file", "\"\"" },
        { "cluster.insecure", "false" },
        { "master.listen", "\"tcp://127.0.0.1:7077\"" },
        { "master.events_listen", "\"tcp://127.0.0.1:7078\"" },
        { "master.http_listen", "\"127.0.0.1:8080\"" },
        { "master.state_dir", "\"/var/lib/spark/master\"" },
        { "master.worker_timeout_ms", "10000" },
        { "master.spread_out", "true" },
        { "master.default_cores", "0" },
        { "master.max_executor_retries", "10" },
        { "master.retained_apps", "200" },
        { "master.retained_workers", "100" },
        { "master.driver_reconnect_ms", "30000" },
        { "master.recovery_mode", "\"filesystem\"" },
        { "master.zookeeper", "\"\"" },
        { "master.zookeeper_dir", "\"/spark\"" },
        { "master.zookeeper_session_timeout_ms", "6000" },
        { "master.scheduling", "\"fifo\"" },
        { "master.preemption_timeout_ms", "30000" },
        { "master.tls_cert_file", "\"\"" },
        { "master.tls_key_file", "\"\"" },
        { "worker.listen", "\"tcp://127.0.0.1:7081\"" },
        { "worker.events_listen", "\"tcp://127.0.0.1:7082\"" },
        { "worker.http_listen", "\"127.0.0.1:8081\"" },
        { "worker.advertise_host", "\"\"" },
        { "worker.cores", "0" },
        { "worker.memory_mb", "0" },
        { "worker.memory_reserve_mb", "1024" },
        { "worker.heartbeat_ms", "1000" },
        { "worker.systemd_bus", "\"system\"" },
        { "worker.executor_slice", "\"spark-executors.slice\"" },
        { "worker.executor_user", "\"dynamic\"" },
        { "worker.executor_binary", "\"/usr/lib/spark/spark-executor\"" },
        { "worker.work_dir", "\"/var/lib/spark/work\"" },
        { "worker.work_dir_retention_s", "86400" },
        { "worker.tls_cert_file", "\"\"" },
        { "worker.tls_key_file", "\"\"" },
        { "worker.executor_properties", "[ ]" },
        { "worker.labels", "[ ]" },
        { "worker.resources", "{ }" },
        { "driver.app_name", "\"default\"" },
        { "driver.listen", "\"tcp://127.0.0.1:7091\"" },
        { "driver.events_listen", "\"tcp://127.0.0.1:7092\"" },
        { "driver.http_listen", "\"127.0.0.1:4040\"" },
        { "driver.executor_listen", "\"\"" },
        { "driver.advertise_host", "\"\"" },
        { "driver.task_channel", "true" },
        { "driver.max_cores", "0" },
        { "driver.cores_per_executor", "1" },
        { "driver.executor_memory_mb", "1024" },
        { "driver.task_max_failures", "4" },
        { "driver.locality_wait_ms", "3000" },
        { "driver.executor_heartbeat_timeout_ms", "10000" },
        { "driver.max_result_mb", "1024" },
        { "driver.state_dir", "\"\"" },
        { "driver.journal_sync", "\"background\"" },
        { "driver.result_memory_mb", "128" },
        { "driver.executor_env", "{ }" },
        { "driver.weight", "1" },
        { "driver.tls_cert_file", "\"\"" },
        { "driver.tls_key_file", "\"\"" },
        { "driver.dynamic_allocation", "false" },
        { "driver.min_executors", "0" },
        { "driver.max_executors", "0" },
        { "driver.executor_idle_timeout_ms", "60000" },
        { "driver.backlog_timeout_ms", "1000" },
        { "driver.executor_resources", "{ }" },
        { "driver.constraints", "[ ]" },
};

static const char *const expected_reloadable[] = {
        "master.worker_timeout_ms",
        "master.spread_out",
        "master.default_cores",
        "master.max_executor_retries",
        "master.retained_apps",
        "master.retained_workers",
        "master.scheduling",
        "master.preemption_timeout_ms",
        "master.driver_reconnect_ms",
        "worker.heartbeat_ms",
        "worker.executor_slice",
        "worker.executor_binary",
        "worker.executor_properties",
        "worker.work_dir_retention_s",
        "driver.task_max_failures",
        "driver.locality_wait_ms",
        "driver.executor_heartbeat_timeout_ms",
        "driver.max_result_mb",
        "driver.result_memory_mb",
        "driver.executor_env",
        "driver.min_executors",
        "driver.max_executors",
        "driver.executor_idle_timeout_ms",
        "driver.backlog_timeout_ms",
};

START_TEST(test_defaults) {
        _cleanup_(config_done) SparkConfig c = {};
        size_t n;

        ck_assert_int_eq(config_defaults(&c), 0);
        config_schema(&n);
        ck_assert_int_eq(n, ELEMENTSOF(spec_defaults));
        for (size_t i = 0; i < ELEMENTSOF(spec_defaults); i++) {
                const ConfigKey *k = config_key_find_by_key(spec_defaults[i].key);
                _cleanup_free_ char *v = NULL;

                ck_assert_msg(k, "no key %s", spec_defaults[i].key);
                ck_assert_int_eq(config_key_format_value(k, &c, &v), 0);
                ck_assert_msg(streq(v, spec_defaults[i].value), "%s: %s, expected %s", k->key, v,
                              spec_defaults[i].value);
        }

        /* The offsets lead to the fields of the same names. */
        ck_assert_str_eq(c.cluster.master, "tcp://127.0.0.1:7077");
        ck_assert_str_eq(c.cluster.master_events, "tcp://127.0.0.1:7078");
        ck_assert_str_eq(c.master.state_dir, "/var/lib/spark/master");
        ck_assert_int_eq(c.master.worker_timeout_ms, 10000);
        ck_assert(c.master.spread_out);
        ck_assert_int_eq(c.master.max_executor_retries, 10);
        ck_assert_str_eq(c.worker.events_listen, "tcp://127.0.0.1:7082");
        ck_assert_int_eq(c.worker.heartbeat_ms, 1000);
        ck_assert_str_eq(c.worker.systemd_bus, "system");
        ck_assert_str_eq(c.worker.executor_user, "dynamic");
        ck_assert_ptr_null(c.worker.executor_properties);
        ck_assert_str_eq(c.worker.work_dir, "/var/lib/spark/work");
        ck_assert_str_eq(c.driver.app_name, "default");
        ck_assert_str_eq(c.driver.advertise_host, "");
        ck_assert_int_eq(c.driver.executor_memory_mb, 1024);
        ck_assert_int_eq(c.driver.executor_heartbeat_timeout_ms, 10000);
        ck_assert_ptr_null(c.driver.executor_env);

        config_done(&c);
        ck_assert_ptr_null(c.cluster.master);
        config_done(&c);
        config_done(NULL);
        ck_assert_int_eq(config_defaults(NULL), -EINVAL);
}
END_TEST

START_TEST(test_schema) {
        _cleanup_(config_done) SparkConfig c = {};
        const ConfigKey *schema;
        size_t n, n_reloadable = 0;

        ck_assert_int_eq(config_defaults(&c), 0);
        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                const ConfigKey *k = schema + i;
                _cleanup_free_ char *key = NULL;
                bool reloadable = false;

                ck_assert_int_ge(asprintf(&key, "%s.%s", config_section_to_string(k->section), k->name), 0);
                ck_assert_str_eq(key, k->key);
                ck_assert_ptr_eq(config_key_find(k->section, k->name), k);
                ck_assert_ptr_eq(config_key_find_by_key(k->key), k);
                ck_assert(config_key_type_to_string(k->type));
                ck_assert(!isempty(k->description));
                ck_assert(k->offset < sizeof(SparkConfig));
                for (size_t j = 0; j < i; j++) {
                        ck_assert(!streq(schema[j].key, k->key));
                        ck_assert(schema[j].offset != k->offset);
                }
                if (k->type == CONFIG_KEY_INT) {
                        ck_assert(k->min <= k->default_int && k->default_int <= k->max);
                        ck_assert(k->min >= 0);
                }
                if (k->type == CONFIG_KEY_ENDPOINT)
                        ck_assert(k->validate == config_endpoint_check ||
                                  k->validate == config_optional_endpoint_check ||
                                  k->validate == config_endpoint_list_check);
                if (k->type == CONFIG_KEY_STRING || k->type == CONFIG_KEY_ENDPOINT) {
                        ck_assert_ptr_nonnull(k->default_string);
                        ck_assert_msg(!k->validate || !k->validate(k->default_string),
                                      "%s: default rejected", k->key);
                }
                for (size_t j = 0; j < ELEMENTSOF(expected_reloadable); j++)
                        if (streq(expected_reloadable[j], k->key))
                                reloadable = true;
                ck_assert_msg(k->reloadable == reloadable, "%s reloadable=%d", k->key, k->reloadable);
                n_reloadable += k->reloadable;
                /* No endpoint, directory or bus changes at run time (a
                 * directory's retention time may). */
                if (k->type == CONFIG_KEY_ENDPOINT || (strstr(k->name, "_dir") && k->type != CONFIG_KEY_INT) ||
                    strstr(k->name, "bus"))
                        ck_assert(!k->reloadable);
        }
        ck_assert_int_eq(n_reloadable, ELEMENTSOF(expected_reloadable));

        ck_assert_ptr_null(config_key_find(CONFIG_SECTION_MASTER, "cores"));
        ck_assert_ptr_null(config_key_find(CONFIG_SECTION_MASTER, NULL));
        ck_assert_ptr_null(config_key_find_by_key("master"));
        ck_assert_ptr_null(config_key_find_by_key(NULL));
        ck_assert_int_eq(config_section_from_string("driver"), CONFIG_SECTION_DRIVER);
        ck_assert_int_eq(config_section_from_string("drivers"), -EINVAL);
        ck_assert_int_eq(config_section_from_string(NULL), -EINVAL);
        ck_assert_ptr_null(config_section_to_string(_CONFIG_SECTION_MAX));
        ck_assert_ptr_null(config_section_to_string(_CONFIG_SECTION_INVALID));
        ck_assert_str_eq(config_key_type_to_string(CONFIG_KEY_ENV), "environment");
        ck_assert_ptr_null(config_key_type_to_string(_CONFIG_KEY_TYPE_MAX));
}
END_TEST

static size_t for_each_data_file(const char *pattern, void (*f)(const char *path)) {
        glob_t g = {};
        size_t n;

        ck_assert_int_eq(glob(pattern, 0, NULL, &g), 0);
        for (size_t i = 0; i < g.gl_pathc; i++)
                f(g.gl_pathv[i]);
        n = g.gl_pathc;
        globfree(&g);
        return n;
}

static void check_good_file(const char *path) {
        _cleanup_(config_done) SparkConfig c = {};
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_free_ char *ok_path = replace_suffix(path, ".ok"), *expected = NULL, *got = NULL,
                            *joined = NULL;
        int r;

        r = config_load(path, &c, &errors);
        joined = join_lines(errors);
        ck_assert_msg(r == 0, "%s: %d:\n%s", path, r, joined);
        ck_assert_ptr_null(errors);
        expected = read_text(ok_path);
        got = dump(&c);
        ck_assert_msg(streq(got, expected), "%s:\n%s\nexpected:\n%s", path, got, expected);
}

START_TEST(test_good_golden) {
        ck_assert_int_ge(for_each_data_file(DATA "/good-*.conf", check_good_file), 5);
}
END_TEST

static void check_bad_file(const char *path) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_free_ char *err_path = replace_suffix(path, ".err"), *expected = NULL, *got = NULL;
        SparkConfig c, untouched;
        int r;

        memset(&c, 0xab, sizeof(c));
        memcpy(&untouched, &c, sizeof(c));
        r = config_load(path, &c, &errors);
        ck_assert_msg(r == -EINVAL, "%s: %d", path, r);
        ck_assert_msg(memcmp(&c, &untouched, sizeof(c)) == 0, "%s: result changed on failure", path);
        ck_assert_ptr_nonnull(errors);
        ck_assert_ptr_nonnull(errors[0]);
        expected = read_text(err_path);
        got = join_lines(errors);
        ck_assert_msg(streq(got, expected), "%s:\n%s\nexpected:\n%s", path, got, expected);

        /* Without an error list the result is the same. */
        ck_assert_int_eq(config_load(path, &c, NULL), -EINVAL);
        ck_assert(memcmp(&c, &untouched, sizeof(c)) == 0);
}

START_TEST(test_bad_golden) {
        ck_assert_int_ge(for_each_data_file(DATA "/bad-*.conf", check_bad_file), 13);
}
END_TEST

START_TEST(test_good_values) {
        _cleanup_(config_done) SparkConfig m = {}, a = {};
        _cleanup_(config_errors_freep) char **errors = NULL;

        /* The included file's settings and the including file's, defaults for the rest. */
        ck_assert_int_eq(config_load(DATA "/good-master.conf", &m, &errors), 0);
        ck_assert_str_eq(m.cluster.master, "tcp://10.0.0.1:7077");
        ck_assert_str_eq(m.cluster.master_events, "tcp://10.0.0.1:7078");
        ck_assert_str_eq(m.master.listen, "tcp://127.0.0.2:9077");
        ck_assert_str_eq(m.master.events_listen, "tcp://127.0.0.1:7078");
        ck_assert_str_eq(m.master.state_dir, "/srv/spark/master");
        ck_assert_int_eq(m.master.worker_timeout_ms, 5000);
        ck_assert(!m.master.spread_out);
        ck_assert_int_eq(m.master.default_cores, 8);
        ck_assert_int_eq(m.master.max_executor_retries, 10);
        ck_assert_str_eq(m.worker.systemd_bus, "system");

        ck_assert_int_eq(config_load(DATA "/good-all.conf", &a, &errors), 0);
        ck_assert_int_eq(a.worker.memory_mb, INT64_C(1) << 30);
        ck_assert_int_eq(a.worker.heartbeat_ms, 500);
        ck_assert_str_eq(a.worker.executor_slice, "spark\\x2dtest.slice");
        ck_assert_str_eq(a.driver.app_name, "word count \"nightly\"");
        ck_assert_ptr_nonnull(a.driver.executor_env);
        ck_assert_str_eq(a.driver.executor_env[0], "PATH=/usr/bin:/bin");
        ck_assert_str_eq(a.driver.executor_env[1], "lower_case=");
        ck_assert_str_eq(a.driver.executor_env[2], "LANG=C.UTF-8");
        ck_assert_str_eq(a.driver.executor_env[3], "MULTI=two\nlines\ttab");
        ck_assert_ptr_null(a.driver.executor_env[4]);
}
END_TEST

START_TEST(test_include_paths) {
        _cleanup_(config_done) SparkConfig c = {};
        _cleanup_(config_errors_freep) char **errors = NULL;
        _cleanup_free_ char *abs = NULL, *expected = NULL;
        char cwd[PATH_MAX];

        /* By an absolute path from another directory: the include is found
         * beside the including file, and errors name the files absolutely. */
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
        abs = realpath(DATA "/bad-include.conf", NULL);
        ck_assert_ptr_nonnull(abs);
        ck_assert_int_eq(chdir("/"), 0);
        ck_assert_int_eq(config_load(abs, &c, &errors), -EINVAL);
        ck_assert_int_ge(asprintf(&expected,
                                  "%s/%s/inc-errors.conf:3: cluster.master: invalid value "
                                  "\"udp://10.0.0.1:7077\": must start with tcp://, ipc:// or tls+tcp://",
                                  cwd, DATA),
                         0);
        ck_assert_ptr_nonnull(errors[1]);
        ck_assert_str_eq(errors[1], expected);
        ck_assert(strncmp(errors[0], abs, strlen(abs)) == 0);
        errors = config_errors_free(errors);
        ck_assert_int_eq(chdir(cwd), 0);

        /* A top file in the current directory: names stay as written. */
        ck_assert_int_eq(chdir(DATA), 0);
        ck_assert_int_eq(config_load("good-master.conf", &c, &errors), 0);
        ck_assert_str_eq(c.cluster.master, "tcp://10.0.0.1:7077");
        config_done(&c);
        ck_assert_int_eq(config_load("bad-include-syntax.conf", &c, &errors), -EINVAL);
        ck_assert_str_eq(errors[0], "inc-syntax.conf:3: syntax error");
        ck_assert_ptr_null(errors[1]);
        ck_assert_int_eq(chdir(cwd), 0);
}
END_TEST

START_TEST(test_ranges) {
        const ConfigKey *schema;
        size_t n, checked = 0;

        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                const ConfigKey *k = schema + i;
                const int64_t values[] = { k->min, k->max, k->min - 1, k->max + 1, -(INT64_C(1) << 40) };

                if (k->type != CONFIG_KEY_INT)
                        continue;
                for (size_t j = 0; j < ELEMENTSOF(values); j++) {
                        _cleanup_(config_done) SparkConfig c = {};
                        _cleanup_(config_errors_freep) char **errors = NULL;
                        _cleanup_free_ char *text = NULL, *path = NULL, *expected = NULL;
                        bool ok = values[j] >= k->min && values[j] <= k->max;
                        int r;

                        /* Values beyond 32 bits need libconfig's L suffix. */
                        ck_assert_int_ge(asprintf(&text, "\n%s: {\n  %s = %" PRId64 "%s;\n};\n",
                                                  config_section_to_string(k->section), k->name, values[j],
                                                  values[j] < INT32_MIN || values[j] > INT32_MAX ? "L" : ""),
                                         0);
                        r = load_text(text, &c, &errors, &path);
                        if (ok) {
                                ck_assert_msg(r == 0, "%s = %" PRId64 ": %d", k->key, values[j], r);
                                ck_assert_int_eq(*(const int64_t *) config_key_value_const(k, &c), values[j]);
                                continue;
                        }
                        ck_assert_int_eq(r, -EINVAL);
                        ck_assert_int_ge(asprintf(&expected,
                                                  "%s:3: %s: value %" PRId64 " out of range (%" PRId64 "..%" PRId64 ")",
                                                  path, k->key, values[j], k->min, k->max),
                                         0);
                        ck_assert_str_eq(errors[0], expected);
                        ck_assert_ptr_null(errors[1]);
                }
                checked++;
        }
        ck_assert_int_eq(checked, 26);
}
END_TEST

START_TEST(test_types) {
        const ConfigKey *schema;
        size_t n;

        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                const ConfigKey *k = schema + i;
                static const struct {
                        const char *text, *got;
                } wrong[] = {
                        { "\"7\"", "a string" }, { "7", "an integer" },     { "7L", "an integer" },
                        { "7.0", "a float" },    { "true", "a boolean" },   { "[ 1 ]", "an array" },
                        { "( )", "a list" },     { "{ A = \"b\"; }", "a group" },
                };
                const char *expected_type =
                        k->type == CONFIG_KEY_INT  ? "an integer" :
                        k->type == CONFIG_KEY_BOOL ? "a boolean" :
                        k->type == CONFIG_KEY_ENV  ? "a group" :
                        k->type == CONFIG_KEY_RESOURCES ? "a group" :
                        k->type == CONFIG_KEY_AMOUNTS ? "a group" :
                        k->type == CONFIG_KEY_STRV ? "an array of strings" :
                                                     "a string";

                for (size_t j = 0; j < ELEMENTSOF(wrong); j++) {
                        _cleanup_(config_done) SparkConfig c = {};
                        _cleanup_(config_errors_freep) char **errors = NULL;
                        _cleanup_free_ char *text = NULL, *path = NULL, *expected = NULL;
                        int r;

                        if (streq(wrong[j].got, expected_type))
                                continue;
                        /* an array or a list is a list of strings' type; its elements are checked elsewhere */
                        if (k->type == CONFIG_KEY_STRV && (streq(wrong[j].got, "an array") || streq(wrong[j].got, "a list")))
                                continue;
                        ck_assert_int_ge(asprintf(&text, "%s: { %s = %s; };\n",
                                                  config_section_to_string(k->section), k->name, wrong[j].text),
                                         0);
                        r = load_text(text, &c, &errors, &path);
                        ck_assert_msg(r == -EINVAL, "%s = %s: %d", k->key, wrong[j].text, r);
                        ck_assert_int_ge(asprintf(&expected, "%s:1: %s: expected %s, got %s",
                                                  path, k->key, expected_type, wrong[j].got),
                                         0);
                        ck_assert_str_eq(errors[0], expected);
                        ck_assert_ptr_null(errors[1]);
                }
        }
}
END_TEST

START_TEST(test_unknown) {
        for (ConfigSection s = 0; s < _CONFIG_SECTION_MAX; s++) {
                _cleanup_(config_done) SparkConfig c = {};
                _cleanup_(config_errors_freep) char **errors = NULL;
                _cleanup_free_ char *text = NULL, *path = NULL, *expected = NULL;

                ck_assert_int_ge(asprintf(&text, "# x\n%s: {\n  nope = 1;\n};\n", config_section_to_string(s)), 0);
                ck_assert_int_eq(load_text(text, &c, &errors, &path), -EINVAL);
                ck_assert_int_ge(asprintf(&expected, "%s:3: unknown key '%s.nope'", path,
                                          config_section_to_string(s)),
                                 0);
                ck_assert_str_eq(errors[0], expected);
                ck_assert_ptr_null(errors[1]);
        }
}
END_TEST

START_TEST(test_unreadable) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        SparkConfig c, untouched;

        memset(&c, 0x5a, sizeof(c));
        memcpy(&untouched, &c, sizeof(c));
        ck_assert_int_eq(config_load(DATA "/no-such.conf", &c, &errors), -ENOENT);
        ck_assert_str_eq(errors[0], DATA "/no-such.conf: cannot open: No such file or directory");
        ck_assert_ptr_null(errors[1]);
        errors = config_errors_free(errors);
        ck_assert_int_eq(config_load(DATA, &c, &errors), -EISDIR);
        ck_assert_str_eq(errors[0], DATA ": cannot open: Is a directory");
        errors = config_errors_free(errors);
        ck_assert(memcmp(&c, &untouched, sizeof(c)) == 0);

        ck_assert_int_eq(config_load(NULL, &c, &errors), -EINVAL);
        ck_assert_ptr_null(errors);
        ck_assert_int_eq(config_load("", &c, &errors), -EINVAL);
        ck_assert_int_eq(config_load(DATA "/good-empty.conf", NULL, &errors), -EINVAL);
        ck_assert_ptr_null(config_errors_free(NULL));
}
END_TEST

static bool changed_has(const ConfigKey **changed, const char *key) {
        for (; changed && *changed; changed++)
                if (streq((*changed)->key, key))
                        return true;
        return false;
}

START_TEST(test_reload_diff) {
        _cleanup_(config_done) SparkConfig running = {}, next = {};
        _cleanup_free_ const ConfigKey **changed = NULL;
        const ConfigKey *k;
        char *env[] = { (char *) "A=1", NULL };
        int r;

        ck_assert_int_eq(config_load(DATA "/good-master.conf", &running, NULL), 0);
        ck_assert_int_eq(config_load(DATA "/good-master.conf", &next, NULL), 0);
        ck_assert_int_eq(config_diff_reloadable(&running, &next, CONFIG_SECTIONS_ALL, &changed), 0);
        ck_assert_ptr_null(changed[0]);
        changed = freed(changed);

        /* Reloadable only. */
        next.master.worker_timeout_ms = 2500;
        next.master.spread_out = true;
        ck_assert_int_eq(config_diff_reloadable(&running, &next, CONFIG_SECTIONS_ALL, &changed), 0);
        ck_assert_str_eq(changed[0]->key, "master.worker_timeout_ms");
        ck_assert_str_eq(changed[1]->key, "master.spread_out");
        ck_assert_ptr_null(changed[2]);
        changed = freed(changed);

        /* Plus two that need a restart, one of them outside the master's sections. */
        free(next.cluster.master);
        next.cluster.master = strdup("ipc:///run/spark/master");
        free(next.worker.systemd_bus);
        next.worker.systemd_bus = strdup("user");
        ck_assert_int_eq(config_diff_reloadable(&running, &next, CONFIG_SECTIONS_ALL, &changed), 2);
        ck_assert_str_eq(changed[0]->key, "cluster.master"); /* schema order */
        ck_assert(changed_has(changed, "worker.systemd_bus"));
        ck_assert_ptr_null(changed[4]);
        changed = freed(changed);
        ck_assert_int_eq(config_diff_reloadable(&running, &next,
                                                CONFIG_SECTION_MASK(CONFIG_SECTION_MASTER), &changed),
                         0);
        ck_assert(!changed_has(changed, "cluster.master"));
        ck_assert(changed_has(changed, "master.worker_timeout_ms"));
        changed = freed(changed);
        ck_assert_int_eq(config_diff_reloadable(&running, &next,
                                                CONFIG_SECTION_MASK(CONFIG_SECTION_CLUSTER) |
                                                        CONFIG_SECTION_MASK(CONFIG_SECTION_MASTER),
                                                NULL),
                         1);

        /* The environment, and applying: reloadable keys move, the rest stay. */
        config_done(&next);
        ck_assert_int_eq(config_load(DATA "/good-all.conf", &next, NULL), 0);
        ck_assert_int_gt(config_diff_reloadable(&running, &next, CONFIG_SECTIONS_ALL, &changed), 0);
        ck_assert(changed_has(changed, "driver.executor_env"));
        changed = freed(changed);
        ck_assert_int_eq(config_apply_reloadable(&running, &next), 0);
        ck_assert_int_eq(running.master.worker_timeout_ms, 100);
        ck_assert_int_eq(running.worker.heartbeat_ms, 500);
        ck_assert_str_eq(running.worker.executor_binary, "/usr/local/lib/spark/spark-executor");
        ck_assert_str_eq(running.driver.executor_env[0], "PATH=/usr/bin:/bin");
        ck_assert_str_eq(running.cluster.master, "tcp://10.0.0.1:7077");
        ck_assert_str_eq(running.master.listen, "tcp://127.0.0.2:9077");
        ck_assert_str_eq(running.worker.systemd_bus, "system");
        config_done(&next); /* copies, not aliases: ASan would see */
        ck_assert_str_eq(running.driver.executor_env[3], "MULTI=two\nlines\ttab");

        /* After applying, only keys that need a restart still differ. */
        ck_assert_int_eq(config_load(DATA "/good-all.conf", &next, NULL), 0);
        r = config_diff_reloadable(&running, &next, CONFIG_SECTIONS_ALL, &changed);
        ck_assert_int_gt(r, 10);
        for (const ConfigKey **i = changed; *i; i++, r--)
                ck_assert(!(*i)->reloadable);
        ck_assert_int_eq(r, 0);
        changed = freed(changed);

        k = config_key_find_by_key("driver.executor_env");
        config_done(&next);
        ck_assert_int_eq(config_defaults(&next), 0);
        next.driver.executor_env = env;
        ck_assert(!config_key_equal(k, &running, &next));
        next.driver.executor_env = NULL;

        ck_assert_int_eq(config_diff_reloadable(NULL, &next, CONFIG_SECTIONS_ALL, NULL), -EINVAL);
        ck_assert_int_eq(config_apply_reloadable(&running, NULL), -EINVAL);
}
END_TEST

START_TEST(test_check_main) {
        char *buf = NULL;
        size_t size = 0;
        FILE *out;
        _cleanup_free_ char *expected = read_text(DATA "/bad-range.err");

        out = open_memstream(&buf, &size);
        ck_assert_int_eq(config_check_main(DATA "/good-master.conf", out), 0);
        ck_assert_int_eq(fflush(out), 0);
        ck_assert_str_eq(buf, "configuration OK\n");
        ck_assert_int_eq(fclose(out), 0);
        buf = freed(buf);

        out = open_memstream(&buf, &size);
        ck_assert_int_eq(config_check_main(DATA "/bad-range.conf", out), 78);
        ck_assert_int_eq(fclose(out), 0);
        ck_assert_str_eq(buf, expected);
        buf = freed(buf);

        /* Readable is enough to load; --check-config also parses them. */
        out = open_memstream(&buf, &size);
        ck_assert_int_eq(config_check_main(DATA "/good-tls.conf", out), EXIT_CONFIG);
        ck_assert_int_eq(fclose(out), 0);
        ck_assert_str_eq(buf, DATA "/good-tls.conf: cluster.tls_*: CA certificate /dev/null: not a PEM CA "
                              "certificate the TLS engine accepts\n");
        buf = freed(buf);

        out = open_memstream(&buf, &size);
        ck_assert_int_eq(config_check_main(DATA "/missing.conf", out), EXIT_CONFIG);
        ck_assert_int_eq(fclose(out), 0);
        ck_assert_str_eq(buf, DATA "/missing.conf: cannot open: No such file or directory\n");
        free(buf);
}
END_TEST

START_TEST(test_default_path) {
        /* the directory in $CONFIG_DIR_ENV (NULL: unset), a name, its path */
        static const struct {
                const char *dir, *name, *path;
        } cases[] = {
                { NULL, "master", "/etc/spark/master.conf" },
                { NULL, "driver-etl", "/etc/spark/driver-etl.conf" },
                { "/tmp/conf//", "worker", "/tmp/conf/worker.conf" },
                { "rel", "worker", "rel/worker.conf" },
                { "/", "worker", "/worker.conf" },
                { "", "worker", "/etc/spark/worker.conf" },
        };
        _cleanup_free_ char *p = NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                if (cases[i].dir)
                        ck_assert_int_eq(setenv(CONFIG_DIR_ENV, cases[i].dir, 1), 0);
                else
                        ck_assert_int_eq(unsetenv(CONFIG_DIR_ENV), 0);
                ck_assert_int_eq(config_default_path(cases[i].name, &p), 0);
                ck_assert_str_eq(p, cases[i].path);
                p = freed(p);
        }

        ck_assert_int_eq(config_default_path("", &p), -EINVAL);
        ck_assert_int_eq(config_default_path(NULL, &p), -EINVAL);
        ck_assert_int_eq(config_default_path("../x", &p), -EINVAL);
        ck_assert_int_eq(config_default_path("..", &p), -EINVAL);
        ck_assert_int_eq(config_default_path("master", NULL), -EINVAL);
        ck_assert_ptr_null(p);
        unsetenv(CONFIG_DIR_ENV);
}
END_TEST

START_TEST(test_validators) {
        static const char *const good[] = {
                "tcp://127.0.0.1:7077", "tcp://:7077",          "tcp://[::1]:0",
                "tcp://host-1.lan:65535", "tls+tcp://a.b:7077", "ipc:///run/spark.sock",
                "ipc://@abstract",
        };
        static const char *const bad[] = {
                "",  "tcp://",          "tcp://a",          "tcp://a:",      "tcp://a:65536",
                "tcp://a:123456", "tcp://a:-1",      "tcp://::1:7",      "tcp://[::1:7",  "tcp://a/b:7",
                "ipc://", "udp://a:1",      "tcp://a b:1",      "tcp://a:1\n",   "TCP://a:1",
                "tls://a:1",
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(!config_endpoint_check(good[i]), "%s", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(config_endpoint_check(bad[i]), "%s", bad[i]);
        ck_assert(config_endpoint_check(NULL));

        /* several masters */
        ck_assert(!config_endpoint_list_check("tcp://m1:7077"));
        ck_assert(!config_endpoint_list_check("tcp://m1:7077,tls+tcp://m2:7077,ipc:///run/m3"));
        ck_assert(config_endpoint_list_check(""));
        ck_assert(config_endpoint_list_check("tcp://m1:7077,"));
        ck_assert(config_endpoint_list_check(",tcp://m1:7077"));
        ck_assert(config_endpoint_list_check("tcp://m1:7077,,tcp://m2:7077"));
        ck_assert(config_endpoint_list_check("tcp://m1:7077,udp://m2:1"));
        ck_assert(config_endpoint_list_check("tcp://m1:7077, tcp://m2:7077"));
        ck_assert(config_endpoint_list_check(
                "tcp://a:1,tcp://a:2,tcp://a:3,tcp://a:4,tcp://a:5,tcp://a:6,tcp://a:7,tcp://a:8,tcp://a:9"));
        ck_assert(config_endpoint_list_check(NULL));

        ck_assert(config_env_name_is_valid("PATH"));
        ck_assert(config_env_name_is_valid("_x9"));
        ck_assert(config_env_name_is_valid("a"));
        ck_assert(!config_env_name_is_valid("9a"));
        ck_assert(!config_env_name_is_valid("A-B"));
        ck_assert(!config_env_name_is_valid("A=B"));
        ck_assert(!config_env_name_is_valid(""));
        ck_assert(!config_env_name_is_valid(NULL));
}
END_TEST

START_TEST(test_format_value) {
        _cleanup_(config_done) SparkConfig c = {};
        _cleanup_free_ char *v = NULL;
        char *env[] = { (char *) "A=x\"y", (char *) "B=", (char *) "C=1=2", NULL };

        ck_assert_int_eq(config_defaults(&c), 0);
        free(c.driver.app_name);
        c.driver.app_name = strdup("a\\b\"c\x01\n");
        ck_assert_int_eq(config_key_format_value(config_key_find_by_key("driver.app_name"), &c, &v), 0);
        ck_assert_str_eq(v, "\"a\\\\b\\\"c\\x01\\n\"");
        v = freed(v);

        c.master.spread_out = false;
        ck_assert_int_eq(config_key_format_value(config_key_find_by_key("master.spread_out"), &c, &v), 0);
        ck_assert_str_eq(v, "false");
        v = freed(v);

        c.worker.memory_mb = INT64_C(1) << 40;
        ck_assert_int_eq(config_key_format_value(config_key_find_by_key("worker.memory_mb"), &c, &v), 0);
        ck_assert_str_eq(v, "1099511627776");
        v = freed(v);

        c.driver.executor_env = env;
        ck_assert_int_eq(config_key_format_value(config_key_find_by_key("driver.executor_env"), &c, &v), 0);
        c.driver.executor_env = NULL;
        ck_assert_str_eq(v, "{ A = \"x\\\"y\"; B = \"\"; C = \"1=2\"; }");
        v = freed(v);

        ck_assert_int_eq(config_key_format_value(NULL, &c, &v), -EINVAL);
}
END_TEST

START_TEST(test_beyond_loopback) {
        static const char *const exposed[] = {
                "tcp://0.0.0.0:7077", "tcp://:7077",          "tcp://[::]:7077",     "tcp://10.0.0.1:7077",
                "tcp://node-1:7077",  "tcp://[fe80::1]:7077", "tcp://128.0.0.1:1",   "tcp://localhost.lan:1",
                "tcp://[::2]:7077",   "tcp://*:7077",
        };
        static const char *const local[] = {
                "tcp://127.0.0.1:7077",   "tcp://127.255.0.9:1",     "tcp://[::1]:7077",
                "tcp://localhost:7077",   "tcp://LOCALHOST:7077",    "tcp://[::ffff:127.0.0.1]:1",
                "ipc:///run/spark/m.sock", "tls+tcp://0.0.0.0:7077", "tls+tcp://[::]:7077",
        };
        _cleanup_(config_done) SparkConfig c = {};

        for (size_t i = 0; i < ELEMENTSOF(exposed); i++)
                ck_assert_msg(config_endpoint_beyond_loopback(exposed[i]), "%s", exposed[i]);
        for (size_t i = 0; i < ELEMENTSOF(local); i++)
                ck_assert_msg(!config_endpoint_beyond_loopback(local[i]), "%s", local[i]);
        ck_assert(!config_endpoint_beyond_loopback(NULL));

        /* only listen keys: the master's address is dialed */
        ck_assert_int_eq(config_defaults(&c), 0);
        free(c.cluster.master);
        c.cluster.master = strdup("tcp://10.0.0.1:7077");
        free(c.master.listen);
        c.master.listen = strdup("tcp://0.0.0.0:7077");
        ck_assert(!config_key_listens_beyond_loopback(config_key_find_by_key("cluster.master"), &c));
        ck_assert(config_key_listens_beyond_loopback(config_key_find_by_key("master.listen"), &c));
        ck_assert(!config_key_listens_beyond_loopback(config_key_find_by_key("master.events_listen"), &c));
        ck_assert(!config_key_listens_beyond_loopback(config_key_find_by_key("master.state_dir"), &c));
        ck_assert(!config_key_listens_beyond_loopback(NULL, &c));
        /* the HTTP servers: plain HTTP unless the daemon has a certificate */
        ck_assert(!config_key_listens_beyond_loopback(config_key_find_by_key("master.http_listen"), &c));
        free(c.master.http_listen);
        c.master.http_listen = strdup("0.0.0.0:8080");
        ck_assert(config_key_listens_beyond_loopback(config_key_find_by_key("master.http_listen"), &c));
        free(c.worker.http_listen);
        c.worker.http_listen = strdup("[::1]:8081");
        ck_assert(!config_key_listens_beyond_loopback(config_key_find_by_key("worker.http_listen"), &c));
        free(c.worker.http_listen);
        c.worker.http_listen = strdup("");
        ck_assert(!config_key_listens_beyond_loopback(config_key_find_by_key("worker.http_listen"), &c));
}
END_TEST

START_TEST(test_tls_for) {
        _cleanup_(config_done) SparkConfig d = {}, t = {};
        TlsSettings s;

        ck_assert_int_eq(config_load(DATA "/good-tls-daemons.conf", &d, NULL), 0);
        s = config_tls_for(&d, CONFIG_SECTION_WORKER);
        ck_assert_str_eq(s.ca_file, "/dev/null");
        ck_assert_str_eq(s.cert_file, "/dev/zero");
        ck_assert_str_eq(s.key_file, "/dev/zero");
        s = config_tls_for(&d, CONFIG_SECTION_MASTER);
        ck_assert_str_eq(s.cert_file, "/dev/null");
        ck_assert(tls_settings_can_listen(&s));
        /* the cluster's own: the CA alone, enough to dial */
        s = config_tls_for(&d, CONFIG_SECTION_CLUSTER);
        ck_assert(tls_settings_can_dial(&s));
        ck_assert(!tls_settings_can_listen(&s));

        /* without a daemon's own, the cluster's */
        ck_assert_int_eq(config_load(DATA "/good-tls.conf", &t, NULL), 0);
        for (ConfigSection i = 0; i < _CONFIG_SECTION_MAX; i++) {
                s = config_tls_for(&t, i);
                ck_assert_ptr_eq(s.cert_file, t.cluster.tls.cert_file);
                ck_assert_ptr_eq(s.key_file, t.cluster.tls.key_file);
                ck_assert_ptr_eq(s.ca_file, t.cluster.tls.ca_file);
        }
}
END_TEST

START_TEST(test_check_tls_daemons) {
        char why[640];
        _cleanup_free_ char *text = NULL, *bad = NULL;
        _cleanup_(config_done) SparkConfig c = {}, b = {};
        char *path = NULL, source_dir[PATH_MAX];

        ck_assert_ptr_nonnull(getcwd(source_dir, sizeof(source_dir)));

        /* each daemon's files are loaded as its sockets will */
        ck_assert_int_ge(asprintf(&text,
                                  "cluster: { tls_ca_file = \"%s/tests/data/tls/ca.pem\"; };\n"
                                  "master: { tls_cert_file = \"%s/tests/data/tls/host.pem\";\n"
                                  "          tls_key_file = \"%s/tests/data/tls/host.key\"; };\n",
                                  source_dir, source_dir, source_dir),
                         0);
        ck_assert_int_eq(load_text(text, &c, NULL, &path), 0);
        free(path);
        ck_assert_int_eq(config_check_tls(&c, why, sizeof(why)), 0);

        ck_assert_int_ge(asprintf(&bad,
                                  "cluster: { tls_ca_file = \"%s/tests/data/tls/ca.pem\"; };\n"
                                  "driver: { tls_cert_file = \"%s/tests/data/tls/host.pem\";\n"
                                  "          tls_key_file = \"%s/tests/data/tls/ca.pem\"; };\n",
                                  source_dir, source_dir, source_dir),
                         0);
        ck_assert_int_eq(load_text(bad, &b, NULL, NULL), 0);
        ck_assert_int_lt(config_check_tls(&b, why, sizeof(why)), 0);
        ck_assert_msg(strstr(why, "driver.tls_*: the certificate ") && strstr(why, "host.pem and the private key ") &&
                              strstr(why, "ca.pem cannot be used together"),
                      "%s", why);
}
END_TEST

START_TEST(test_insecure) {
        _cleanup_(config_errors_freep) char **errors = NULL;
        const ConfigKey *schema;
        size_t n, n_listen = 0;

        /* every listen key of the schema, also those added later */
        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_(config_done) SparkConfig c = {};
                _cleanup_free_ char *text = NULL, *insecure = NULL, *want = NULL;
                const char *name = schema[i].name;

                if (schema[i].type != CONFIG_KEY_ENDPOINT || strlen(name) < 6 ||
                    !streq(name + strlen(name) - 6, "listen"))
                        continue;
                n_listen++;
                ck_assert_int_ge(asprintf(&text, "%s: {\n  %s = \"tcp://0.0.0.0:7000\";\n};\n",
                                          config_section_to_string(schema[i].section), name),
                                 0);
                errors = config_errors_free(errors);
                ck_assert_int_eq(load_text(text, &c, &errors, NULL), -EINVAL);
                ck_assert_ptr_nonnull(errors);
                ck_assert_int_ge(asprintf(&want,
                                          "t.conf:2: %s: plaintext tcp://0.0.0.0:7000 listens beyond loopback; use "
                                          "a tls+tcp:// endpoint, or set cluster.insecure = true",
                                          schema[i].key),
                                 0);
                ck_assert_msg(strstr(errors[0], want), "%s", errors[0]);
                ck_assert_ptr_null(errors[1]);

                ck_assert_int_ge(asprintf(&insecure, "cluster: { insecure = true; };\n%s", text), 0);
                ck_assert_int_eq(load_text(insecure, &c, NULL, NULL), 0);
                ck_assert(c.cluster.insecure);
                ck_assert(config_key_listens_beyond_loopback(schema + i, &c));
        }
        ck_assert_int_ge(n_listen, 6);
}
END_TEST

int main(void) {
        const TTest *core[] = {
                test_defaults,
                test_schema,
                test_good_golden,
                test_bad_golden,
                test_good_values,
                test_include_paths,
                test_unreadable,
                test_reload_diff,
                test_check_main,
                test_default_path,
                test_validators,
                test_format_value,
                test_beyond_loopback,
                test_tls_for,
                NULL,
        };
        const TTest *tmp[] = {
                test_ranges,
                test_types,
                test_unknown,
                test_check_tls_daemons,
                test_insecure,
                NULL,
        };
        Suite *s = suite_create("config");

        check_add_case(s, "core", NULL, core);
        check_add_case(s, "tmp", &(CheckOptions) { .setup = tmp_setup, .teardown = tmp_teardown }, tmp);
        return check_run(s);
}
