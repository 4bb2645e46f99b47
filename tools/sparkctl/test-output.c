/* JSON escaping of arbitrary bytes, the JSON writer, tables and the human
 * forms of sizes and durations; the status views built on them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check-run.h"
#include "output.h"
#include "status.h"
#include "task-output.h"

/* Captures what a function writes to a FILE. */
typedef struct Capture {
        FILE *f;
        char *data;
        size_t size;
} Capture;

static void capture_begin(Capture *c) {
        *c = (Capture) {};
        c->f = open_memstream(&c->data, &c->size);
        ck_assert_ptr_nonnull(c->f);
}

static const char *capture_end(Capture *c) {
        ck_assert_int_eq(fclose(c->f), 0);
        c->f = NULL;
        return c->data;
}

static char *escaped(const void *p, size_t n) {
        Capture c;

        capture_begin(&c);
        json_escape(c.f, p, n);
        return (char *) capture_end(&c);
}

/* What table_print() writes for t; it must succeed. */
static char *table_text(const Table *t) {
        Capture c;

        capture_begin(&c);
        ck_assert_int_eq(table_print(t, c.f), 0);
        return (char *) capture_end(&c);
}

/* What status_print_tables() and status_print_json() write for cs. */
static char *status_tables(const Spark__ClusterState *cs) {
        Capture c;

        capture_begin(&c);
        ck_assert_int_eq(status_print_tables(cs, c.f), 0);
        return (char *) capture_end(&c);
}

static char *status_json(const Spark__ClusterState *cs) {
        Capture c;

        capture_begin(&c);
        status_print_json(cs, c.f);
        return (char *) capture_end(&c);
}

/* The text s (freed here) is expected. */
#define ck_text(s, expected)                            \
        do {                                            \
                char *_s = (s);                         \
                ck_assert_str_eq(_s, (expected));       \
                free(_s);                               \
        } while (0)

#define ck_escape(in, n, expected) ck_text(escaped((in), (n)), (expected))

START_TEST(test_utf8) {
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "a", 1), 1);
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xc3\xa9", 2), 2);      /* é */
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xe2\x82\xac", 3), 3);  /* € */
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xf0\x9f\x98\x80", 4), 4);
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xc3", 1), 0);          /* truncated */
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xc0\x80", 2), 0);      /* overlong NUL */
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xe0\x80\xaf", 3), 0);  /* overlong / */
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xed\xa0\x80", 3), 0);  /* surrogate */
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xf5\x80\x80\x80", 4), 0);
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\x80", 1), 0);
        ck_assert_uint_eq(utf8_sequence_length((const uint8_t *) "\xe2\x28\xa1", 3), 0);
}
END_TEST

START_TEST(test_json_escape) {
        ck_escape("plain", 5, "plain");
        ck_escape("a\"b\\c", 5, "a\\\"b\\\\c");
        ck_escape("l1\nl2\r\t\b\f", 9, "l1\\nl2\\r\\t\\b\\f");
        ck_escape("\0\x01\x1f\x7f", 4, "\\u0000\\u0001\\u001f\\u007f");
        ck_escape("caf\xc3\xa9 \xe2\x82\xac", 9, "caf\xc3\xa9 \xe2\x82\xac");
        /* bytes that are not UTF-8 become \u00XX, one per byte */
        ck_escape("\xff\xfe", 2, "\\u00ff\\u00fe");
        ck_escape("a\xc3", 2, "a\\u00c3");
        ck_escape("\xc0\x80", 2, "\\u00c0\\u0080");
        ck_escape("\xed\xa0\x80x", 4, "\\u00ed\\u00a0\\u0080x");
        ck_escape("/", 1, "/");
        ck_escape("", 0, "");
}
END_TEST

/* Every byte value, alone and in context: only printable ASCII (and valid
 * UTF-8) may be written raw, and the result must be free of raw control
 * characters and invalid UTF-8. */
START_TEST(test_json_escape_all_bytes) {
        for (int b = 0; b < 256; b++) {
                uint8_t in[3] = { 'x', (uint8_t) b, 'y' };
                char *s = escaped(in, sizeof(in));
                size_t n = strlen(s);

                for (size_t i = 0; i < n;) {
                        size_t k = utf8_sequence_length((const uint8_t *) s + i, n - i);
                        ck_assert_uint_gt(k, 0);
                        ck_assert((uint8_t) s[i] >= 0x20);
                        i += k;
                }
                if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\')
                        ck_assert_uint_eq(n, 3);
                free(s);
        }
}
END_TEST

START_TEST(test_json_writer) {
        Capture c;
        Json j;

        capture_begin(&c);
        json_init(&j, c.f);
        json_object_begin(&j, NULL);
        json_string(&j, "a", "x\"y");
        json_int(&j, "n", -5);
        json_array_begin(&j, "list");
        json_int(&j, NULL, 1);
        json_string(&j, NULL, NULL);
        json_object_begin(&j, NULL);
        json_object_end(&j);
        json_array_end(&j);
        json_array_begin(&j, "empty");
        json_array_end(&j);
        json_bytes(&j, "raw", "\xff\n", 2);
        json_object_end(&j);
        ck_assert_str_eq(capture_end(&c),
                         "{\"a\":\"x\\\"y\",\"n\":-5,\"list\":[1,\"\",{}],\"empty\":[],\"raw\":\"\\u00ff\\n\"}");
        free(c.data);
}
END_TEST

START_TEST(test_table) {
        _cleanup_(table_freep) Table *t = NULL;
        Capture c;

        t = table_new("ID", "NAME", "NOTE", NULL);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(table_add(t, "1"), 0);
        ck_assert_int_eq(table_add(t, "caf\xc3\xa9"), 0);
        ck_assert_int_eq(table_add(t, ""), 0);
        ck_assert_int_eq(table_addf(t, "%d", 1234), 0);
        ck_assert_int_eq(table_add(t, "evil\033[2Jname"), 0);
        ck_assert_int_eq(table_add(t, NULL), 0);
        ck_assert_uint_eq(table_rows(t), 2);

        /* é is one column; no trailing blanks; the escape is defused */
        ck_text(table_text(t),
                "ID    NAME          NOTE\n"
                "1     caf\xc3\xa9\n"
                "1234  evil?[2Jname  -\n");

        ck_assert_int_eq(table_add(t, "half a row"), 0);
        capture_begin(&c);
        ck_assert_int_eq(table_print(t, c.f), -EINVAL);
        capture_end(&c);
        free(c.data);
}
END_TEST

START_TEST(test_table_optional_column) {
        _cleanup_(table_freep) Table *t = NULL;

        t = table_new("ID", "REASON", NULL);
        table_set_optional(t, 1);
        table_add(t, "a");
        table_add(t, "");
        ck_text(table_text(t), "ID\na\n");

        table_add(t, "b");
        table_add(t, "lost");
        ck_text(table_text(t), "ID  REASON\na\nb   lost\n");
}
END_TEST

START_TEST(test_sanitize) {
        char buf[8];

        ck_assert_str_eq(string_sanitize("a\tb\xff", buf, sizeof(buf)), "a?b?");
        ck_assert_str_eq(string_sanitize(NULL, buf, sizeof(buf)), "");
        ck_assert_str_eq(string_sanitize("abcdefghij", buf, sizeof(buf)), "abcdefg");
        /* never cut a character in half */
        ck_assert_str_eq(string_sanitize("abcde\xe2\x82\xac", buf, sizeof(buf)), "abcde");
}
END_TEST

START_TEST(test_formats) {
        char b[FORMAT_SHORT_MAX];

        ck_assert_str_eq(format_duration_ms(b, sizeof(b), 0), "0ms");
        ck_assert_str_eq(format_duration_ms(b, sizeof(b), 999), "999ms");
        ck_assert_str_eq(format_duration_ms(b, sizeof(b), 12345), "12.3s");
        ck_assert_str_eq(format_duration_ms(b, sizeof(b), 303000), "5m03s");
        ck_assert_str_eq(format_duration_ms(b, sizeof(b), 7500000), "2h05m");
        ck_assert_str_eq(format_duration_ms(b, sizeof(b), 4 * 86400000LL), "4d00h");
        ck_assert_str_eq(format_duration_ms(b, sizeof(b), -1), "-");
        ck_assert_str_eq(format_mib(b, sizeof(b), 0), "0M");
        ck_assert_str_eq(format_mib(b, sizeof(b), 512), "512M");
        ck_assert_str_eq(format_mib(b, sizeof(b), 1536), "1.5G");
        ck_assert_str_eq(format_mib(b, sizeof(b), 8192), "8G");
        ck_assert_str_eq(format_mib(b, sizeof(b), 2 * 1024 * 1024), "2T");
        ck_assert_str_eq(format_mib(b, sizeof(b), 20000), "19G");
}
END_TEST

START_TEST(test_status_views) {
        Spark__WorkerInfo w1 = SPARK__WORKER_INFO__INIT, w2 = SPARK__WORKER_INFO__INIT;
        Spark__AppInfo a = SPARK__APP_INFO__INIT;
        Spark__ExecutorInfo e = SPARK__EXECUTOR_INFO__INIT;
        Spark__WorkerInfo *workers[] = { &w1, &w2 };
        Spark__AppInfo *apps[] = { &a };
        Spark__ExecutorInfo *executors[] = { &e };
        Spark__ClusterState cs = SPARK__CLUSTER_STATE__INIT;

        w1 = (Spark__WorkerInfo) SPARK__WORKER_INFO__INIT;
        w1.worker_id = "worker-20261129172233-h2-7081", w1.host = "h2", w1.state = SPARK__WORKER_STATE__WORKER_LOST;
        w1.cores = 4, w1.memory_mb = 8192, w1.last_heartbeat_ms_ago = 12000;
        w2.worker_id = "worker-20261129172200-h1-7081", w2.host = "h1", w2.state = SPARK__WORKER_STATE__WORKER_ALIVE;
        w2.cores = 2, w2.cores_used = 1, w2.memory_mb = 4096, w2.memory_used_mb = 1024, w2.last_heartbeat_ms_ago = 300;
        a.app_id = "app-20261129172233-0001", a.name = "pi", a.state = SPARK__APP_STATE__APP_RUNNING;
        a.cores_granted = 1, a.driver_url = "tcp://h1:7091", a.executors_live = 1, a.executors_wanted = -1;
        e.app_id = a.app_id, e.executor_id = 1, e.worker_id = w2.worker_id, e.host = "h1";
        e.state = SPARK__EXECUTOR_STATE__EXECUTOR_RUNNING, e.cores = 1, e.memory_mb = 1024;
        e.unit = "spark-executor-app-20261129172233-0001-1.service";
        cs.master_id = "master-1", cs.n_workers = 2, cs.workers = workers, cs.n_apps = 1, cs.apps = apps;
        cs.n_executors = 1, cs.executors = executors;

        ck_text(status_tables(&cs),
                "Master master-1: 2 workers, 1 application, 1 executor\n"
                "\n"
                "WORKER   HOST  STATE  CORES  MEMORY  HEARTBEAT\n"
                "h1-7081  h1    alive  1/2    1G/4G   300ms ago\n"
                "h2-7081  h2    lost   0/4    0M/8G   12.0s ago\n"
                "\n"
                "APPLICATION              NAME  STATE    CORES  EXECUTORS  DRIVER\n"
                "app-20261129172233-0001  pi    running  1      1          tcp://h1:7091\n"
                "\n"
                "EXECUTOR                   WORKER   HOST  STATE    CORES  MEMORY  UNIT\n"
                "app-20261129172233-0001/1  h1-7081  h1    running  1      1G      "
                "spark-executor-app-20261129172233-0001-1.service\n");

        ck_text(status_json(&cs),
                "{\"master_id\":\"master-1\",\"workers\":["
                "{\"worker_id\":\"worker-20261129172233-h2-7081\",\"host\":\"h2\",\"endpoint\":\"\",\"events_endpoint\":\"\","
                "\"state\":\"lost\",\"cores\":4,\"cores_used\":0,\"memory_mb\":8192,\"memory_used_mb\":0,"
                "\"last_heartbeat_ms_ago\":12000,\"drain_timeout_ms\":0,\"reason\":\"\",\"end_time_ms\":0,\"ui_url\":\"\","
                "\"labels\":[],\"resources\":{}},"
                "{\"worker_id\":\"worker-20261129172200-h1-7081\",\"host\":\"h1\",\"endpoint\":\"\",\"events_endpoint\":\"\","
                "\"state\":\"alive\",\"cores\":2,\"cores_used\":1,\"memory_mb\":4096,\"memory_used_mb\":1024,"
                "\"last_heartbeat_ms_ago\":300,\"drain_timeout_ms\":0,\"reason\":\"\",\"end_time_ms\":0,\"ui_url\":\"\","
                "\"labels\":[],\"resources\":{}}],"
                "\"apps\":[{\"app_id\":\"app-20261129172233-0001\",\"name\":\"pi\",\"state\":\"running\","
                "\"driver_url\":\"tcp://h1:7091\",\"cores_granted\":1,\"max_cores\":0,"
                "\"cores_per_executor\":0,\"executor_memory_mb\":0,\"reason\":\"\",\"submitted_by\":\"\","
                "\"start_time_ms\":0,\"end_time_ms\":0,\"cpu_usage_ns\":0,\"memory_peak_bytes\":0,\"ui_url\":\"\","
                "\"dynamic_allocation\":false,\"executors_live\":1,\"executors_wanted\":-1,"
                "\"executor_resources\":{},\"constraints\":[],\"waiting_reason\":\"\"}],"
                "\"executors\":[{\"app_id\":\"app-20261129172233-0001\",\"executor_id\":1,"
                "\"worker_id\":\"worker-20261129172200-h1-7081\",\"host\":\"h1\",\"state\":\"running\",\"cores\":1,"
                "\"memory_mb\":1024,\"reason\":\"\",\"exit_code\":0,"
                "\"unit\":\"spark-executor-app-20261129172233-0001-1.service\",\"draining\":false,\"resources\":{}}]}\n");
}
END_TEST

/* An elastic application shows its live/wanted executors. */
START_TEST(test_status_elastic) {
        Spark__AppInfo a = SPARK__APP_INFO__INIT;
        Spark__AppInfo *apps[] = { &a };
        Spark__ClusterState cs = SPARK__CLUSTER_STATE__INIT;

        a.app_id = "app-20261129172233-0002", a.name = "etl", a.state = SPARK__APP_STATE__APP_RUNNING;
        a.cores_granted = 2, a.driver_url = "tcp://h1:7091";
        a.dynamic_allocation = true, a.executors_live = 2, a.executors_wanted = 4;
        cs.master_id = "master-1", cs.n_apps = 1, cs.apps = apps;

        ck_text(status_tables(&cs),
                "Master master-1: 0 workers, 1 application, 0 executors\n"
                "\n"
                "APPLICATION              NAME  STATE    CORES  EXECUTORS    DRIVER\n"
                "app-20261129172233-0002  etl   running  2      2/4 elastic  tcp://h1:7091\n");
}
END_TEST

/* With fair share: each application's weight, share, target and demand. */
START_TEST(test_status_fair) {
        Spark__AppInfo a = SPARK__APP_INFO__INIT, b = SPARK__APP_INFO__INIT;
        Spark__AppInfo *apps[] = { &a, &b };
        Spark__ClusterState cs = SPARK__CLUSTER_STATE__INIT;

        a.app_id = "app-20261129172233-0001", a.name = "big", a.state = SPARK__APP_STATE__APP_RUNNING;
        a.cores_granted = 6, a.driver_url = "tcp://h1:7091", a.weight = 1, a.share = 0.75, a.fair_share = 0.5;
        a.executors_live = 6, a.executors_wanted = -1;
        a.executors_target = 4, a.executors_preempting = 2, a.executors_demand = -1;
        b.app_id = "app-20261129172233-0002", b.name = "late", b.state = SPARK__APP_STATE__APP_WAITING;
        b.driver_url = "tcp://h1:7093", b.weight = 1, b.fair_share = 0.5, b.executors_target = 4;
        b.executors_wanted = -1, b.executors_demand = 4;
        cs.master_id = "master-1", cs.n_apps = 2, cs.apps = apps, cs.scheduling = "fair";

        ck_text(status_tables(&cs),
                "Master master-1: 0 workers, 2 applications, 0 executors\n"
                "\n"
                "APPLICATION              NAME  STATE    CORES  EXECUTORS  WEIGHT  SHARE    TARGET           DEMAND  DRIVER\n"
                "app-20261129172233-0001  big   running  6      6          1       75%/50%  4 (2 preempted)  any     tcp://h1:7091\n"
                "app-20261129172233-0002  late  waiting  0      0          1       0%/50%   4                4       tcp://h1:7093\n");

        cs.n_apps = 1;
        ck_text(status_json(&cs),
                "{\"master_id\":\"master-1\",\"scheduling\":\"fair\",\"workers\":[],"
                "\"apps\":[{\"app_id\":\"app-20261129172233-0001\",\"name\":\"big\",\"state\":\"running\","
                "\"driver_url\":\"tcp://h1:7091\",\"cores_granted\":6,\"max_cores\":0,"
                "\"cores_per_executor\":0,\"executor_memory_mb\":0,\"reason\":\"\",\"submitted_by\":\"\","
                "\"start_time_ms\":0,\"end_time_ms\":0,\"cpu_usage_ns\":0,\"memory_peak_bytes\":0,\"ui_url\":\"\","
                "\"dynamic_allocation\":false,\"executors_live\":6,\"executors_wanted\":-1,"
                "\"weight\":1,\"share\":0.75,\"fair_share\":0.5,\"executors_demand\":-1,"
                "\"executors_target\":4,\"executors_preempting\":2,"
                "\"executor_resources\":{},\"constraints\":[],\"waiting_reason\":\"\"}],"
                "\"executors\":[]}\n");
}
END_TEST

/* Shortened only when that keeps workers apart, and only ids of the form. */
START_TEST(test_worker_id_short) {
        Spark__WorkerInfo w1 = SPARK__WORKER_INFO__INIT, w2 = SPARK__WORKER_INFO__INIT;
        Spark__WorkerInfo *workers[] = { &w1, &w2 };
        Spark__ClusterState cs = SPARK__CLUSTER_STATE__INIT;

        w1.worker_id = "worker-20261129172233-h1-7081";
        w2.worker_id = "worker-20261129172233-h2-7081";
        cs.n_workers = 2, cs.workers = workers;
        ck_assert_str_eq(worker_id_short(&cs, w1.worker_id), "h1-7081");
        ck_assert_str_eq(worker_id_short(NULL, w1.worker_id), "h1-7081");
        /* the same host and port, restarted with a new id: both in full */
        w2.worker_id = "worker-20261130080000-h1-7081";
        ck_assert_str_eq(worker_id_short(&cs, w1.worker_id), w1.worker_id);
        ck_assert_str_eq(worker_id_short(&cs, w2.worker_id), w2.worker_id);
        /* a suffix of another's short form is not the same */
        w2.worker_id = "worker-20261130080000-xh1-7081";
        ck_assert_str_eq(worker_id_short(&cs, w1.worker_id), w1.worker_id);
        ck_assert_str_eq(worker_id_short(&cs, "worker-2026112917223-h1-7081"), "worker-2026112917223-h1-7081");
        ck_assert_str_eq(worker_id_short(&cs, "worker-20261129172233-"), "worker-20261129172233-");
        ck_assert_str_eq(worker_id_short(&cs, "w-1"), "w-1");
        ck_assert_ptr_null(worker_id_short(&cs, NULL));
}
END_TEST

START_TEST(test_task_outcome_json) {
        Spark__TaskOutcome o = SPARK__TASK_OUTCOME__INIT;
        char *errors[] = { "exit status 1", "bad \"quote\"" };
        Capture c;

        o.index = 7, o.status = SPARK__TASK_STATUS__TASK_FAILED, o.attempts = 2, o.exit_code = 1;
        o.output = (ProtobufCBinaryData) { .len = 4, .data = (uint8_t *) "a\xff\n\0" };
        o.n_errors = 2, o.errors = errors;
        capture_begin(&c);
        task_outcome_write(&o, true, c.f);
        ck_assert_str_eq(capture_end(&c),
                         "{\"task\":7,\"status\":\"failed\",\"attempts\":2,\"exit_code\":1,"
                         "\"output\":\"a\\u00ff\\n\\u0000\",\"errors\":[\"exit status 1\",\"bad \\\"quote\\\"\"]}\n");
        free(c.data);

        o.status = SPARK__TASK_STATUS__TASK_KILLED, o.n_errors = 0;
        capture_begin(&c);
        task_outcome_write(&o, true, c.f);
        ck_assert_ptr_nonnull(strstr(capture_end(&c), "\"status\":\"failed\""));
        ck_assert_ptr_nonnull(strstr(c.data, "\"errors\":[\"killed\"]"));
        free(c.data);

        /* plain: the bytes as they are */
        o.status = SPARK__TASK_STATUS__TASK_OK;
        capture_begin(&c);
        task_outcome_write(&o, false, c.f);
        capture_end(&c);
        ck_assert_uint_eq(c.size, 4);
        ck_assert_mem_eq(c.data, "a\xff\n\0", 4);
        free(c.data);
}
END_TEST

START_TEST(test_progress_format) {
        Spark__JobInfo info = SPARK__JOB_INFO__INIT;
        char buf[256];

        info.job_id = "job-0001", info.tasks = 1000, info.done = 350, info.failed = 2;
        info.executors = 4, info.elapsed_ms = 2000;
        progress_format(buf, sizeof(buf), &info);
        ck_assert_str_eq(buf, "job-0001: 350/1000 done, 2 failed, 175 tasks/s, 4 executors, 2.0s");
        info.elapsed_ms = 0, info.executors = 1;
        progress_format(buf, sizeof(buf), &info);
        ck_assert_str_eq(buf, "job-0001: 350/1000 done, 2 failed, 0 tasks/s, 1 executor, 0ms");
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_utf8,
                test_status_fair,
                test_json_escape,
                test_json_escape_all_bytes,
                test_json_writer,
                test_table,
                test_table_optional_column,
                test_sanitize,
                test_formats,
                test_status_views,
                test_status_elastic,
                test_worker_id_short,
                test_task_outcome_json,
                test_progress_format,
                NULL,
        };

        return check_run_tests("sparkctl-output", NULL, tests);
}
