/* See jobs.h. */
#include <string.h>

#include "jobs.h"
#include "state-json.h"
#include "wire-names.h"
#include "sparkctl.h"

int jobs_print_table(const Spark__JobList *list, FILE *f) {
        _cleanup_(table_freep) Table *t = NULL;
        char d[FORMAT_SHORT_MAX];

        if (list->n_jobs == 0) {
                fputs("No jobs.\n", f);
                return 0;
        }
        t = table_new("JOB", "NAME", "STATE", "TASKS", "FAILED", "RUNNING", "EXECUTORS", "ELAPSED", "REASON", NULL);
        if (!t)
                return -ENOMEM;
        table_set_optional(t, 8);
        for (size_t i = 0; i < list->n_jobs; i++) {
                const Spark__JobInfo *info = list->jobs[i];

                table_add(t, info->job_id);
                table_add(t, isempty(info->name) ? "-" : info->name);
                table_add(t, wire_job_state_to_string(info->state));
                table_addf(t, "%d/%d", info->done, info->tasks);
                table_addf(t, "%d", info->failed);
                table_addf(t, "%d", info->running);
                table_addf(t, "%d", info->executors);
                table_add(t, format_duration_ms(d, sizeof(d), info->elapsed_ms));
                table_add(t, info->reason);
        }
        return table_print(t, f);
}

void job_print(const Spark__JobInfo *info, FILE *f) {
        char s[512], d[FORMAT_SHORT_MAX];

        fprintf(f, "Job:       %s\n", string_sanitize(info->job_id, s, sizeof(s)));
        if (!isempty(info->name))
                fprintf(f, "Name:      %s\n", string_sanitize(info->name, s, sizeof(s)));
        fprintf(f, "State:     %s\n", wire_job_state_to_string(info->state));
        fprintf(f, "Tasks:     %d done of %d, %d failed, %d running\n", info->done, info->tasks, info->failed,
                info->running);
        fprintf(f, "Executors: %d\n", info->executors);
        fprintf(f, "Elapsed:   %s\n", format_duration_ms(d, sizeof(d), info->elapsed_ms));
        if (!isempty(info->reason))
                fprintf(f, "Reason:    %s\n", string_sanitize(info->reason, s, sizeof(s)));
}

int run_jobs(const Daemon *driver, bool json, FILE *out) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__ListJobs req = SPARK__LIST_JOBS__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        ENVELOPE_SET(&env, LIST_JOBS, list_jobs, &req);
        r = call_daemon(driver, &env, SPARK__ENVELOPE__BODY_JOB_LIST, &reply);
        if (r > 0)
                return r;
        if (json) {
                Json j;

                json_init(&j, out);
                job_list_json(&j, reply->job_list);
                fputc('\n', out);
                return SPARKCTL_EXIT_OK;
        }
        r = jobs_print_table(reply->job_list, out);
        if (r < 0) {
                fprintf(stderr, "sparkctl: cannot show the jobs: %s\n", strerror(-r));
                return SPARKCTL_EXIT_FAILED;
        }
        return SPARKCTL_EXIT_OK;
}

int run_job(const Daemon *driver, const char *job_id, bool json, FILE *out) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__JobStatusRequest req = SPARK__JOB_STATUS_REQUEST__INIT;
        Envelope env = ENVELOPE_INIT;
        int r;

        req.job_id = (char *) job_id;
        ENVELOPE_SET(&env, JOB_STATUS, job_status, &req);
        r = call_daemon(driver, &env, SPARK__ENVELOPE__BODY_JOB_INFO, &reply);
        if (r > 0)
                return r;
        if (json) {
                Json j;

                json_init(&j, out);
                job_info_json(&j, NULL, reply->job_info);
                fputc('\n', out);
        } else
                job_print(reply->job_info, out);
        return SPARKCTL_EXIT_OK;
}

int run_cancel(const Daemon *driver, const char *job_id) {
        _cleanup_envelope_ Envelope *reply = NULL;
        Spark__CancelJob req = SPARK__CANCEL_JOB__INIT;
        Envelope env = ENVELOPE_INIT;

        req.job_id = (char *) job_id;
        ENVELOPE_SET(&env, CANCEL_JOB, cancel_job, &req);
        /* an Ack or the job's JobInfo: whatever the driver answers, it was not an Error */
        return call_daemon(driver, &env, SPARK__ENVELOPE__BODY__NOT_SET, &reply);
}
