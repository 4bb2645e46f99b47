/* Jobs as clients see them: submission (inputs, the shipped shared object),
 * the results kept until fetched, status, listing, cancellation.  Which task
 * runs where is the scheduler's business; this file keeps the payloads. */
#include <ctype.h>
#include <inttypes.h>

#include "driver-jobs.h"
#include "driver-spill.h"
#include "state-json.h"
#include "log.h"
#include "peer-log.h"
#include "sha256.h"

#define MAX_TASKS_PER_JOB 10000000u
#define MAX_FINISHED_JOBS 64
#define FETCH_MAX_TASKS 100000
#define FETCH_MAX_BYTES (16u * 1024u * 1024u)
#define MAX_PREFERRED_HOSTS 64
#define FETCH_MAX_WAIT_MS 10000

typedef struct DriverLibrary {
        char hash[SHA256_HEX_SIZE];
        void *data;
        size_t len;
        unsigned refs;
} DriverLibrary;

/* A task's result, 8 bytes a task whatever it holds, so that a job of ten
 * million tasks keeps its results in little memory: 0 (no bytes, exit
 * code 0: most function tasks), a HeldOutput in memory (an aligned
 * pointer), or the offset in the spill (driver-spill.h) with the lowest
 * bit set. */
typedef struct TaskOutput {
        uint64_t ref;
} TaskOutput;

typedef struct HeldOutput {
        uint32_t len;
        int32_t exit_code;
        uint8_t data[];
} HeldOutput;

#define OUTPUT_SPILLED UINT64_C(1)

/* A FetchResults waiting for the job's next result (a long poll): the client
 * gets each result one round trip after it arrives, without polling. */
typedef struct ParkedFetch {
        Driver *driver;
        RpcRequest *req;
        DriverJob *job;
        unsigned from;
        size_t max;
        bool submit;   /* a SubmitJob waiting for its job to end */
        sd_event_source *timer;
        struct ParkedFetch *next;
} ParkedFetch;

struct DriverJob {
        char id[32];
        char *name;
        char request_id[64];
        Spark__TaskKind kind;
        Job *job;
        unsigned n_tasks;
        ProtobufCBinaryData *inputs;   /* n_tasks of them, or one shared (count jobs) */
        size_t n_inputs;
        DriverLibrary *library;
        char *symbol;
        char **preferred;              /* NULL-terminated, shared by every task */
        TaskOutput *outputs;           /* per task */
        ParkedFetch *fetches;
        usec_t submitted;
        uint64_t output_bytes;         /* held in outputs, for /metrics */
        uint64_t spilled, spilled_bytes; /* of them in the spill */
        uint64_t journal_bytes;        /* its entries in the journal: dead once it is removed */
        DriverJob *prev, *next;
};

static void answer_fetches(Driver *d, DriverJob *j, bool all);
static int fetch_reply(Driver *d, DriverJob *j, RpcRequest *req, unsigned from, size_t max, bool submit);
static int park_fetch(Driver *d, DriverJob *j, RpcRequest *req, unsigned from, size_t max, int wait_ms, bool submit);

static DriverJob *job_by_scheduler_job(Driver *d, Job *job) {
        return hashmap_get(d->jobs, scheduler_job_id(job));
}

static void library_unref(Driver *d, DriverLibrary *lib) {
        if (!lib || --lib->refs > 0)
                return;
        if (d->last_library == lib)
                d->last_library = NULL;
        hashmap_remove(d->libraries, lib->hash);
        free(lib->data);
        free(lib);
}

/* ------------------------------------------------------- results kept */

static const char *spill_dir(Driver *d) {
        const char *t;

        if (!isempty(d->config.driver.state_dir))
                return d->config.driver.state_dir;
        t = getenv("TMPDIR");
        return !isempty(t) && t[0] == '/' ? t : "/var/tmp";
}

/* Forgets task idx's result, wherever it is. */
static void output_release(Driver *d, DriverJob *j, unsigned idx) {
        uint64_t ref = j->outputs[idx].ref;

        if (ref == 0)
                return;
        j->outputs[idx].ref = 0;
        if (ref & OUTPUT_SPILLED) {
                uint32_t len = 0;
                int32_t e;

                /* rare (a failed attempt's output replaced): one read */
                (void) result_spill_stat(d->spill, ref & ~OUTPUT_SPILLED, &len, &e);
                j->output_bytes -= MIN(j->output_bytes, (uint64_t) len);
                j->spilled_bytes -= MIN(j->spilled_bytes, (uint64_t) len);
                j->spilled--;
                result_spill_forget(d->spill, 1, len);
        } else {
                HeldOutput *h = (HeldOutput *) (uintptr_t) ref;

                j->output_bytes -= MIN(j->output_bytes, (uint64_t) h->len);
                d->results_in_memory -= MIN(d->results_in_memory, sizeof(*h) + h->len);
                free(h);
        }
}

/* Keeps a result: in memory while the results there stay within
 * driver.result_memory_mb, in the spill beyond.  A spill that cannot be
 * made or written is logged (once) and the result stays in memory: an
 * accepted result is never lost. */
static int output_store(Driver *d, DriverJob *j, unsigned idx, int32_t exit_code, const void *data, size_t len) {
        uint64_t limit = (uint64_t) d->config.driver.result_memory_mb * 1024u * 1024u;
        HeldOutput *h;
        int r;

        output_release(d, j, idx);
        if (len > UINT32_MAX)
                return -EFBIG;
        if (len == 0 && exit_code == 0)
                return 0;
        if (d->results_in_memory + sizeof(*h) + len > limit && !d->spill_failed) {
                uint64_t offset;

                r = d->spill ? 0 : result_spill_open(spill_dir(d), &d->spill);
                if (r < 0)
                        log_error_errno(r, "Failed to make the result spill file in %s: %m; results beyond "
                                           "driver.result_memory_mb stay in memory",
                                        spill_dir(d));
                else {
                        if (result_spill_file_bytes(d->spill) == 0)
                                log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id, .job_id = j->id),
                                           "Results held in memory reached driver.result_memory_mb (%" PRIi64
                                           " MiB): further results go to the spill file in %s",
                                           d->config.driver.result_memory_mb, result_spill_dir(d->spill));
                        r = result_spill_append(d->spill, exit_code, data, (uint32_t) len, &offset);
                        if (r >= 0) {
                                j->outputs[idx].ref = offset | OUTPUT_SPILLED;
                                j->output_bytes += len;
                                j->spilled++;
                                j->spilled_bytes += len;
                                return 0;
                        }
                        log_error_errno(r, "Failed to write a result of job %s to the spill file in %s: %m; "
                                           "results beyond driver.result_memory_mb stay in memory",
                                        j->id, result_spill_dir(d->spill));
                }
                d->spill_failed = true;
        }
        h = malloc(sizeof(*h) + len);
        if (!h)
                return -ENOMEM;
        h->len = (uint32_t) len;
        h->exit_code = exit_code;
        if (len)
                memcpy(h->data, data, len);
        j->outputs[idx].ref = (uint64_t) (uintptr_t) h;
        j->output_bytes += len;
        d->results_in_memory += sizeof(*h) + len;
        return 0;
}

/* The length and exit code of task idx's result; for one in memory also
 * its bytes (*ret_data NULL: in the spill, read it with output_read()). */
static int output_peek(Driver *d, DriverJob *j, unsigned idx, uint32_t *ret_len, int32_t *ret_exit_code,
                       const uint8_t **ret_data) {
        uint64_t ref = j->outputs[idx].ref;
        int r;

        *ret_data = NULL;
        if (ref == 0) {
                *ret_len = 0;
                *ret_exit_code = 0;
                return 0;
        }
        if (!(ref & OUTPUT_SPILLED)) {
                const HeldOutput *h = (const HeldOutput *) (uintptr_t) ref;

                *ret_len = h->len;
                *ret_exit_code = h->exit_code;
                *ret_data = h->data;
                return 0;
        }
        r = result_spill_stat(d->spill, ref & ~OUTPUT_SPILLED, ret_len, ret_exit_code);
        if (r < 0)
                return log_error_errno(r, "Failed to read the result of task %s/%u from the spill file in %s: %m",
                                       j->id, idx, result_spill_dir(d->spill));
        return 0;
}

static int output_read(Driver *d, DriverJob *j, unsigned idx, void *buf, uint32_t len) {
        int r = result_spill_read(d->spill, j->outputs[idx].ref & ~OUTPUT_SPILLED, buf, len);

        if (r < 0)
                return log_error_errno(r, "Failed to read the result of task %s/%u from the spill file in %s: %m",
                                       j->id, idx, result_spill_dir(d->spill));
        return 0;
}

static void job_free(Driver *d, DriverJob *j) {
        if (!j)
                return;
        if (j->outputs)
                for (unsigned i = 0; i < j->n_tasks; i++) {
                        uint64_t ref = j->outputs[i].ref;

                        if (ref != 0 && !(ref & OUTPUT_SPILLED)) {
                                HeldOutput *h = (HeldOutput *) (uintptr_t) ref;
                                d->results_in_memory -= MIN(d->results_in_memory, sizeof(*h) + h->len);
                                free(h);
                        }
                }
        /* the spill forgets them in one go: no read per result */
        result_spill_forget(d->spill, j->spilled, j->spilled_bytes);
        free(j->outputs);
        for (size_t i = 0; i < j->n_inputs; i++)
                free(j->inputs[i].data);
        free(j->inputs);
        if (j->preferred)
                for (char **p = j->preferred; *p; p++)
                        free(*p);
        free(j->preferred);
        library_unref(d, j->library);
        free(j->symbol);
        free(j->name);
        free(j);
}

static void job_unlink(Driver *d, DriverJob *j) {
        if (j->prev)
                j->prev->next = j->next;
        else
                d->jobs_head = j->next;
        if (j->next)
                j->next->prev = j->prev;
        else
                d->jobs_tail = j->prev;
        d->n_jobs--;
}

static void job_remove(Driver *d, DriverJob *j) {
        answer_fetches(d, j, true);
        driver_journal_forget(d, j->journal_bytes);
        hashmap_remove(d->jobs, j->id);
        if (j->request_id[0])
                hashmap_remove(d->submissions, j->request_id);
        job_unlink(d, j);
        if (j->job)
                (void) scheduler_remove_job(d->scheduler, j->job);
        job_free(d, j);
}

/* Keeps memory bounded: the oldest ended jobs go first. */
static void evict_finished_jobs(Driver *d) {
        size_t finished = 0;

        for (DriverJob *j = d->jobs_head; j; j = j->next)
                finished += scheduler_job_state(j->job) != JOB_RUNNING;
        for (DriverJob *j = d->jobs_head, *next; j && finished > MAX_FINISHED_JOBS; j = next) {
                next = j->next;
                if (scheduler_job_state(j->job) != JOB_RUNNING) {
                        job_remove(d, j);
                        finished--;
                }
        }
}

void driver_jobs_free(Driver *d) {
        for (DriverJob *j = d->jobs_head, *next; j; j = next) {
                next = j->next;
                /* the server is gone: its parked requests were abandoned */
                for (ParkedFetch *f = j->fetches, *fn; f; f = fn) {
                        fn = f->next;
                        sd_event_source_disable_unref(f->timer);
                        free(f);
                }
                job_free(d, j);
        }
        d->jobs_head = d->jobs_tail = NULL;
}

static bool symbol_is_valid(const char *s) {
        if (isempty(s) || strlen(s) > 128 || !(isalpha((unsigned char) s[0]) || s[0] == '_'))
                return false;
        for (; *s; s++)
                if (!(isalnum((unsigned char) *s) || *s == '_'))
                        return false;
        return true;
}

static bool name_is_valid(const char *s) {
        if (!s)
                return true;
        if (strlen(s) > 128)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

/* A submission that names its library by hash: the one we hold, or NULL. */
static DriverLibrary *library_by_hash(Driver *d, const Spark__SubmitJob *sj) {
        if (sj->kind != SPARK__TASK_KIND__TASK_FUNCTION || sj->library.len > 0)
                return NULL;
        return hashmap_get(d->libraries, sj->library_hash);
}

static int library_add(Driver *d, const Spark__SubmitJob *sj, DriverLibrary **ret) {
        const ProtobufCBinaryData *bytes = &sj->library;
        char hash[SHA256_HEX_SIZE];
        DriverLibrary *lib;

        if (bytes->len == 0) {
                /* named by its hash (submit_check()): held, or ENOENT */
                lib = library_by_hash(d, sj);
                if (!lib)
                        return -ENOENT;
                lib->refs++;
                *ret = lib;
                return 0;
        }

        /* A client submitting again and again sends the same object: a
         * comparison is much cheaper than hashing it each time. */
        lib = d->last_library;
        if (lib && lib->len == bytes->len && memcmp(lib->data, bytes->data, bytes->len) == 0) {
                lib->refs++;
                *ret = lib;
                return 0;
        }
        sha256_hex(bytes->data, bytes->len, hash);
        lib = hashmap_get(d->libraries, hash);
        if (lib) {
                lib->refs++;
                *ret = lib;
                return 0;
        }
        lib = calloc(1, sizeof(*lib));
        if (!lib)
                return -ENOMEM;
        memcpy(lib->hash, hash, sizeof(hash));
        lib->data = malloc(bytes->len);
        if (!lib->data) {
                free(lib);
                return -ENOMEM;
        }
        memcpy(lib->data, bytes->data, bytes->len);
        lib->len = bytes->len;
        lib->refs = 1;
        if (hashmap_put(d->libraries, lib->hash, lib) < 0) {
                free(lib->data);
                free(lib);
                return -ENOMEM;
        }
        d->last_library = lib;
        *ret = lib;
        return 0;
}

static int copy_input(ProtobufCBinaryData *dst, const ProtobufCBinaryData *src) {
        /* one extra NUL byte, so a command line can be used as a string */
        dst->data = malloc(src->len + 1);
        if (!dst->data)
                return -ENOMEM;
        if (src->len)
                memcpy(dst->data, src->data, src->len);
        dst->data[src->len] = 0;
        dst->len = src->len;
        return 0;
}

static int reply_submitted(RpcRequest *req, DriverJob *j) {
        Spark__SubmitJobReply reply = SPARK__SUBMIT_JOB_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;

        reply.job_id = j->id;
        reply.tasks = (int32_t) j->n_tasks;
        ENVELOPE_SET(&env, SUBMIT_JOB_REPLY, submit_job_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}

static const char *submit_check(const Spark__SubmitJob *sj) {
        if (sj->kind != SPARK__TASK_KIND__TASK_FUNCTION && sj->kind != SPARK__TASK_KIND__TASK_COMMAND)
                return "unknown task kind";
        if (!name_is_valid(sj->name) || !name_is_valid(sj->request_id) || strlen(sj->request_id ? sj->request_id : "") >= 64)
                return "invalid job name or request id";
        if (sj->n_inputs > 0 ? sj->count != 0 && (size_t) sj->count != sj->n_inputs
                             : sj->count < 1 || (unsigned) sj->count > MAX_TASKS_PER_JOB)
                return "a job needs inputs or a task count between 1 and 10000000";
        if (sj->n_inputs > MAX_TASKS_PER_JOB)
                return "too many tasks";
        if (sj->kind == SPARK__TASK_KIND__TASK_FUNCTION) {
                if ((sj->library.len == 0 && !sha256_hex_is_valid(sj->library_hash)) || !symbol_is_valid(sj->symbol))
                        return "a function job needs a shared object (or its sha256) and a valid symbol name";
        } else {
                if (sj->n_inputs == 0)
                        return "a command job needs one command line per task";
                for (size_t i = 0; i < sj->n_inputs; i++)
                        if (sj->inputs[i].len == 0 || memchr(sj->inputs[i].data, 0, sj->inputs[i].len))
                                return "a command line is empty or contains a NUL byte";
        }
        if (sj->n_preferred_hosts > MAX_PREFERRED_HOSTS)
                return "too many preferred hosts";
        for (size_t i = 0; i < sj->n_preferred_hosts; i++)
                if (!wire_name_is_valid(sj->preferred_hosts[i], false))
                        return "invalid preferred host name";
        return NULL;
}

/* A job from a submission, or (restored_id set) from the journal after a
 * restart: in the table and the scheduler. */
static int job_create(Driver *d, const Spark__SubmitJob *sj, const char *restored_id, usec_t now, DriverJob **ret) {
        DriverJob *j;
        const char *const *pref_list[1];
        int r;

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        if (restored_id)
                r = snprintf(j->id, sizeof(j->id), "%s", restored_id) < (int) sizeof(j->id) ? 0 : -EINVAL;
        else
                r = job_id_format(j->id, sizeof(j->id), d->next_job_number++);
        if (r < 0)
                goto fail;
        j->kind = sj->kind;
        j->n_tasks = sj->n_inputs > 0 ? (unsigned) sj->n_inputs : (unsigned) sj->count;
        j->name = strdup(isempty(sj->name) ? j->id : sj->name);
        j->n_inputs = sj->n_inputs > 0 ? sj->n_inputs : 1;
        j->inputs = calloc(j->n_inputs, sizeof(*j->inputs));
        j->outputs = calloc(j->n_tasks, sizeof(*j->outputs));
        j->preferred = calloc(sj->n_preferred_hosts + 1, sizeof(char *));
        r = -ENOMEM;
        if (!j->name || !j->inputs || !j->outputs || !j->preferred)
                goto fail;
        for (size_t i = 0; i < j->n_inputs; i++)
                if (copy_input(&j->inputs[i], sj->n_inputs > 0 ? &sj->inputs[i] : &sj->arg) < 0)
                        goto fail;
        for (size_t i = 0; i < sj->n_preferred_hosts; i++)
                if (!(j->preferred[i] = strdup(sj->preferred_hosts[i])))
                        goto fail;
        if (sj->kind == SPARK__TASK_KIND__TASK_FUNCTION) {
                r = library_add(d, sj, &j->library);
                if (r < 0)
                        goto fail;
                r = -ENOMEM;
                if (!(j->symbol = strdup(sj->symbol)))
                        goto fail;
        }

        pref_list[0] = (const char *const *) j->preferred;
        r = scheduler_submit_job(d->scheduler, j->id, j->n_tasks,
                                 sj->n_preferred_hosts > 0 ? pref_list : NULL, sj->n_preferred_hosts > 0 ? 1 : 0,
                                 now, &j->job);
        if (r < 0)
                goto fail;
        /* synced before the client hears of it (driver_submit_job()) */
        if (!restored_id) {
                r = driver_journal_job(d, j->id, sj, j->library ? j->library->hash : NULL,
                                       j->library ? &(ProtobufCBinaryData) { j->library->len, j->library->data }
                                                  : NULL);
                if (r < 0)
                        goto fail_scheduled;
                j->journal_bytes = (uint64_t) r;
        }
        j->submitted = now;
        d->metrics.tasks_submitted += j->n_tasks;
        if (!isempty(sj->request_id))
                snprintf(j->request_id, sizeof(j->request_id), "%s", sj->request_id);
        r = hashmap_put(d->jobs, j->id, j);
        if (r < 0)
                goto fail_scheduled;
        /* Without it a resent SubmitJob would run the job twice. */
        if (j->request_id[0]) {
                r = hashmap_put(d->submissions, j->request_id, j);
                if (r < 0) {
                        hashmap_remove(d->jobs, j->id);
                        goto fail_scheduled;
                }
        }
        j->prev = d->jobs_tail;
        if (d->jobs_tail)
                d->jobs_tail->next = j;
        else
                d->jobs_head = j;
        d->jobs_tail = j;
        d->n_jobs++;
        *ret = j;
        return 0;

fail_scheduled:
        (void) scheduler_cancel_job(d->scheduler, j->job, now);
        (void) scheduler_remove_job(d->scheduler, j->job);
        j->job = NULL;
fail:
        job_free(d, j);
        return r;
}

int driver_submit_job(Driver *d, RpcRequest *req, const Spark__SubmitJob *sj) {
        char peer[PEER_DESCRIPTION_MAX];
        DriverJob *j;
        const char *why;
        usec_t now = now_mono_usec();
        /* a reply frees the request, sj with it */
        int wait_ms = sj->wait_ms;
        int r;

        if (!isempty(sj->request_id) && (j = hashmap_get(d->submissions, sj->request_id)))
                return reply_submitted(req, j);  /* a resent submission */
        why = submit_check(sj);
        if (why)
                return rpc_request_reply_error(req, -EINVAL, "%s", why);
        if (sj->kind == SPARK__TASK_KIND__TASK_FUNCTION && sj->library.len == 0 && !library_by_hash(d, sj))
                return rpc_request_reply_error(req, -ENOENT,
                                               "this driver holds no shared object with sha256 %s: send the object",
                                               sj->library_hash);

        r = job_create(d, sj, NULL, now, &j);
        if (r < 0)
                return rpc_request_reply_error(req, r, "cannot submit the job: %s", strerror(-r));

        /* The tasks start on the parked polls before the job's journal
         * entry is synced: they run while the disk syncs, and a submission
         * that waits has the entry synced with the results it is answered
         * with (fetch_reply()). */
        d->effects->work_ready(d);
        r = wait_ms <= 0 ? driver_journal_flush(d) : 0;
        if (r < 0) {
                (void) scheduler_cancel_job(d->scheduler, j->job, now);
                job_remove(d, j);
                return rpc_request_reply_error(req, r, "cannot write the journal: %s", strerror(-r));
        }
        /* the audit trail's record of the submission too (SPARK_PEER=) */
        rpc_request_peer_describe(req, peer, sizeof(peer));
        log_struct(LOG_INFO,
                   LOG_FIELDS(.app_id = d->app_id, .job_id = j->id, .peer = peer,
                              .message_id = SPARK_MESSAGE_JOB_SUBMITTED),
                   "Job %s (%s) submitted by %s: %u %s tasks", j->id, j->name, peer, j->n_tasks,
                   j->kind == SPARK__TASK_KIND__TASK_FUNCTION ? "function" : "command");
        if (wait_ms <= 0)
                r = reply_submitted(req, j);
        /* a job of 0 tasks ends at once */
        driver_drain_finished_jobs(d);
        if (wait_ms > 0) {
                /* the whole job in one round trip, when it is quick */
                size_t max = MIN((size_t) j->n_tasks, (size_t) FETCH_MAX_TASKS);
                r = scheduler_job_state(j->job) == JOB_RUNNING ? park_fetch(d, j, req, 0, max, wait_ms, true)
                                                               : fetch_reply(d, j, req, 0, max, true);
        }
        evict_finished_jobs(d);
        return r;
}

int driver_restore_job(Driver *d, const char *job_id, const Spark__SubmitJob *sj) {
        const char *why = submit_check(sj);
        DriverJob *j;
        unsigned number;
        int r;

        if (why || hashmap_get(d->jobs, job_id) || sscanf(job_id, "job-%u", &number) != 1)
                return -EBADMSG;
        r = job_create(d, sj, job_id, now_mono_usec(), &j);
        if (r < 0)
                return r;
        d->next_job_number = MAX(d->next_job_number, number + 1);
        return 0;
}

int driver_restore_result(Driver *d, const Spark__TaskResult *r) {
        DriverJob *j = isempty(r->job_id) ? NULL : hashmap_get(d->jobs, r->job_id);
        int k;

        if (!j || r->index < 0 || (unsigned) r->index >= j->n_tasks || r->attempt < 1 ||
            r->status != SPARK__TASK_STATUS__TASK_OK || r->output.len > UINT32_MAX)
                return -EBADMSG;
        k = scheduler_task_restore(d->scheduler, j->job, (unsigned) r->index, (unsigned) r->attempt, r->output.len,
                                   now_mono_usec());
        if (k < 0)
                return k;  /* -EALREADY: a duplicate, the first one stays */
        k = output_store(d, j, (unsigned) r->index, r->exit_code, r->output.data, r->output.len);
        if (k < 0)
                return k;
        d->metrics.tasks_succeeded++;
        return 0;
}

int driver_remove_job(Driver *d, const char *job_id) {
        DriverJob *j = isempty(job_id) ? NULL : hashmap_get(d->jobs, job_id);

        if (!j)
                return -ENOENT;
        job_remove(d, j);
        return 0;
}

void driver_job_journaled(Driver *d, const char *job_id, uint64_t bytes) {
        DriverJob *j = isempty(job_id) ? NULL : hashmap_get(d->jobs, job_id);

        if (j)
                j->journal_bytes += bytes;
}

int driver_restore_job_end(Driver *d, const char *job_id) {
        DriverJob *j = hashmap_get(d->jobs, job_id);

        if (!j)
                return -EBADMSG;
        (void) scheduler_cancel_job(d->scheduler, j->job, now_mono_usec());
        return 0;
}

void driver_task_launch_fill(Driver *d, const TaskAssignment *a, Spark__TaskLaunch *tl) {
        DriverJob *j = job_by_scheduler_job(d, a->job);
        const ProtobufCBinaryData *in;

        spark__task_launch__init(tl);
        if (!j)
                return;
        in = &j->inputs[j->n_inputs == 1 ? 0 : a->index];
        tl->job_id = j->id;
        tl->index = (int32_t) a->index;
        tl->attempt = (int32_t) a->attempt;
        tl->kind = j->kind;
        if (j->kind == SPARK__TASK_KIND__TASK_COMMAND) {
                tl->command = (char *) in->data;
        } else {
                tl->input = *in;
                tl->library_hash = j->library->hash;
                tl->symbol = j->symbol;
        }
}

const char *driver_task_result_check(Driver *d, const Spark__TaskResult *r, char *buf, size_t size) {
        DriverJob *j = isempty(r->job_id) ? NULL : hashmap_get(d->jobs, r->job_id);

        if (!j)
                return NULL;  /* a job that is gone: its late results are dropped */
        if (r->index < 0 || (unsigned) r->index >= j->n_tasks)
                snprintf(buf, size, "result for task %d of job %s, which has %u tasks", r->index, j->id,
                         j->n_tasks);
        else if (r->attempt < 1)
                snprintf(buf, size, "result of attempt %d of task %d of job %s", r->attempt, r->index, j->id);
        else
                return NULL;
        return buf;
}

void driver_task_result(Driver *d, int executor_id, const Spark__TaskResult *r, usec_t now) {
        DriverJob *j = isempty(r->job_id) ? NULL : hashmap_get(d->jobs, r->job_id);
        bool success = r->status == SPARK__TASK_STATUS__TASK_OK;
        int verdict;

        if (!j || r->index < 0 || (unsigned) r->index >= j->n_tasks || r->attempt < 1)
                return;
        verdict = scheduler_task_finished(d->scheduler, j->job, (unsigned) r->index, (unsigned) r->attempt, executor_id,
                                          success, r->output.len, isempty(r->error) ? NULL : r->error, now);
        if (verdict == TASK_RESULT_ACCEPTED || (!success && verdict != TASK_RESULT_DROPPED)) {
                bool keep = verdict == TASK_RESULT_ACCEPTED && r->output.len <= UINT32_MAX;

                if (output_store(d, j, (unsigned) r->index, r->exit_code, keep ? r->output.data : NULL,
                                 keep ? r->output.len : 0) < 0)
                        log_oom();
        }
        if (verdict == TASK_RESULT_ACCEPTED) {
                /* before any client sees it (fetch_reply() flushes) */
                j->journal_bytes += driver_journal_result(d, r);
                d->metrics.tasks_succeeded++;
                if (r->run_us >= 0)
                        prom_histogram_observe(&d->metrics.task_seconds, (double) r->run_us / USEC_PER_SEC);
        } else if (!success && verdict != TASK_RESULT_DROPPED) {
                d->metrics.attempts_failed++;
                if (verdict == TASK_RESULT_RETRYING)
                        d->metrics.tasks_retried++;
        }
        if (j->fetches && verdict != TASK_RESULT_DROPPED && verdict != TASK_RESULT_RETRYING)
                answer_fetches(d, j, false);
        if (verdict == TASK_RESULT_RETRYING)
                log_struct(LOG_NOTICE, LOG_FIELDS(.app_id = d->app_id, .job_id = j->id, .executor_id = executor_id),
                           "Task %s/%d attempt %d failed on executor %d: %s; retrying", j->id, r->index, r->attempt,
                           executor_id, isempty(r->error) ? "task failed" : r->error);
}

void driver_drain_finished_jobs(Driver *d) {
        bool killed = false;
        Job *job;

        while ((job = scheduler_pop_finished_job(d->scheduler))) {
                TaskAssignment left[256];
                size_t n = scheduler_job_in_flight(d->scheduler, job, left, ELEMENTSOF(left));
                JobCounts c;
                JobState st = scheduler_job_state(job);

                killed = killed || n > 0;
                for (size_t i = 0; i < MIN(n, ELEMENTSOF(left)); i++)
                        d->effects->kill(d, left[i].executor_id, scheduler_job_id(job), (int) left[i].index);
                if (n > ELEMENTSOF(left))
                        /* more than we list: kill the whole job on every executor */
                        d->effects->kill(d, -1, scheduler_job_id(job), -1);

                {
                        DriverJob *j = job_by_scheduler_job(d, job);
                        if (j)
                                answer_fetches(d, j, true);
                        if (st != JOB_SUCCEEDED) {
                                uint64_t bytes = driver_journal_job_ended(d, scheduler_job_id(job));
                                if (j)
                                        j->journal_bytes += bytes;
                                else
                                        driver_journal_forget(d, bytes);
                        }
                }
                scheduler_job_counts(job, &c);
                if (st >= 0 && st < (int) ELEMENTSOF(d->metrics.jobs_ended))
                        d->metrics.jobs_ended[st]++;
                prom_histogram_observe(&d->metrics.job_seconds,
                                       (double) (scheduler_job_finished_at(job) - scheduler_job_submitted_at(job)) /
                                               USEC_PER_SEC);
                log_struct(st == JOB_SUCCEEDED ? LOG_INFO : LOG_WARNING,
                           LOG_FIELDS(.app_id = d->app_id, .job_id = scheduler_job_id(job),
                                      .message_id = SPARK_MESSAGE_JOB_FINISHED),
                           "Job %s %s: %u of %u tasks succeeded, %u failed, %u killed in %llu ms%s%s",
                           scheduler_job_id(job), job_state_to_string(st), c.succeeded, c.tasks, c.failed, c.killed,
                           (unsigned long long) ((scheduler_job_finished_at(job) - scheduler_job_submitted_at(job)) / USEC_PER_MSEC),
                           scheduler_job_reason(job) ? ": " : "", strempty(scheduler_job_reason(job)));
        }
        /* after the whole batch: each parked poll answered once, not per kill */
        if (killed)
                d->effects->kills_queued(d);
}

static Spark__JobState job_state_to_wire(JobState s) {
        switch (s) {
        case JOB_RUNNING:
                return SPARK__JOB_STATE__JOB_RUNNING;
        case JOB_SUCCEEDED:
                return SPARK__JOB_STATE__JOB_SUCCEEDED;
        case JOB_FAILED:
                return SPARK__JOB_STATE__JOB_FAILED;
        case JOB_CANCELLED:
                return SPARK__JOB_STATE__JOB_CANCELLED;
        default:
                return SPARK__JOB_STATE__JOB_STATE_UNKNOWN;
        }
}

static void job_info_fill(Driver *d, DriverJob *j, Spark__JobInfo *info) {
        JobCounts c;
        usec_t end = scheduler_job_finished_at(j->job);

        scheduler_job_counts(j->job, &c);
        spark__job_info__init(info);
        info->job_id = j->id;
        info->name = j->name;
        info->state = job_state_to_wire(scheduler_job_state(j->job));
        info->tasks = (int32_t) c.tasks;
        info->done = (int32_t) c.succeeded;
        info->failed = (int32_t) (c.failed + c.killed);
        info->running = (int32_t) c.running;
        info->reason = (char *) strempty(scheduler_job_reason(j->job));
        info->executors = (int32_t) d->n_live_executors;
        info->elapsed_ms = (int64_t) (((end ? end : now_mono_usec()) - j->submitted) / USEC_PER_MSEC);
}

static DriverJob *find_job(Driver *d, RpcRequest *req, const char *job_id) {
        DriverJob *j = isempty(job_id) ? NULL : hashmap_get(d->jobs, job_id);

        if (!j)
                (void) rpc_request_reply_error(req, -ENOENT, "no job '%s'", strempty(job_id));
        return j;
}

/* What a client sees is on disk: a restart cannot take it back (a job's
 * entry waits for a flush, driver_journal_job()).  false: the journal
 * cannot be written, and req is answered so. */
static bool journal_synced_for(Driver *d, RpcRequest *req) {
        int r = driver_journal_flush(d);

        if (r >= 0)
                return true;
        (void) rpc_request_reply_error(req, r, "cannot write the journal: %s", strerror(-r));
        return false;
}

int driver_job_status(Driver *d, RpcRequest *req, const char *job_id) {
        Spark__JobInfo info;
        Envelope env = ENVELOPE_INIT;
        DriverJob *j;

        if (!journal_synced_for(d, req))
                return 0;
        j = find_job(d, req, job_id);
        if (!j)
                return 0;
        job_info_fill(d, j, &info);
        ENVELOPE_SET(&env, JOB_INFO, job_info, &info);
        return rpc_request_reply_envelope(req, &env);
}

int driver_list_jobs(Driver *d, RpcRequest *req) {
        Spark__JobList list = SPARK__JOB_LIST__INIT;
        _cleanup_free_ Spark__JobInfo *infos = calloc(d->n_jobs + 1, sizeof(*infos));
        _cleanup_free_ Spark__JobInfo **ptrs = calloc(d->n_jobs + 1, sizeof(*ptrs));
        Envelope env = ENVELOPE_INIT;

        if (!infos || !ptrs)
                return -ENOMEM;
        if (!journal_synced_for(d, req))
                return 0;
        for (DriverJob *j = d->jobs_head; j; j = j->next) {
                job_info_fill(d, j, &infos[list.n_jobs]);
                ptrs[list.n_jobs] = &infos[list.n_jobs];
                list.n_jobs++;
        }
        list.jobs = ptrs;
        ENVELOPE_SET(&env, JOB_LIST, job_list, &list);
        return rpc_request_reply_envelope(req, &env);
}

static Spark__TaskStatus task_state_to_wire(TaskState s) {
        switch (s) {
        case TASK_SUCCEEDED:
                return SPARK__TASK_STATUS__TASK_OK;
        case TASK_FAILED:
                return SPARK__TASK_STATUS__TASK_FAILED;
        case TASK_KILLED:
                return SPARK__TASK_STATUS__TASK_KILLED;
        default:
                return SPARK__TASK_STATUS__TASK_STATUS_UNKNOWN;
        }
}

static bool task_is_done(DriverJob *j, unsigned index) {
        TaskInfo ti;

        return scheduler_task_info(j->job, index, &ti) >= 0 && ti.state != TASK_PENDING && ti.state != TASK_RUNNING;
}

/* Answers with the consecutive finished tasks from `from`, at most max. */
static int fetch_reply(Driver *d, DriverJob *j, RpcRequest *req, unsigned from, size_t max, bool submit) {
        Spark__FetchResultsReply reply = SPARK__FETCH_RESULTS_REPLY__INIT;
        _cleanup_free_ Spark__TaskOutcome *outcomes = NULL;
        _cleanup_free_ Spark__TaskOutcome **ptrs = NULL;
        _cleanup_free_ const char **errors = NULL;
        _cleanup_free_ uint8_t *spilled = NULL;  /* the bytes of spilled results, read back */
        Spark__JobInfo info;
        Envelope env = ENVELOPE_INIT;
        size_t ready = 0, bytes = 0, n_errors = 0, spilled_bytes = 0, at = 0;
        int r;

        if (!journal_synced_for(d, req))
                return 0;

        /* Consecutive finished tasks only: the client prints in task order. */
        for (; ready < max && bytes < FETCH_MAX_BYTES; ready++) {
                TaskInfo ti;
                const uint8_t *data;
                uint32_t len;
                int32_t exit_code;
                int ne;

                if (scheduler_task_info(j->job, from + (unsigned) ready, &ti) < 0 || ti.state == TASK_PENDING ||
                    ti.state == TASK_RUNNING)
                        break;
                r = output_peek(d, j, from + (unsigned) ready, &len, &exit_code, &data);
                if (r < 0)
                        return rpc_request_reply_error(req, r, "cannot read the results of job %s from the spill "
                                                       "file in %s: %s", j->id, result_spill_dir(d->spill),
                                                       strerror(-r));
                bytes += len + 64;
                if (!data)
                        spilled_bytes += len;
                ne = scheduler_task_errors(j->job, from + (unsigned) ready, NULL, 0);
                n_errors += (size_t) MAX(ne, 0);
        }

        outcomes = calloc(ready + 1, sizeof(*outcomes));
        ptrs = calloc(ready + 1, sizeof(*ptrs));
        errors = calloc(n_errors + 1, sizeof(char *));
        spilled = malloc(spilled_bytes + 1);
        if (!outcomes || !ptrs || !errors || !spilled)
                return -ENOMEM;

        n_errors = 0;
        for (size_t k = 0; k < ready; k++) {
                unsigned idx = from + (unsigned) k;
                Spark__TaskOutcome *o = &outcomes[k];
                TaskInfo ti;
                int ne;

                (void) scheduler_task_info(j->job, idx, &ti);
                spark__task_outcome__init(o);
                o->index = (int32_t) idx;
                o->status = task_state_to_wire(ti.state);
                o->attempts = (int32_t) ti.attempts;
                {
                        const uint8_t *data;
                        uint32_t len;

                        r = output_peek(d, j, idx, &len, &o->exit_code, &data);
                        if (r >= 0 && !data && len > 0) {
                                /* peeked above: the same len, within spilled_bytes */
                                r = output_read(d, j, idx, spilled + at, len);
                                data = spilled + at;
                                at += len;
                        }
                        if (r < 0)
                                return rpc_request_reply_error(req, r, "cannot read the results of job %s from "
                                                               "the spill file in %s: %s", j->id,
                                                               result_spill_dir(d->spill), strerror(-r));
                        o->output.data = (uint8_t *) data;
                        o->output.len = len;
                }
                ne = scheduler_task_errors(j->job, idx, errors + n_errors, SIZE_MAX);
                if (ne > 0) {
                        o->errors = (char **) (errors + n_errors);
                        o->n_errors = (size_t) ne;
                        n_errors += (size_t) ne;
                }
                ptrs[reply.n_outcomes++] = o;
        }
        job_info_fill(d, j, &info);
        if (submit) {
                Spark__SubmitJobReply sr = SPARK__SUBMIT_JOB_REPLY__INIT;

                sr.job_id = j->id;
                sr.tasks = (int32_t) j->n_tasks;
                sr.job = &info;
                sr.outcomes = ptrs;
                sr.n_outcomes = reply.n_outcomes;
                ENVELOPE_SET(&env, SUBMIT_JOB_REPLY, submit_job_reply, &sr);
                return rpc_request_reply_envelope(req, &env);
        }
        reply.job = &info;
        reply.outcomes = ptrs;
        ENVELOPE_SET(&env, FETCH_RESULTS_REPLY, fetch_results_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}

static void parked_fetch_answer(ParkedFetch *f) {
        DriverJob *j = f->job;

        for (ParkedFetch **p = &j->fetches; *p; p = &(*p)->next)
                if (*p == f) {
                        *p = f->next;
                        break;
                }
        (void) fetch_reply(f->driver, j, f->req, f->from, f->max, f->submit);
        sd_event_source_disable_unref(f->timer);
        free(f);
}

/* all: every parked fetch (the job ended or goes); else those whose next
 * task is done. */
static void answer_fetches(Driver *d, DriverJob *j, bool all) {
        (void) d;
        for (ParkedFetch *f = j->fetches, *next; f; f = next) {
                next = f->next;
                if (all || (!f->submit && (f->from >= j->n_tasks || task_is_done(j, f->from))))
                        parked_fetch_answer(f);
        }
}

static int on_fetch_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        parked_fetch_answer(userdata);
        return 0;
}

static void on_fetch_abandoned(RpcRequest *req, void *userdata) {
        ParkedFetch *f = userdata;
        (void) req;
        /* the server is going away; driver_jobs_free() frees f */
        f->req = NULL;
}

/* Keeps req until the job's next result (or, for a submission, the job's
 * end) or wait_ms. */
static int park_fetch(Driver *d, DriverJob *j, RpcRequest *req, unsigned from, size_t max, int wait_ms, bool submit) {
        ParkedFetch *f;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        *f = (ParkedFetch) { .driver = d, .req = req, .job = j, .from = from, .max = max, .submit = submit,
                             .next = j->fetches };
        if (sd_event_add_time_relative(d->event, &f->timer, CLOCK_MONOTONIC,
                                       (usec_t) MIN(wait_ms, FETCH_MAX_WAIT_MS) * USEC_PER_MSEC, 1000,
                                       on_fetch_timeout, f) < 0) {
                free(f);
                return fetch_reply(d, j, req, from, max, submit);
        }
        rpc_request_set_abandon_handler(req, on_fetch_abandoned, f);
        j->fetches = f;
        return 0;
}

int driver_fetch_results(Driver *d, RpcRequest *req, const Spark__FetchResults *fr) {
        DriverJob *j = find_job(d, req, fr->job_id);
        unsigned from;
        size_t max;

        if (!j)
                return 0;
        if (fr->from_index < 0 || (unsigned) fr->from_index > j->n_tasks)
                return rpc_request_reply_error(req, -EINVAL, "from_index %d out of range", fr->from_index);
        if (fr->wait_ms < 0)
                return rpc_request_reply_error(req, -EINVAL, "wait_ms %d is negative", fr->wait_ms);
        from = (unsigned) fr->from_index;
        max = fr->max > 0 ? MIN((size_t) fr->max, (size_t) FETCH_MAX_TASKS) : 1000;
        max = MIN(max, (size_t) (j->n_tasks - from));

        if (fr->wait_ms == 0 || max == 0 || scheduler_job_state(j->job) != JOB_RUNNING || task_is_done(j, from))
                return fetch_reply(d, j, req, from, max, false);
        return park_fetch(d, j, req, from, max, fr->wait_ms, false);
}


int driver_cancel_job(Driver *d, RpcRequest *req, const char *job_id) {
        Spark__JobInfo info;
        Envelope env = ENVELOPE_INIT;
        DriverJob *j;
        int r;

        if (!journal_synced_for(d, req))
                return 0;
        j = find_job(d, req, job_id);
        if (!j)
                return 0;
        r = scheduler_cancel_job(d->scheduler, j->job, now_mono_usec());
        if (r >= 0)
                log_struct(LOG_NOTICE, LOG_FIELDS(.app_id = d->app_id, .job_id = j->id),
                           "Job %s cancelled on request, killing %d running tasks", j->id, r);
        driver_drain_finished_jobs(d);
        job_info_fill(d, j, &info);
        ENVELOPE_SET(&env, JOB_INFO, job_info, &info);
        return rpc_request_reply_envelope(req, &env);
}

int driver_fetch_library(Driver *d, RpcRequest *req, const char *hash) {
        Spark__FetchLibraryReply reply = SPARK__FETCH_LIBRARY_REPLY__INIT;
        Envelope env = ENVELOPE_INIT;
        DriverLibrary *lib = isempty(hash) ? NULL : hashmap_get(d->libraries, hash);

        if (!lib)
                return rpc_request_reply_error(req, -ENOENT, "no library with hash '%s'", strempty(hash));
        reply.data.data = lib->data;
        reply.data.len = lib->len;
        ENVELOPE_SET(&env, FETCH_LIBRARY_REPLY, fetch_library_reply, &reply);
        return rpc_request_reply_envelope(req, &env);
}

/* ------------------------------------------------------- the HTTP API's JSON */

void driver_jobs_json(Driver *d, Json *json) {
        json_object_begin(json, NULL);
        json_array_begin(json, "jobs");
        for (DriverJob *j = d->jobs_head; j; j = j->next) {
                Spark__JobInfo info;

                job_info_fill(d, j, &info);
                job_info_json(json, NULL, &info);
        }
        json_array_end(json);
        json_object_end(json);
}

int driver_job_json(Driver *d, const char *job_id, unsigned max_tasks, Json *json) {
        DriverJob *j = hashmap_get(d->jobs, job_id);
        Spark__JobInfo info;
        unsigned n;

        if (!j)
                return -ENOENT;
        job_info_fill(d, j, &info);
        if (max_tasks == 0) {
                job_info_json(json, NULL, &info);
                return 0;
        }
        /* the job with its first tasks: a million of them is not a page */
        n = MIN(j->n_tasks, max_tasks);
        json_object_begin(json, NULL);
        job_info_json(json, "job", &info);
        json_int(json, "tasks_listed", n);
        json_array_begin(json, "tasks");
        for (unsigned i = 0; i < n; i++) {
                TaskInfo t;

                if (scheduler_task_info(j->job, i, &t) < 0)
                        continue;
                json_object_begin(json, NULL);
                json_int(json, "task", i);
                json_string(json, "state", task_state_to_string(t.state));
                json_int(json, "attempts", t.attempts);
                json_int(json, "failures", t.failures);
                json_int(json, "executor_id", t.executor_id);
                json_object_end(json);
        }
        json_array_end(json);
        json_object_end(json);
        return 0;
}

uint64_t driver_jobs_spilled_bytes(Driver *d) {
        return result_spill_live_bytes(d->spill);
}

uint64_t driver_jobs_output_bytes(Driver *d) {
        uint64_t n = 0;

        for (DriverJob *j = d->jobs_head; j; j = j->next)
                n += j->output_bytes;
        return n;
}
