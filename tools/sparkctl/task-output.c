/* See task-output.h. */
#include <inttypes.h>
#include <string.h>

#include "wire-names.h"
#include "output.h"
#include "task-output.h"

#define PROGRESS_INTERVAL_USEC (100 * USEC_PER_MSEC)

bool task_outcome_ok(const Spark__TaskOutcome *o) {
        return o->status == SPARK__TASK_STATUS__TASK_OK;
}

static void write_json(const Spark__TaskOutcome *o, FILE *out) {
        Json j;

        json_init(&j, out);
        json_object_begin(&j, NULL);
        json_int(&j, "task", o->index);
        /* lost and killed are failures too; the word says why in errors */
        json_string(&j, "status", task_outcome_ok(o) ? "ok" : "failed");
        json_int(&j, "attempts", o->attempts);
        json_int(&j, "exit_code", o->exit_code);
        json_bytes(&j, "output", o->output.data, o->output.len);
        json_array_begin(&j, "errors");
        for (size_t i = 0; i < o->n_errors; i++)
                json_string(&j, NULL, o->errors[i]);
        if (!task_outcome_ok(o) && o->n_errors == 0)
                json_string(&j, NULL, wire_task_status_to_string(o->status));
        json_array_end(&j);
        json_object_end(&j);
        fputc('\n', out);
}

void task_outcome_write(const Spark__TaskOutcome *o, bool json, FILE *out) {
        if (json)
                write_json(o, out);
        else if (o->output.len > 0)
                fwrite(o->output.data, 1, o->output.len, out);
}

void task_outcome_report_failure(const Spark__TaskOutcome *o, FILE *f) {
        char s[1024];

        fprintf(f, "sparkctl: task %d %s (", o->index,
                o->status == SPARK__TASK_STATUS__TASK_KILLED ? "was killed" : "failed");
        if (o->exit_code != 0)
                fprintf(f, "exit status %d, ", o->exit_code);
        fprintf(f, "%d %s)", o->attempts, o->attempts == 1 ? "attempt" : "attempts");
        for (size_t i = 0; i < o->n_errors; i++)
                fprintf(f, "%s%s", i == 0 ? ": " : "; ", string_sanitize(o->errors[i], s, sizeof(s)));
        fputc('\n', f);
}

void progress_format(char *buf, size_t size, const Spark__JobInfo *info) {
        char id[64], d[FORMAT_SHORT_MAX];
        int64_t rate = info->elapsed_ms > 0 ? (int64_t) info->done * 1000 / info->elapsed_ms : 0;

        snprintf(buf, size, "%s: %d/%d done, %d failed, %" PRIi64 " tasks/s, %d %s, %s",
                 string_sanitize(info->job_id, id, sizeof(id)), info->done, info->tasks, info->failed, rate,
                 info->executors, info->executors == 1 ? "executor" : "executors",
                 format_duration_ms(d, sizeof(d), info->elapsed_ms));
}

void progress_show(Progress *p, const Spark__JobInfo *info, bool force) {
        usec_t now = now_mono_usec();
        char line[256];

        if (!p->enabled || !info || (!force && p->shown && now - p->last_usec < PROGRESS_INTERVAL_USEC))
                return;
        progress_format(line, sizeof(line), info);
        fprintf(p->f, "\r%s\033[K", line);
        fflush(p->f);
        p->shown = true;
        p->last_usec = now;
}

void progress_clear(Progress *p) {
        if (!p->enabled || !p->shown)
                return;
        fputs("\r\033[K", p->f);
        fflush(p->f);
        p->shown = false;
}
