/* The master's state on disk, so that a restart loses nothing:
 * applications with their id counters, workers, and the executors running
 * on them.
 *
 * state_dir/state.pb, the snapshot, is written atomically (temporary file,
 * fsync, rename, fsync of the directory) a moment after a change — a
 * moment that grows with what building and writing it costs
 * (STATE_SAVE_SHARE), so that a master with 100,000 executors does not
 * spend its time saving them while it places more (a small state is saved
 * 50 ms after a change, however slow the disk), and later while requests
 * keep coming (master_state_save_wait()).  Its executors are
 * streamed to the file one by one, not built as one message first.
 * That save runs in a child process (master-state-child.c): building and
 * writing 100,000 executors takes tens of milliseconds, which requests
 * arriving meanwhile would wait for on the loop.  Saves that must be on
 * disk before something is answered run here, in the loop.
 *
 * A new application must be on disk before it is answered, so that a
 * restart still places its executors.  Rewriting the snapshot for that took
 * 66 ms with 90,000 executors; instead the application is appended to
 * state_dir/apps.journal and synced.  Entries carry a sequence number; a
 * snapshot records the last one it holds, and the journal is emptied once
 * the snapshot is on disk.  Loading replays the entries after the
 * snapshot's.  Each entry is framed with a checksum (record-frame.h): a torn
 * last entry (a crash in the middle of an append) ends the replay; a
 * damaged entry elsewhere is reported with its offset and skipped up to the
 * next entry whose checksum proves it whole (nothing in between is guessed
 * at), and the replay says what it restored.  A journal with either is moved
 * aside once a snapshot holds what it could read: new entries must not
 * follow bytes the next load would stop at.
 *
 * An app's entry is written before its first launches go out and synced
 * after them, before the answer: the launches do not wait for the disk,
 * and nor does the loop (master-journal-sync.c).
 * Written, it survives a crash of the master (the page cache keeps it), so
 * the count of app ids goes on exactly after a restart in the same boot.
 * A crash of the host may lose it after its id reached a worker, so app
 * numbers are also reserved on disk in blocks of APP_NUMBER_BLOCK (an
 * entry without an app), and a start in another boot than the state's
 * goes on after the reserved ones: no id is handed out twice.  The driver,
 * which had no answer, registers again under a new id, and the executors
 * of the lost one are killed when their workers report them. */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <systemd/sd-id128.h>

#include "error-buf.h"
#include "fileio.h"
#include "log.h"
#include "master.h"
#include "record-frame.h"

#define STATE_FILE "state.pb"
#define JOURNAL_FILE "apps.journal"
#define STATE_VERSION 1u
#define STATE_MAX_BYTES (512u * 1024u * 1024u)
#define STATE_SAVE_DELAY_USEC (50 * USEC_PER_MSEC)
#define STATE_SAVE_DELAY_MAX_USEC (10 * USEC_PER_SEC)
/* The delay before a save is at least this many times the last save's cost
 * (without its syncs): a save's work takes at most about 1% of a core.  At
 * 100,000 executors a save costs tens of milliseconds of a child's time,
 * and its fork() stops the loop for several (master_state_save_wait()):
 * every 2 s, as it was, that set the p99 of every request the master
 * answers under load. */
#define STATE_SAVE_SHARE 100
/* A save falls due while requests keep coming: it waits for a moment
 * without one, STATE_SAVE_QUIET_SHARE times what the last fork stopped the
 * loop for, within STATE_SAVE_QUIET_MIN_USEC and _MAX_USEC; and that up to
 * STATE_SAVE_GAP_WAIT_SHARE times the pause past the time it fell due,
 * within STATE_SAVE_GAP_WAIT_MIN_USEC and _MAX_USEC
 * (master_state_save_wait()). */
#define STATE_SAVE_QUIET_SHARE 10
#define STATE_SAVE_QUIET_MIN_USEC (5 * USEC_PER_MSEC)
#define STATE_SAVE_QUIET_MAX_USEC (200 * USEC_PER_MSEC)
#define STATE_SAVE_GAP_WAIT_SHARE 1000
#define STATE_SAVE_GAP_WAIT_MIN_USEC (2 * USEC_PER_SEC)
#define STATE_SAVE_GAP_WAIT_MAX_USEC (10 * USEC_PER_SEC)
/* A save that failed is tried again after this, doubling up to the most
 * while it keeps failing. */
#define STATE_SAVE_RETRY_MIN_USEC (500 * USEC_PER_MSEC)
#define STATE_SAVE_RETRY_MAX_USEC (30 * USEC_PER_SEC)
#define WRITER_BUFFER_BYTES (64u * 1024u)
#define WRITER_STREAM_BYTES (1024u * 1024u)
#define JOURNAL_FOREGROUND_BYTES (1024 * 1024)
#define APP_NUMBER_BLOCK 64u
/* MasterSnapshot.executors: field 6, length-delimited */
#define SNAPSHOT_EXECUTOR_TAG ((6u << 3) | 2u)

typedef struct RecordBuffers {
        Spark__AppRecord *records;
        Spark__AppRecord **record_ptrs;
        Spark__AppInfo *apps;
        Spark__KeyValue *env;
        Spark__KeyValue **env_ptrs;
        char **env_keys;
        size_t n_records, n_env_keys;
} RecordBuffers;

typedef struct StateBuffers {
        Spark__MasterSnapshot snap;
        RecordBuffers r;
        Spark__WorkerInfo *workers;
        Spark__WorkerInfo **worker_ptrs;
        Spark__AppInfo **history_apps;
        size_t n_history_apps;
        Spark__WorkerInfo **history_workers;
        size_t n_history_workers;
} StateBuffers;

static void record_buffers_done(RecordBuffers *b) {
        for (size_t i = 0; i < b->n_env_keys; i++)
                free(b->env_keys[i]);
        free(b->env_keys);
        free(b->records);
        free(b->record_ptrs);
        free(b->apps);
        free(b->env);
        free(b->env_ptrs);
}

static void state_buffers_done(StateBuffers *b) {
        record_buffers_done(&b->r);
        free(b->workers);
        free(b->worker_ptrs);
        history_apps_free(b->history_apps, b->n_history_apps);
        history_workers_free(b->history_workers, b->n_history_workers);
}

static int record_buffers_alloc(RecordBuffers *b, size_t n_apps, size_t n_env) {
        b->records = calloc(n_apps + 1, sizeof(*b->records));
        b->record_ptrs = calloc(n_apps + 1, sizeof(*b->record_ptrs));
        b->apps = calloc(n_apps + 1, sizeof(*b->apps));
        b->env = calloc(n_env + 1, sizeof(*b->env));
        b->env_ptrs = calloc(n_env + 1, sizeof(*b->env_ptrs));
        b->env_keys = calloc(n_env + 1, sizeof(*b->env_keys));
        if (!b->records || !b->record_ptrs || !b->apps || !b->env || !b->env_ptrs || !b->env_keys)
                return -ENOMEM;
        return 0;
}

/* Fair share's clocks, kept as durations: the monotonic clock they are on
 * starts again with the host. */
static void app_marks_fill(const App *a, Spark__AppRecord *r, usec_t now) {
        if (a->starved_since > 0 && a->starved_since <= now)
                r->starved_ms = (int64_t) ((now - a->starved_since) / USEC_PER_MSEC) + 1;  /* 0: not starved */
        if (a->regrow_after > now)
                r->regrow_left_ms = (int64_t) ((a->regrow_after - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
}

static void executor_marks_fill(const ClusterExecutor *e, Spark__ExecutorInfo *info, usec_t now) {
        info->released = e->released;
        info->preempting = e->preempting;
        info->preempt_killed = e->preempt_killed;
        if (e->preempting && e->preempt_deadline > now)
                info->preempt_left_ms = (int64_t) ((e->preempt_deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
}

/* The next record of b, for a; its strings point into a. */
static int record_fill(RecordBuffers *b, const App *a, Spark__AppRecord **ret) {
        Spark__AppRecord *r = &b->records[b->n_records];
        Spark__AppInfo *ai = &b->apps[b->n_records];

        spark__app_record__init(r);
        spark__app_info__init(ai);
        ai->app_id = (char *) a->id;
        ai->name = a->name;
        ai->driver_url = a->driver_url;
        ai->driver_channel_port = a->driver_channel_port;
        ai->state = a->state;
        ai->max_cores = a->max_cores;
        ai->weight = a->weight;
        ai->cores_per_executor = a->cores_per_executor;
        ai->executor_memory_mb = a->executor_memory_mb;
        ai->submitted_by = a->submitted_by;
        ai->start_time_ms = a->start_time_ms;
        ai->cpu_usage_ns = a->cpu_usage_ns;
        ai->memory_peak_bytes = a->memory_peak_bytes;
        ai->ui_url = a->ui_url ? a->ui_url : (char *) "";
        ai->dynamic_allocation = a->dynamic_allocation;
        ai->executor_resources = a->wants_ptrs;
        ai->n_executor_resources = a->n_wants;
        ai->constraints = a->constraints;
        ai->n_constraints = a->n_constraints;
        r->info = ai;
        r->driver_events = a->driver_events;
        r->next_executor_id = a->next_executor_id;
        r->executor_limit = a->executor_limit;
        r->retry_count = a->retry_count;
        app_marks_fill(a, r, now_mono_usec());
        r->executor_key = (ProtobufCBinaryData) { .len = sizeof(a->executor_key), .data = (uint8_t *) a->executor_key };
        r->env = &b->env_ptrs[b->n_env_keys];
        for (size_t k = 0; k < a->n_env; k++) {
                Spark__KeyValue *kv = &b->env[b->n_env_keys];
                const char *eq = strchr(a->env[k], '=');
                spark__key_value__init(kv);
                kv->key = b->env_keys[b->n_env_keys] = strndup(a->env[k], (size_t) (eq - a->env[k]));
                if (!kv->key)
                        return -ENOMEM;
                kv->value = (char *) eq + 1;
                b->env_ptrs[b->n_env_keys++] = kv;
                r->n_env++;
        }
        b->record_ptrs[b->n_records++] = r;
        *ret = r;
        return 0;
}

/* This boot's id, "" if unknown (then every start counts as a new boot). */
static const char *boot_id(void) {
        static char buf[SD_ID128_STRING_MAX];
        sd_id128_t id;

        if (buf[0] == 0 && sd_id128_get_boot(&id) >= 0)
                sd_id128_to_string(id, buf);
        return buf;
}

/* Everything but the executors, which master_state_save() streams. */
static int state_build(Master *m, StateBuffers *b) {
        Hashmap *workers = cluster_workers(m->cluster);
        size_t na = 0, nenv = 0, nw = hashmap_size(workers), i = 0;
        Spark__AppRecord *r;
        void *v;
        int k;

        for (App *a = cluster_apps(m->cluster); a; a = a->next) {
                na++;
                nenv += a->n_env;
        }
        b->workers = calloc(nw + 1, sizeof(*b->workers));
        b->worker_ptrs = calloc(nw + 1, sizeof(*b->worker_ptrs));
        if (!b->workers || !b->worker_ptrs || record_buffers_alloc(&b->r, na, nenv) < 0)
                return -ENOMEM;

        spark__master_snapshot__init(&b->snap);
        b->snap.version = STATE_VERSION;
        b->snap.start_time = cluster_start_time(m->cluster);
        b->snap.next_app_number = cluster_next_app_number(m->cluster);
        b->snap.journal_seq = m->journal_seq;
        b->snap.app_numbers_reserved = m->app_numbers_reserved;
        b->snap.boot_id = (char *) boot_id();

        while (hashmap_iterate(workers, &i, &v, NULL)) {
                Worker *w = v;
                Spark__WorkerInfo *wi = &b->workers[b->snap.n_workers];
                spark__worker_info__init(wi);
                wi->worker_id = w->id;
                wi->host = w->host;
                wi->endpoint = w->endpoint;
                wi->events_endpoint = w->events_endpoint;
                wi->cores = w->cores;
                wi->memory_mb = w->memory_mb;
                wi->state = w->state;
                wi->drain_timeout_ms = worker_drain_left_ms(w, now_mono_usec());
                wi->labels = w->labels;
                wi->n_labels = w->n_labels;
                wi->resources = w->resource_ptrs;
                wi->n_resources = w->n_resources;
                b->worker_ptrs[b->snap.n_workers++] = wi;
        }

        for (App *a = cluster_apps(m->cluster); a; a = a->next) {
                k = record_fill(&b->r, a, &r);
                if (k < 0)
                        return k;
        }
        b->snap.n_apps = b->r.n_records;
        b->snap.apps = b->r.record_ptrs;
        b->snap.workers = b->worker_ptrs;

        if (history_unpack_apps(&m->history, &b->history_apps, &b->n_history_apps) < 0 ||
            history_unpack_workers(&m->history, &b->history_workers, &b->n_history_workers) < 0)
                return -ENOMEM;
        b->snap.finished_apps = b->history_apps;
        b->snap.n_finished_apps = b->n_history_apps;
        b->snap.lost_workers = b->history_workers;
        b->snap.n_lost_workers = b->n_history_workers;
        return 0;
}

/* Buffered writes; the first error sticks.  Writing state.pb, the data
 * goes to the disk as it is written (stream_out), not all at the final
 * fsync: that fsync would otherwise hold up, for the whole file's flush,
 * the journal's sync of an application registered meanwhile (ext4
 * commits the data of both in one transaction). */
typedef struct Writer {
        int fd;
        int error;
        bool stream_out;
        uint64_t written, streamed;
        size_t n;
        uint8_t buf[WRITER_BUFFER_BYTES];
} Writer;

static void writer_write(Writer *w, const void *p, size_t n) {
        if (w->error < 0)
                return;
        w->error = write_full(w->fd, p, n);
        w->written += n;
        if (w->stream_out && w->written - w->streamed >= WRITER_STREAM_BYTES) {
                /* start the writeback, do not wait for it; errors show at fsync */
                (void) sync_file_range(w->fd, (off64_t) w->streamed, (off64_t) (w->written - w->streamed),
                                       SYNC_FILE_RANGE_WRITE);
                w->streamed = w->written;
        }
}

static void writer_flush(Writer *w) {
        if (w->n > 0)
                writer_write(w, w->buf, w->n);
        w->n = 0;
}

static void writer_put(Writer *w, const void *p, size_t n) {
        if (w->n + n > sizeof(w->buf))
                writer_flush(w);
        if (n > sizeof(w->buf)) {
                writer_write(w, p, n);
                return;
        }
        memcpy(w->buf + w->n, p, n);
        w->n += n;
}

static void writer_put_varint(Writer *w, uint64_t v) {
        uint8_t b[10];
        size_t n = 0;

        do {
                b[n] = (uint8_t) (v & 0x7f);
                v >>= 7;
                if (v)
                        b[n] |= 0x80;
                n++;
        } while (v);
        writer_put(w, b, n);
}

/* Appends each live executor as one more MasterSnapshot.executors entry:
 * protobuf concatenates repeated fields, so the file decodes as one
 * message. */
static int write_executors(Master *m, Writer *w, size_t *ret_n) {
        uint8_t small[1024];
        usec_t now = now_mono_usec();
        size_t n = 0;

        for (App *a = cluster_apps(m->cluster); a; a = a->next)
                for (size_t k = 0; k < a->n_executors_allocated; k++) {
                        ClusterExecutor *e = a->executors[k];
                        Spark__ExecutorInfo info;
                        _cleanup_free_ uint8_t *big = NULL;
                        uint8_t *p = small;
                        size_t len;

                        if (!e || executor_state_is_terminal(e->state) || !e->worker)
                                continue;
                        executor_info_fill(e, &info, NULL, 0);
                        executor_marks_fill(e, &info, now);
                        len = spark__executor_info__get_packed_size(&info);
                        if (len > sizeof(small)) {
                                p = big = malloc(len);
                                if (!big)
                                        return -ENOMEM;
                        }
                        spark__executor_info__pack(&info, p);
                        writer_put_varint(w, SNAPSHOT_EXECUTOR_TAG);
                        writer_put_varint(w, len);
                        writer_put(w, p, len);
                        n++;
                }
        *ret_n = n;
        return 0;
}

static int state_path(Master *m, const char *name, char **ret) {
        return asprintf(ret, "%s/%s", m->config.master.state_dir, name) < 0 ? -ENOMEM : 0;
}

/* The whole snapshot into fd: the file, or the memory the ZooKeeper
 * backend sends (master-zk-state.c). */
static int state_write(Master *m, int fd, bool stream_out, size_t *ret_apps, size_t *ret_workers,
                       size_t *ret_executors) {
        _cleanup_(state_buffers_done) StateBuffers b = {};
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_free_ Writer *w = NULL;
        size_t len;
        int r;

        r = state_build(m, &b);
        if (r < 0)
                return r;
        len = spark__master_snapshot__get_packed_size(&b.snap);
        buf = malloc(len ? len : 1);
        w = malloc(sizeof(*w));
        if (!buf || !w)
                return -ENOMEM;
        spark__master_snapshot__pack(&b.snap, buf);
        *w = (Writer) { .fd = fd, .stream_out = stream_out };
        writer_put(w, buf, len);
        r = write_executors(m, w, ret_executors);
        writer_flush(w);
        *ret_apps = b.snap.n_apps;
        *ret_workers = b.snap.n_workers;
        return r < 0 ? r : w->error;
}

int master_state_pack(Master *m, uint8_t **ret, size_t *ret_len, size_t *ret_executors) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n_apps, n_workers;
        struct stat st;
        ssize_t k;
        int r;

        fd = memfd_create("spark-master-state", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = state_write(m, fd, false, &n_apps, &n_workers, ret_executors);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((uint64_t) st.st_size > STATE_MAX_BYTES)
                return -EFBIG;
        buf = malloc(st.st_size ? (size_t) st.st_size : 1);
        if (!buf)
                return -ENOMEM;
        k = pread(fd, buf, (size_t) st.st_size, 0);
        if (k < 0)
                return -errno;
        if (k != st.st_size)
                return -EIO;
        *ret_len = (size_t) k;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Writes the whole snapshot to state_dir/state.pb, atomically.  Touches
 * nothing of m and logs nothing, so that a child process can run it
 * (master-state-child.c): what failed goes into w->failed. */
int master_state_write_file(Master *m, StateWritten *w) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        _cleanup_close_ int fd = -1, dfd = -1;
        const char *dir = m->config.master.state_dir;
        usec_t start = now_mono_usec(), cpu = thread_cpu_usec();
        int r;

        *w = (StateWritten) {};
        if (state_path(m, STATE_FILE, &path) < 0 || asprintf(&tmp, "%s/." STATE_FILE ".tmp", dir) < 0)
                return w->error = error_buf_set(w->failed, sizeof(w->failed), -ENOMEM, "Out of memory");
        if (mkdir(dir, 0750) < 0 && errno != EEXIST)
                return w->error = error_buf_set(w->failed, sizeof(w->failed), -errno, "Failed to create %s", dir);
        /* 0600: it holds every application's executor key */
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return w->error = error_buf_set(w->failed, sizeof(w->failed), -errno, "Failed to create %s", tmp);
        if (fchmod(fd, 0600) < 0)  /* a leftover may have had another mode */
                return w->error = error_buf_set(w->failed, sizeof(w->failed), -errno, "Failed to make %s private", tmp);
        r = state_write(m, fd, true, &w->n_apps, &w->n_workers, &w->n_executors);
        /* the work that grows with the state, in CPU time: the syncs' wait
         * is the disk's, and a child at a low priority may wait long for a
         * busy core (100 times that wait put the next save seconds away) */
        w->cost = thread_cpu_usec() - cpu;
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return w->error = error_buf_set(w->failed, sizeof(w->failed), r, "Failed to write %s", tmp);
        }
        if (rename(tmp, path) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return w->error = error_buf_set(w->failed, sizeof(w->failed), r, "Failed to replace %s", path);
        }
        /* the rename itself must reach the disk */
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                (void) fsync(dfd);
        w->duration = now_mono_usec() - start;
        return 0;
}

/* A snapshot holding journal entries up to seq is on disk. */
static void state_written(Master *m, const StateWritten *w, uint64_t seq) {
        m->state_save_cost = w->cost;
        m->metrics.state_save_duration = w->duration;
        /* Any entry still in the journal (should the truncation not reach
         * the disk) is skipped by seq at load.  Entries appended while a
         * child wrote are not in its snapshot: they stay, for the next. */
        if (m->journal_fd >= 0 && m->journal_seq == seq && ftruncate(m->journal_fd, 0) < 0)
                log_warning_errno(errno, "Failed to empty the state journal, ignoring: %m");
        log_debug("Saved the state: %zu apps, %zu workers, %zu executors in %llu ms", w->n_apps, w->n_workers,
                  w->n_executors, (unsigned long long) (w->duration / USEC_PER_MSEC));
}

static int state_save(Master *m) {
        StateWritten w;
        int r;

        m->journal_unsynced = false; /* whatever it held is in the snapshot */
        if (m->ha)
                return master_zk_state_save(m);
        r = master_state_write_file(m, &w);
        if (r < 0)
                return log_error_errno(r, "%s: %m", w.failed);
        state_written(m, &w, m->journal_seq);
        return 0;
}

static void state_timer_arm(Master *m, usec_t delay) {
        (void) sd_event_source_set_time_relative(m->state_timer, delay);
        (void) sd_event_source_set_enabled(m->state_timer, SD_EVENT_ONESHOT);
}

usec_t master_state_save_delay(usec_t cost) {
        return MIN(MAX(STATE_SAVE_DELAY_USEC, cost * STATE_SAVE_SHARE), STATE_SAVE_DELAY_MAX_USEC);
}

static usec_t state_save_delay(const Master *m) {
        return master_state_save_delay(m->state_save_cost);
}

/* Marks the state changed since the last save began. */
static void state_mark_dirty(Master *m) {
        if (m->state_dirty)
                return;
        m->state_dirty = true;
        m->state_dirty_since = now_mono_usec();
}

/* 0 when a save that fell due may start now, else how long to wait first.
 * Every save stops the loop for a moment (fork() copies the page tables of
 * the whole master: 0.7 ms with 10,000 workers, 8–15 ms with 100,000
 * executors) and its writer takes a core: while requests keep coming (a
 * fleet registering, apps starting) the save waits for a gap between them,
 * and runs regardless some time after it fell due.  Both grow with the
 * pause: a gap of 5 ms in a burst of requests (a thousand apps submitted
 * at once, one every 1.5 ms) is no end of it, and the burst is not
 * stopped in its middle for 15 ms; under load that never pauses, forks
 * take at most about 0.1% of the loop.
 * What the snapshot does not hold yet the journal does (applications), or
 * the workers report again when they register with a restarted master. */
usec_t master_state_save_wait(usec_t now, usec_t last_request, usec_t due, usec_t fork_pause) {
        usec_t quiet = MIN(MAX(fork_pause * STATE_SAVE_QUIET_SHARE, STATE_SAVE_QUIET_MIN_USEC),
                           STATE_SAVE_QUIET_MAX_USEC);
        usec_t quiet_at = last_request + quiet;
        usec_t wait_max = MIN(MAX(fork_pause * STATE_SAVE_GAP_WAIT_SHARE, STATE_SAVE_GAP_WAIT_MIN_USEC),
                              STATE_SAVE_GAP_WAIT_MAX_USEC);
        usec_t deadline = due + wait_max;

        if (now >= deadline || now >= quiet_at)
                return 0;
        return MIN(quiet_at, deadline) - now;
}

static void state_save_failed(Master *m, int r) {
        usec_t delay;

        m->metrics.state_saves[0]++;

        /* Not on disk (a full disk, say): the state stays to be saved.
         * Again later, and later each time in a row; the status shows it
         * until a save succeeds. */
        state_mark_dirty(m);
        m->state_save_error = r;
        m->state_save_retry = MIN(MAX(m->state_save_retry * 2, STATE_SAVE_RETRY_MIN_USEC), STATE_SAVE_RETRY_MAX_USEC);
        delay = m->state_save_retry;
        if (m->state_timer) {
                log_warning("Saving the state again in %llu ms", (unsigned long long) (delay / USEC_PER_MSEC));
                state_timer_arm(m, delay);
        }
}

static void state_save_succeeded(Master *m) {
        m->metrics.state_saves[1]++;
        if (m->state_save_error < 0)
                log_info("Saved the state in %s again", m->config.master.state_dir);
        m->state_save_error = 0;
        m->state_save_retry = 0;
}

int master_state_save(Master *m) {
        bool unsynced = m->journal_unsynced;
        int r;

        /* a child still writing an older snapshot must not rename it over
         * this one */
        master_state_child_stop(m);
        m->state_dirty = false;
        r = state_save(m);
        if (r >= 0) {
                state_save_succeeded(m);
                return 0;
        }
        /* the journal entries it would have held stay to be synced */
        m->journal_unsynced = unsynced;
        state_save_failed(m, r);
        return r;
}

void master_state_child_done(Master *m, const StateWritten *w, uint64_t seq) {
        if (w->error < 0) {
                log_error_errno(w->error, "%s: %m", w->failed);
                state_save_failed(m, w->error);
                return;
        }
        state_save_succeeded(m);
        state_written(m, w, seq);
        /* changes made while it wrote: their save was put off (on_save_timer) */
        if (m->state_dirty && m->state_timer)
                state_timer_arm(m, state_save_delay(m));
}

void master_state_async_done(Master *m, int r) {
        if (r < 0) {
                state_save_failed(m, r);
                return;
        }
        state_save_succeeded(m);
        /* changes made while it wrote: their save was put off (on_save_timer) */
        if (m->state_dirty && m->state_timer)
                state_timer_arm(m, state_save_delay(m));
}

/* The timer's save in ZooKeeper, without the loop waiting for the
 * ensemble; one on the loop where that cannot be.  A journal entry still
 * to be created (or too large to be one) waits for a save on the loop,
 * which holds its application. */
static int state_save_zk_async(Master *m) {
        int r;

        if (m->zk_save)
                return 0;  /* its end saves again (master_state_async_done) */
        if (m->journal_unsynced)
                return master_state_save(m);
        m->state_dirty = false;
        r = master_zk_save_async_start(m);
        if (r >= 0)
                return 0;
        if (r == -ETIME || r == -ESTALE || r == -EROFS)
                return r;  /* no longer the leader */
        log_warning_errno(r, "Failed to start saving the state in ZooKeeper asynchronously, saving it here: %m");
        return master_state_save(m);
}

/* Whether the timer's save may go to a child.  The journal is emptied only
 * by a save that began after its last entry: past JOURNAL_FOREGROUND_BYTES
 * (apps registering all the time, each during a child's write), one save
 * on the loop empties it. */
static bool state_save_in_child(Master *m) {
        struct stat st;

        if (m->ha)
                return false;  /* ZooKeeper's client lives in this process */
        if (m->journal_fd >= 0 && fstat(m->journal_fd, &st) >= 0 && st.st_size > JOURNAL_FOREGROUND_BYTES)
                return false;
        return true;
}

static int on_save_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Master *m = userdata;
        usec_t wait;
        int r;
        (void) s, (void) usec;

        if (!m->state_dirty)
                return 0;
        wait = master_state_save_wait(now_mono_usec(), m->last_request, m->state_dirty_since + state_save_delay(m),
                                      m->state_fork_pause);
        if (wait > 0) {
                state_timer_arm(m, wait);
                return 0;
        }
        if (m->ha) {
                (void) state_save_zk_async(m);
                return 0;
        }
        if (m->state_child > 0)
                return 0;  /* its end saves again (master_state_child_done) */
        if (state_save_in_child(m)) {
                r = master_state_child_start(m);
                if (r >= 0)
                        return 0;
                log_warning_errno(r, "Failed to start a process to save the state, saving it here: %m");
        }
        (void) master_state_save(m);
        return 0;
}

void master_state_changed(Master *m) {
        if (m->state_dirty || !m->state_timer)
                return;
        state_mark_dirty(m);
        state_timer_arm(m, state_save_delay(m));
}

/* ---------------------------------------------------------------- journal */

static int journal_open(Master *m) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int dfd = -1;

        if (m->journal_fd >= 0)
                return 0;
        if (state_path(m, JOURNAL_FILE, &path) < 0)
                return -ENOMEM;
        if (mkdir(m->config.master.state_dir, 0750) < 0 && errno != EEXIST)
                return -errno;
        /* 0600, as the snapshot: its entries hold executor keys */
        m->journal_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (m->journal_fd < 0)
                return -errno;
        if (fchmod(m->journal_fd, 0600) < 0) {
                int r = -errno;
                close(m->journal_fd);
                m->journal_fd = -1;
                return r;
        }
        /* the file's name must be on disk before an entry counts on it */
        dfd = open(m->config.master.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                (void) fsync(dfd);
        return 0;
}

/* The next journal entry, seq journal_seq + 1: an app, or NULL (the
 * app-number counters only); packed after room bytes left free for a
 * header.  Both journals hold these bytes: apps.journal frames them,
 * ZooKeeper keeps each in a znode of its own (master-zk-state.c). */
int master_state_journal_entry(Master *m, App *a, size_t room, uint8_t **ret, size_t *ret_len, uint64_t *ret_seq) {
        _cleanup_(record_buffers_done) RecordBuffers rb = {};
        Spark__StateJournalEntry entry = SPARK__STATE_JOURNAL_ENTRY__INIT;
        uint8_t *buf;
        size_t len;
        int r;

        if (a) {
                r = record_buffers_alloc(&rb, 1, a->n_env);
                if (r < 0)
                        return r;
                r = record_fill(&rb, a, &entry.app);
                if (r < 0)
                        return r;
        }
        entry.seq = m->journal_seq + 1;
        entry.next_app_number = cluster_next_app_number(m->cluster);
        entry.app_numbers_reserved = m->app_numbers_reserved;
        entry.boot_id = (char *) boot_id();
        len = spark__state_journal_entry__get_packed_size(&entry);
        buf = malloc(room + len);
        if (!buf)
                return -ENOMEM;
        spark__state_journal_entry__pack(&entry, buf + room);
        *ret = buf;
        *ret_len = len;
        *ret_seq = entry.seq;
        return 0;
}

/* Appends one entry (an app, or NULL: the counters only); synced at once
 * if sync, else by journal_sync(). */
static int journal_append(Master *m, App *a, bool sync) {
        _cleanup_free_ uint8_t *buf = NULL;
        uint64_t seq;
        size_t len;
        int r;

        r = journal_open(m);
        if (r < 0)
                return r;
        r = master_state_journal_entry(m, a, RECORD_FRAME_HEADER, &buf, &len, &seq);
        if (r < 0)
                return r;
        record_frame_header(buf, buf + RECORD_FRAME_HEADER, len);
        /* one write: an entry is whole or torn at the end, never interleaved */
        r = write_full(m->journal_fd, buf, len + RECORD_FRAME_HEADER);
        if (r < 0)
                return r;
        m->journal_seq = seq;
        m->journal_unsynced = true;
        return sync ? master_state_sync(m) : 0;
}

int master_state_app_registered(Master *m, App *a) {
        int r = -EBADF;

        if (m->ha) {
                /* a znode, created by master_state_sync() */
                r = master_zk_journal_add(m, a);
                master_state_changed(m); /* into the snapshot, in a while */
                return r;
        }

        if (m->journal_fd >= 0)
                r = journal_append(m, a, false);
        m->journal_error = r < 0 ? r : 0;
        if (r < 0)
                log_warning_errno(r, "Failed to append application %s to the state journal, saving all: %m", a->id);
        else
                master_state_changed(m); /* into the snapshot, in a while */
        return r;
}

int master_state_sync(Master *m) {
        int r = m->journal_error;

        if (m->ha)
                return master_zk_journal_sync(m);

        m->journal_error = 0;
        if (r >= 0 && m->journal_unsynced) {
                m->journal_unsynced = false;
                if (fdatasync(m->journal_fd) >= 0)
                        return 0;
                r = -errno;
                log_warning_errno(r, "Failed to sync the state journal, saving all: %m");
        }
        return r < 0 ? master_state_save(m) : 0;
}

int master_state_reserve_app_number(Master *m) {
        unsigned next = cluster_next_app_number(m->cluster), before = m->app_numbers_reserved;
        int r;

        if (next < m->app_numbers_reserved) {
                /* Running low: the next block goes with this app's own
                 * entry, on disk before its answer — while the numbers
                 * before it are on disk already.  No sync of its own. */
                if (m->app_numbers_reserved - next < APP_NUMBER_BLOCK / 2)
                        m->app_numbers_reserved = next + APP_NUMBER_BLOCK;
                return 0;
        }
        /* none on disk: now */
        m->app_numbers_reserved = next + APP_NUMBER_BLOCK;
        if (m->ha) {
                /* a znode; a full save if it cannot be written */
                (void) master_zk_journal_add(m, NULL);
                r = master_zk_journal_sync(m);
                if (r >= 0)
                        return 0;
                goto fail;
        }
        if (m->journal_fd >= 0) {
                r = journal_append(m, NULL, true);
                if (r >= 0)
                        return 0;
                log_warning_errno(r, "Failed to reserve app numbers in the state journal, saving all: %m");
        }
        r = master_state_save(m);
        if (r >= 0)
                return 0;
fail:
        m->app_numbers_reserved = before;
        return r;
}

void master_state_done(Master *m) {
        if (m->ha)
                master_zk_save_async_stop(m);
        master_state_child_stop(m);
        master_journal_sync_done(m);
        free(m->zk_journal_entry);
        m->zk_journal_entry = NULL;
        if (m->journal_fd >= 0)
                close(m->journal_fd);
        m->journal_fd = -1;
}

static int restore_app(Master *m, const Spark__AppRecord *r, usec_t now, App **ret) {
        _cleanup_free_ char **env = NULL;
        _cleanup_free_ ClusterResourceAmount *wants = NULL;
        AppRegistration reg;
        int k;

        if (!r->info)
                return -EINVAL;
        k = cluster_amounts_from_wire(r->info->executor_resources, r->info->n_executor_resources, &wants);
        if (k < 0)
                return k == -ENOMEM ? k : -EINVAL;
        env = calloc(r->n_env + 1, sizeof(char *));
        if (!env)
                return -ENOMEM;
        for (size_t e = 0; e < r->n_env; e++)
                if (asprintf(&env[e], "%s=%s", r->env[e]->key, r->env[e]->value) < 0)
                        env[e] = NULL;
        reg = (AppRegistration) {
                .app_id = r->info->app_id, .name = r->info->name, .driver_url = r->info->driver_url,
                .driver_events = r->driver_events, .driver_channel_port = r->info->driver_channel_port,
                .max_cores = r->info->max_cores,
                .cores_per_executor = r->info->cores_per_executor,
                .executor_memory_mb = r->info->executor_memory_mb,
                .env = (const char *const *) env, .n_env = r->n_env,
                .executor_key = r->executor_key.data, .executor_key_len = r->executor_key.len,
                .weight = r->info->weight,
                .constraints = (const char *const *) r->info->constraints, .n_constraints = r->info->n_constraints,
                .wants = wants, .n_wants = r->info->n_executor_resources,
        };
        k = cluster_restore_app(m->cluster, &reg, r->info->state, r->next_executor_id, r->executor_limit,
                                r->retry_count, now, ret);
        if (k >= 0) {
                App *a = *ret;

                if (!isempty(r->info->submitted_by))
                        a->submitted_by = strdup(r->info->submitted_by);
                a->start_time_ms = r->info->start_time_ms;
                a->cpu_usage_ns = r->info->cpu_usage_ns;
                a->memory_peak_bytes = r->info->memory_peak_bytes;
                if (!isempty(r->info->ui_url))
                        a->ui_url = strdup(r->info->ui_url);  /* the driver's page until it registers again */
                a->dynamic_allocation = r->info->dynamic_allocation;
                cluster_restore_app_marks(m->cluster, a, r->starved_ms > 0 ? (usec_t) r->starved_ms * USEC_PER_MSEC : 0,
                                          r->regrow_left_ms > 0 ? (usec_t) r->regrow_left_ms * USEC_PER_MSEC : 0,
                                          now);
        }
        for (size_t e = 0; e < r->n_env; e++)
                free(env[e]);
        return k;
}

static int restore(Master *m, const Spark__MasterSnapshot *snap, usec_t now, size_t *ret_executors, bool *same_boot) {
        size_t restored = 0, n_released = 0, n_preempting = 0;

        cluster_restore_counters(m->cluster, (time_t) snap->start_time, snap->next_app_number);
        m->journal_seq = snap->journal_seq;
        m->app_numbers_reserved = snap->app_numbers_reserved;
        *same_boot = !isempty(snap->boot_id) && streq(snap->boot_id, boot_id());
        history_done(&m->history);
        for (size_t i = 0; i < snap->n_finished_apps; i++)
                if (history_add_app(&m->history, snap->finished_apps[i], (size_t) m->config.master.retained_apps) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < snap->n_lost_workers; i++)
                if (history_add_worker(&m->history, snap->lost_workers[i],
                                       (size_t) m->config.master.retained_workers) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < snap->n_workers; i++) {
                const Spark__WorkerInfo *wi = snap->workers[i];
                _cleanup_free_ ClusterResourceOffer *offers = NULL;
                WorkerRegistration reg = {
                        .id = wi->worker_id, .host = wi->host, .endpoint = wi->endpoint,
                        .events_endpoint = wi->events_endpoint, .cores = wi->cores, .memory_mb = wi->memory_mb,
                        .labels = (const char *const *) wi->labels, .n_labels = wi->n_labels,
                        .n_resources = wi->n_resources,
                };
                WorkerState state = wi->state == SPARK__WORKER_STATE__WORKER_DRAINING ||
                                                    wi->state == SPARK__WORKER_STATE__WORKER_DRAINED
                                            ? wi->state
                                            : SPARK__WORKER_STATE__WORKER_ALIVE;
                usec_t drain_left = wi->drain_timeout_ms > 0 ? (usec_t) wi->drain_timeout_ms * USEC_PER_MSEC : 0;

                if (cluster_offers_from_wire(wi->resources, wi->n_resources, &offers) < 0 ||
                    (reg.resources = offers, cluster_restore_worker(m->cluster, &reg, state, drain_left, now) < 0))
                        log_warning("State: skipping invalid worker record '%s'", strempty(wi->worker_id));
        }
        for (size_t i = 0; i < snap->n_apps; i++) {
                const Spark__AppRecord *r = snap->apps[i];
                App *a;
                int k;

                k = restore_app(m, r, now, &a);
                if (k == -ENOMEM)
                        return k;
                if (k < 0) {
                        log_warning("State: skipping invalid application record '%s'",
                                    r->info ? strempty(r->info->app_id) : "");
                        continue;
                }
                for (size_t e = 0; e < snap->n_executors; e++) {
                        const Spark__ExecutorInfo *x = snap->executors[e];
                        if (!streq(strempty(x->app_id), a->id))
                                continue;
                        if (cluster_restore_executor(m->cluster, a, x->executor_id, strempty(x->worker_id), x->cores,
                                                     x->memory_mb, x->state, now) < 0)
                                log_warning("State: skipping invalid executor record %s/%d", a->id, x->executor_id);
                        else {
                                ClusterExecutor *ce = cluster_executor(m->cluster, a->id, x->executor_id);
                                _cleanup_free_ ClusterResourceOffer *grants = NULL;

                                /* the addresses it holds stay its own */
                                if (x->n_resources > 0 &&
                                    (cluster_offers_from_wire(x->resources, x->n_resources, &grants) < 0 ||
                                     cluster_resource_restore(ce->worker, ce, grants, x->n_resources) < 0))
                                        log_warning("State: executor %s/%d: invalid resource record", a->id,
                                                    x->executor_id);
                                cluster_restore_executor_marks(m->cluster, ce, x->released, x->preempting,
                                                               x->preempt_left_ms > 0
                                                                       ? (usec_t) x->preempt_left_ms * USEC_PER_MSEC
                                                                       : 0,
                                                               x->preempt_killed, now);
                                restored++;
                                n_released += x->released;
                                n_preempting += x->preempting;
                        }
                }
        }
        if (n_released + n_preempting > 0)
                log_notice("Restored %zu executors being taken back for fair share and %zu released by their "
                           "drivers: their stops are not asked for again",
                           n_preempting, n_released);
        *ret_executors = restored;
        return 0;
}

/* One entry read back: its counters, and its application unless the
 * snapshot or an earlier entry has it; entries the snapshot holds (seq up
 * to its journal_seq) change nothing.  Returns 1 if it restored an
 * application, else 0.  Shared with the ZooKeeper backend. */
int master_state_journal_apply(Master *m, const Spark__StateJournalEntry *entry, usec_t now, bool *same_boot) {
        App *a;
        int r;

        if (entry->seq <= m->journal_seq)
                return 0;
        m->journal_seq = entry->seq;
        if (entry->next_app_number > cluster_next_app_number(m->cluster))
                cluster_restore_counters(m->cluster, cluster_start_time(m->cluster), entry->next_app_number);
        m->app_numbers_reserved = MAX(m->app_numbers_reserved, entry->app_numbers_reserved);
        *same_boot = !isempty(entry->boot_id) && streq(entry->boot_id, boot_id());
        if (!entry->app || !entry->app->info || cluster_app(m->cluster, entry->app->info->app_id))
                return 0;
        r = restore_app(m, entry->app, now, &a);
        if (r < 0) {
                log_warning_errno(r, "State journal: skipping application '%s': %m",
                                  strempty(entry->app->info->app_id));
                return 0;
        }
        return 1;
}

/* The applications registered after the snapshot; returns how many.
 * *same_boot: whether the last entry was written in this boot; *damaged:
 * whether some of the file could not be read. */
static int journal_replay(Master *m, usec_t now, bool *same_boot, bool *damaged) {
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ char *data = NULL;
        const uint8_t *buf;
        size_t len = 0, off = 0, unread = 0, first_damage = SIZE_MAX;
        int r, n = 0, n_entries = 0, n_damaged = 0;
        bool torn = false;

        if (state_path(m, JOURNAL_FILE, &path) < 0)
                return log_oom();
        r = read_full_file(path, 0, STATE_MAX_BYTES, &data, &len);
        buf = (uint8_t *) data;
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);

        while (off < len) {
                Spark__StateJournalEntry *entry;
                RecordFrame f;
                size_t next;

                record_frame_next(buf, len, off, &f);
                if (f.status != RECORD_FRAME_OK) {
                        /* Reading goes on only at an entry whose checksum
                         * proves it whole: nothing in between is guessed at. */
                        next = f.checked ? record_frame_resync(buf, len, off) : len;
                        if (f.status == RECORD_FRAME_TORN && next == len) {
                                torn = true; /* the append a crash interrupted, never answered */
                                break;
                        }
                        log_error("%s: the entry at offset %zu is damaged (%s); %zu bytes skipped, %s", path, off,
                                  f.status == RECORD_FRAME_TORN ? "its length runs past the end of the file"
                                                                : "its checksum does not match",
                                  next - off,
                                  next < len ? "reading on at the next whole entry" : "nothing after it is readable");
                        *damaged = true;
                        n_damaged++;
                        unread += next - off;
                        first_damage = MIN(first_damage, off);
                        off = next;
                        continue;
                }
                entry = spark__state_journal_entry__unpack(NULL, f.payload_len, f.payload);
                if (!entry) {
                        /* whole (its checksum held, or it has none) yet no entry */
                        log_error("%s: skipping the entry of %zu bytes at offset %zu: it does not decode", path,
                                  f.payload_len, off);
                        *damaged = true;
                        n_damaged++;
                        unread += f.next - off;
                        first_damage = MIN(first_damage, off);
                }
                off = f.next;
                if (!entry)
                        continue;
                n_entries++;
                n += master_state_journal_apply(m, entry, now, same_boot);
                spark__state_journal_entry__free_unpacked(entry, NULL);
        }
        if (torn) {
                log_warning("%s: ignoring its torn or incomplete last entry, %zu bytes at offset %zu "
                            "(an append a crash interrupted)", path, len - off, off);
                *damaged = true;
        }
        if (n_damaged > 0)
                /* what was restored, and what was not: no more */
                log_error("%s: restored %d applications from %d whole entries; %d damaged entries "
                          "(%zu bytes from offset %zu) could not be read: applications registered there are "
                          "not restored (their drivers register them again when they find the master does not "
                          "know them), and app numbers up to those reserved are skipped",
                          path, n, n_entries, n_damaged, unread, first_damage);
        if (n > 0)
                log_notice("Restored %d applications registered after the last snapshot from %s", n, path);
        return n;
}

int master_state_restore_packed(Master *m, const uint8_t *buf, size_t len, size_t *ret_apps, size_t *ret_executors) {
        Spark__MasterSnapshot *snap;
        bool same_boot;
        int r;

        snap = spark__master_snapshot__unpack(NULL, len, buf);
        if (!snap || snap->version != STATE_VERSION) {
                spark__master_snapshot__free_unpacked(snap, NULL);
                return -EBADMSG;
        }
        r = restore(m, snap, now_mono_usec(), ret_executors, &same_boot);
        *ret_apps = snap->n_apps;
        spark__master_snapshot__free_unpacked(snap, NULL);
        return r;
}

int master_state_load(Master *m) {
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ char *data = NULL;
        const uint8_t *buf;
        Spark__MasterSnapshot *snap;
        size_t len = 0, n_executors = 0, n_apps = 0;
        usec_t now = now_mono_usec();
        bool same_boot = false, damaged = false;
        int r, k, replayed;

        if (state_path(m, STATE_FILE, &path) < 0)
                return log_oom();
        if (!m->state_timer) {
                r = sd_event_add_time(m->event, &m->state_timer, CLOCK_MONOTONIC, 0, 1000, on_save_timer, m);
                if (r < 0)
                        return log_error_errno(r, "Failed to add the state timer: %m");
        }
        (void) sd_event_source_set_enabled(m->state_timer, SD_EVENT_OFF);
        if (m->ha)
                return master_zk_state_load(m);

        r = read_full_file(path, 0, STATE_MAX_BYTES, &data, &len);
        buf = (uint8_t *) data;
        if (r == -ENOENT)
                log_info("No saved state in %s: starting afresh", m->config.master.state_dir);
        else if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        else {
                snap = spark__master_snapshot__unpack(NULL, len, buf);
                if (!snap || snap->version != STATE_VERSION) {
                        /* Keep the file for a post-mortem; the workers' and
                         * drivers' re-registrations rebuild what they can. */
                        _cleanup_free_ char *bad = NULL;
                        if (asprintf(&bad, "%s.corrupt-%llu", path, (unsigned long long) time(NULL)) >= 0)
                                (void) rename(path, bad);
                        log_error("%s is %s; moved aside, starting afresh", path,
                                  snap ? "of an unknown version" : "corrupt");
                        spark__master_snapshot__free_unpacked(snap, NULL);
                        r = -ENOENT;
                } else {
                        r = restore(m, snap, now, &n_executors, &same_boot);
                        n_apps = snap->n_apps;
                        spark__master_snapshot__free_unpacked(snap, NULL);
                        if (r < 0)
                                return log_error_errno(r, "Failed to restore the state: %m");
                        log_notice("Restored %zu applications, %zu workers and %zu executors from %s", n_apps,
                                   hashmap_size(cluster_workers(m->cluster)), n_executors, path);
                }
        }

        /* Entries are replayed whatever became of the snapshot: an
         * application answered must not be lost. */
        replayed = journal_replay(m, now, &same_boot, &damaged);
        /* In another boot, numbers below the reserved ones may have gone out
         * unrecorded (written, not synced, when the host went down); so may
         * those of entries that could not be read. */
        if ((!same_boot || damaged) && cluster_next_app_number(m->cluster) < m->app_numbers_reserved)
                cluster_restore_counters(m->cluster, cluster_start_time(m->cluster), m->app_numbers_reserved);
        if (damaged) {
                /* what could be read goes into a snapshot first (the journal
                 * is not open: it stays as it is), then the file is kept for
                 * a post-mortem and a new one started */
                _cleanup_free_ char *jpath = NULL, *bad = NULL;

                k = master_state_save(m);
                if (k < 0)
                        return k;
                if (state_path(m, JOURNAL_FILE, &jpath) < 0 ||
                    asprintf(&bad, "%s.corrupt-%llu", jpath, (unsigned long long) time(NULL)) < 0)
                        return log_oom();
                if (rename(jpath, bad) < 0)
                        return log_error_errno(errno, "Failed to move %s aside: %m", jpath);
                log_warning("%s moved aside to %s", jpath, bad);
                r = 0;
                replayed = 0;
        }
        k = journal_open(m);
        if (k < 0)
                return log_error_errno(k, "Failed to open the state journal in %s: %m", m->config.master.state_dir);
        if (replayed > 0 || r == -ENOENT)
                /* a snapshot to start the journal from (and the first
                 * start's time stamp, which app ids keep) */
                return master_state_save(m);
        return 0;
}
