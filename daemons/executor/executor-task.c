/* See executor-task.h. */
#include <stdarg.h>
#include <stdint.h>

#include "executor-task.h"

static const char *const task_state_table[_TASK_STATE_MAX] = {
        [TASK_STATE_QUEUED] = "queued",
        [TASK_STATE_RUNNING] = "running",
        [TASK_STATE_DONE] = "done",
};

const char *task_state_to_string(TaskState s) {
        return s >= 0 && s < _TASK_STATE_MAX ? task_state_table[s] : NULL;
}

void task_outcome_done(TaskOutcome *o) {
        if (!o)
                return;
        free(o->output);
        free(o->error);
        *o = (TaskOutcome) {};
}

void task_outcome_fail(TaskOutcome *o, int exit_code, const char *fmt, ...) {
        va_list ap;
        char *e = NULL;

        task_outcome_done(o);
        va_start(ap, fmt);
        if (vasprintf(&e, fmt, ap) < 0)
                e = NULL; /* the status still says it failed */
        va_end(ap);
        utf8_sanitize(e);
        o->status = SPARK__TASK_STATUS__TASK_FAILED;
        o->exit_code = exit_code;
        o->error = e;
}

void task_outcome_kill(TaskOutcome *o, const char *reason) {
        int exit_code = o->exit_code;

        task_outcome_done(o);
        o->status = SPARK__TASK_STATUS__TASK_KILLED;
        o->exit_code = exit_code;
        o->error = reason ? strdup(reason) : NULL;
}

size_t task_result_size(const Task *t) {
        /* Field tags, lengths and the small numbers: a generous 32. */
        return t->outcome.output_len + (t->outcome.error ? strlen(t->outcome.error) : 0) +
               (t->launch->job_id ? strlen(t->launch->job_id) : 0) + 32;
}

int task_batch_new(Envelope *reply, TaskBatch **ret) {
        const Spark__PollReply *pr;
        TaskBatch *b;

        if (!reply || reply->body_case != SPARK__ENVELOPE__BODY_POLL_REPLY || !ret)
                return -EINVAL;
        pr = reply->poll_reply;
        if (pr->n_tasks == 0)
                return -ENODATA;

        b = calloc(1, sizeof(TaskBatch) + pr->n_tasks * sizeof(Task));
        if (!b)
                return -ENOMEM;
        b->reply = reply;
        b->n_tasks = b->n_unreleased = pr->n_tasks;
        for (size_t i = 0; i < pr->n_tasks; i++)
                b->tasks[i] = (Task) {
                        .launch = pr->tasks[i],
                        .batch = b,
                        .state = TASK_STATE_QUEUED,
                };
        *ret = b;
        return 0;
}

void task_release(Task *t) {
        TaskBatch *b;

        if (!t)
                return;
        task_outcome_done(&t->outcome);
        b = t->batch;
        if (--b->n_unreleased == 0) {
                envelope_free(b->reply);
                free(b);
        }
}

bool task_matches(const Task *t, const char *job_id, int32_t index) {
        if (!job_id)
                return true;  /* every task (a driver restarted) */
        return streq_ptr(t->launch->job_id, job_id) && (index < 0 || t->launch->index == index);
}

/* Length of the well-formed UTF-8 sequence at s, or 0. */
static size_t utf8_sequence_len(const unsigned char *s) {
        unsigned char c = s[0];
        size_t n;
        uint32_t cp;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4, cp = c & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates, beyond U+10FFFF. */
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

void utf8_sanitize(char *s) {
        unsigned char *p = (unsigned char *) s;

        if (!s)
                return;
        while (*p) {
                size_t n = utf8_sequence_len(p);

                if (n == 0) {
                        *p++ = '?';
                        continue;
                }
                p += n;
        }
}
