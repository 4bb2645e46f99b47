/* The driver's journal: state_dir/jobs.journal, a sequence of entries in
 * the master's framing (record-frame.h: a length and a CRC-32C per entry),
 * each a one-byte type and its body:
 *
 *   'A' key[32] app-id            the application, once registered
 *   'J' n id[n] h hash[64]? job   a job: its id, whether a shared object
 *                                 goes with it (stored as lib-HASH.so
 *                                 beside the journal) and its SubmitJob,
 *                                 without the object
 *   'R' result                    an accepted TaskResult
 *   'E' id                        a job that failed or was cancelled
 *   'N' number[4]                 the next job's number (little-endian),
 *                                 written by a compaction, so that ids of
 *                                 removed jobs are not given again
 *
 * The application is written and synced at once; a job is written before
 * anyone hears of it, by the flush before its submission is answered (with
 * the job's first results, when the submission waits for them) or before a
 * listing shows it.  Its tasks start before: a crash first loses a job
 * whose submission was never answered, and the client submits it again.
 * Results are appended to a buffer and written out at the end of the event
 * loop's turn (a deferred source of the lowest priority), or sooner when a
 * client is about to see them: a result a client has seen is in the file,
 * so a restart of the driver, however it ended, never delivers another one
 * in its place.  When the file reaches the disk is driver.journal_sync's:
 *   "background"    each write out asks file-syncer.h's thread for an
 *                   fdatasync() and the loop goes on; asks that come while
 *                   one runs, or within JOURNAL_SYNC_INTERVAL_USEC of its
 *                   start, share the next (group commit).  A crash of the
 *                   host can take the writes of the last few milliseconds.
 *   "before-reply"  the fdatasync() runs on the loop before the answer:
 *                   a host crash loses nothing a client has seen, and each
 *                   answer waits for the disk (docs/DESIGN.md §9).
 * A background sync that fails has the journal rewritten into a new file
 * (a compaction, synced before it replaces the old one), since a failed
 * fdatasync() may leave pages that never reach the disk.
 *
 * Compaction: the entries of a job the driver has removed (the oldest
 * ended ones beyond those it keeps), an application entry replaced by a
 * newer one and a duplicate result are dead bytes.  When they pass half the
 * file and JOURNAL_COMPACT_MIN, the live entries are copied to
 * jobs.journal.new, which is synced, renamed over jobs.journal, and the
 * directory synced.  A crash before the rename leaves the old journal
 * whole (the next start removes the .new file); after it, the new one. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver-jobs.h"
#include "driver-journal.h"
#include "file-syncer.h"
#include "fileio.h"
#include "log.h"
#include "record-frame.h"
#include "sha256.h"

/* journal_sync "background": at most one sync started per interval.  A
 * sync's own work (the file system writing back, the disk's interrupt)
 * took the CPU from the jobs it followed: one per one-task job made them
 * about 90 us slower over TLS here, one per 2 ms about 50 us.  A crash of
 * the host can take what was written in the last interval and sync. */
#define JOURNAL_SYNC_INTERVAL_USEC (2 * USEC_PER_MSEC)
/* A buffer of appended entries larger than this is written out at once
 * (still synced at the end of the turn): bounded memory. */
#define JOURNAL_BUFFER_MAX (4u * 1024u * 1024u)
#define JOURNAL_LIBRARY_MAX (256u * 1024u * 1024u)
#define JOURNAL_COMPACT_MIN (8u * 1024u * 1024u)
#define DRIVER_JOURNAL_NEW "jobs.journal.new"

struct DriverJournal {
        int fd;
        int dir_fd;
        uint8_t *buf;
        size_t len, allocated;
        bool unsynced;               /* written or buffered, no sync asked for yet */
        bool sync_on_loop;           /* journal_sync "before-reply" */
        bool rewrite;                /* a background sync failed: compact, whatever the dead bytes */
        FileSyncer *syncer;          /* journal_sync "background"; NULL until the first sync */
        sd_event_source *commit;     /* the end of this turn */
        uint64_t n_entries, n_syncs, n_compactions;
        uint64_t size;               /* bytes of entries, written or buffered */
        uint64_t dead;               /* of them, dead (see above) */
        uint64_t app_bytes;          /* the newest application entry's */
        uint64_t compact_min;        /* JOURNAL_COMPACT_MIN; tests lower it */
        bool removed;                /* driver_journal_remove(): never written again by a compaction */
};

bool driver_journal_enabled(const Driver *d) {
        return d->journal != NULL;
}

uint64_t driver_journal_n_entries(const Driver *d) {
        return d->journal ? d->journal->n_entries : 0;
}

uint64_t driver_journal_n_syncs(const Driver *d) {
        return d->journal ? d->journal->n_syncs : 0;
}

uint64_t driver_journal_n_compactions(const Driver *d) {
        return d->journal ? d->journal->n_compactions : 0;
}

void driver_journal_sizes(const Driver *d, uint64_t *ret_size, uint64_t *ret_dead) {
        *ret_size = d->journal ? d->journal->size : 0;
        *ret_dead = d->journal ? d->journal->dead : 0;
}

void driver_journal_set_compact_min(Driver *d, uint64_t bytes) {
        if (d->journal)
                d->journal->compact_min = bytes;
}

static bool compaction_due(const DriverJournal *j) {
        return !j->removed && (j->rewrite || (j->dead >= j->compact_min && j->dead * 2 >= j->size));
}

bool driver_journal_sync_pending(const Driver *d) {
        const DriverJournal *j = d->journal;

        return j && j->syncer && file_syncer_completed(j->syncer) < file_syncer_requested(j->syncer);
}

void driver_journal_forget(Driver *d, uint64_t bytes) {
        DriverJournal *j = d->journal;

        if (!j || bytes == 0)
                return;
        j->dead = MIN(j->dead + bytes, j->size);
        /* the end of this turn compacts (after a flush, which also takes
         * an unsynced job entry along: only then) */
        if (j->commit && compaction_due(j))
                (void) sd_event_source_set_enabled(j->commit, SD_EVENT_ONESHOT);
}

static int journal_write_out(DriverJournal *j) {
        int r;

        if (j->len == 0)
                return 0;
        r = write_full(j->fd, j->buf, j->len);
        if (r < 0)
                return r;
        j->len = 0;
        return 0;
}

static void on_synced(FileSyncer *s, uint64_t ticket, int error, void *userdata) {
        Driver *d = userdata;
        DriverJournal *j = d->journal;

        (void) s, (void) ticket;
        if (!j || error >= 0)
                return;
        log_struct_errno(LOG_ERR, error, LOG_FIELDS(.app_id = d->app_id),
                         "Failed to sync %s/%s: %m; rewriting it into a new file", d->config.driver.state_dir,
                         DRIVER_JOURNAL_FILE);
        j->rewrite = true;
        if (j->commit)
                (void) sd_event_source_set_enabled(j->commit, SD_EVENT_ONESHOT);
}

void driver_journal_sync_failed(Driver *d, int error) {
        on_synced(NULL, 0, error, d);
}

static int journal_syncer_new(Driver *d) {
        int r = file_syncer_new(d->event, on_synced, d, &d->journal->syncer);

        if (r >= 0)
                file_syncer_set_min_interval(d->journal->syncer, JOURNAL_SYNC_INTERVAL_USEC);
        return r;
}

/* Everything written before this call, on disk: on the loop, or asked of
 * the syncer thread. */
static int journal_sync(Driver *d, bool on_loop) {
        DriverJournal *j = d->journal;
        uint64_t ticket;

        if (!on_loop && (j->syncer || journal_syncer_new(d) >= 0) &&
            file_syncer_request(j->syncer, j->fd, &ticket) >= 0)
                return 0;
        /* asked to, or no thread to be had: the loop waits */
        return fdatasync(j->fd) < 0 ? -errno : 0;
}

/* Waits for the sync the thread is running (the file it syncs is about to
 * be replaced or closed); it reports through on_synced(). */
static void journal_sync_wait(Driver *d) {
        d->journal->syncer = file_syncer_free(d->journal->syncer);
}

static int journal_flush(Driver *d, bool sync_on_loop) {
        DriverJournal *j = d->journal;
        int r;

        if (!j || !j->unsynced)
                return 0;
        r = journal_write_out(j);
        if (r >= 0)
                r = journal_sync(d, sync_on_loop);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/%s: %m", d->config.driver.state_dir,
                                       DRIVER_JOURNAL_FILE);
        j->unsynced = false;
        j->n_syncs++;
        /* nothing left for the end of the turn but a compaction: an entry
         * appended later without a commit of its own (a job's) waits for
         * its flush */
        if (j->commit && !compaction_due(j))
                (void) sd_event_source_set_enabled(j->commit, SD_EVENT_OFF);
        return 0;
}

int driver_journal_flush(Driver *d) {
        return journal_flush(d, d->journal && d->journal->sync_on_loop);
}

static int on_commit(sd_event_source *s, void *userdata) {
        Driver *d = userdata;

        (void) s;
        if (driver_journal_flush(d) >= 0 && compaction_due(d->journal))
                (void) driver_journal_compact(d);
        return 0;
}

/* Adds one entry (type, then the pieces) to the buffer.  commit: synced at
 * the end of this turn of the loop; else by the next flush, whoever calls
 * it. */
static int journal_append(Driver *d, uint8_t type, const void *a, size_t a_len, const void *b, size_t b_len,
                          bool commit) {
        DriverJournal *j = d->journal;
        size_t payload = 1 + a_len + b_len, need = RECORD_FRAME_HEADER + payload;
        uint8_t *p;
        int r;

        if (payload > RECORD_FRAME_MAX)
                return -E2BIG;
        if (j->len + need > JOURNAL_BUFFER_MAX && j->len > 0) {
                r = journal_write_out(j);
                if (r < 0)
                        return r;
        }
        if (j->allocated < j->len + need) {
                size_t n = MAX(j->len + need, MIN(2 * j->allocated, (size_t) JOURNAL_BUFFER_MAX));
                uint8_t *nb = realloc(j->buf, n);
                if (!nb)
                        return -ENOMEM;
                j->buf = nb;
                j->allocated = n;
        }
        p = j->buf + j->len + RECORD_FRAME_HEADER;
        p[0] = type;
        if (a_len)
                memcpy(p + 1, a, a_len);
        if (b_len)
                memcpy(p + 1 + a_len, b, b_len);
        record_frame_header(j->buf + j->len, p, payload);
        j->len += need;
        j->size += need;
        j->n_entries++;
        j->unsynced = true;
        if (commit && j->commit)
                (void) sd_event_source_set_enabled(j->commit, SD_EVENT_ONESHOT);
        return (int) MIN(need, (size_t) INT_MAX);
}

int driver_journal_app(Driver *d) {
        int r;

        if (!d->journal)
                return 0;
        r = journal_append(d, 'A', d->executor_key, sizeof(d->executor_key), d->app_id, strlen(d->app_id), true);
        if (r < 0)
                return log_error_errno(r, "Failed to journal application %s: %m", d->app_id);
        /* the newest one counts: an older one is dead */
        driver_journal_forget(d, d->journal->app_bytes);
        d->journal->app_bytes = (uint64_t) r;
        /* once per application: its id and key are on disk before any job
         * is journaled under them */
        return journal_flush(d, true);
}

static int library_store(Driver *d, const char *hash, const ProtobufCBinaryData *lib) {
        DriverJournal *j = d->journal;
        char name[SHA256_HEX_SIZE + 16], tmp[SHA256_HEX_SIZE + 24];
        _cleanup_close_ int fd = -1;
        int r;

        snprintf(name, sizeof(name), "lib-%s.so", hash);
        if (faccessat(j->dir_fd, name, F_OK, 0) == 0)
                return 0;  /* the same object, stored for an earlier job */
        snprintf(tmp, sizeof(tmp), "%s.tmp", name);
        fd = openat(j->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = write_full(fd, lib->data, lib->len);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && renameat(j->dir_fd, tmp, j->dir_fd, name) < 0)
                r = -errno;
        if (r >= 0 && fsync(j->dir_fd) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(j->dir_fd, tmp, 0);
        return r;
}

int driver_journal_job(Driver *d, const char *job_id, const Spark__SubmitJob *sj, const char *library_hash,
                       const ProtobufCBinaryData *library) {
        Spark__SubmitJob copy;
        _cleanup_free_ uint8_t *packed = NULL, *head = NULL;
        size_t id_len = strlen(job_id), packed_len, head_len;
        bool has_lib = library_hash && library && library->len > 0;
        int r;

        if (!d->journal)
                return 0;
        if (has_lib) {
                r = library_store(d, library_hash, library);
                if (r < 0)
                        return log_error_errno(r, "Failed to store the shared object of %s in %s: %m", job_id,
                                               d->config.driver.state_dir);
        }
        copy = *sj;
        copy.library = (ProtobufCBinaryData) {};  /* stored by hash */
        copy.library_hash = NULL;
        copy.wait_ms = 0;
        packed_len = spark__submit_job__get_packed_size(&copy);
        packed = malloc(packed_len + 1);
        head_len = 1 + id_len + 1 + (has_lib ? SHA256_HEX_SIZE - 1 : 0);
        head = malloc(head_len);
        if (!packed || !head || id_len > 255)
                return -ENOMEM;
        spark__submit_job__pack(&copy, packed);
        head[0] = (uint8_t) id_len;
        memcpy(head + 1, job_id, id_len);
        head[1 + id_len] = has_lib;
        if (has_lib)
                memcpy(head + 2 + id_len, library_hash, SHA256_HEX_SIZE - 1);
        r = journal_append(d, 'J', head, head_len, packed, packed_len, false);
        if (r < 0)
                return log_error_errno(r, "Failed to journal job %s: %m", job_id);
        return r;
}

uint64_t driver_journal_result(Driver *d, const Spark__TaskResult *res) {
        Spark__TaskResult copy;
        uint8_t small[256];
        _cleanup_free_ uint8_t *big = NULL;
        uint8_t *p = small;
        size_t n;
        int r;

        if (!d->journal)
                return 0;
        /* what replay needs; the error and timing are not kept */
        copy = *res;
        copy.error = NULL;
        copy.run_us = 0;
        n = spark__task_result__get_packed_size(&copy);
        if (n > sizeof(small)) {
                p = big = malloc(n);
                if (!big) {
                        log_oom();
                        return 0;
                }
        }
        spark__task_result__pack(&copy, p);
        r = journal_append(d, 'R', p, n, NULL, 0, true);
        if (r < 0) {
                log_struct_errno(LOG_ERR, r, LOG_FIELDS(.app_id = d->app_id, .job_id = res->job_id),
                                 "Failed to journal the result of task %s/%d: %m", res->job_id, res->index);
                return 0;
        }
        return (uint64_t) r;
}

uint64_t driver_journal_job_ended(Driver *d, const char *job_id) {
        int r;

        if (!d->journal)
                return 0;
        r = journal_append(d, 'E', job_id, strlen(job_id), NULL, 0, true);
        if (r < 0) {
                log_struct(LOG_ERR, LOG_FIELDS(.app_id = d->app_id, .job_id = job_id),
                           "Failed to journal the end of job %s", job_id);
                return 0;
        }
        return (uint64_t) r;
}

/* ---------------------------------------------------------------- replay */

typedef struct ReplayCounts {
        size_t jobs, results, ended, duplicates;
} ReplayCounts;

static int library_load(DriverJournal *j, const char *hash, ProtobufCBinaryData *ret) {
        char path[SHA256_HEX_SIZE + 32];
        _cleanup_close_ int fd = -1;
        struct stat st;
        uint8_t *data;
        size_t got = 0;

        if (!sha256_hex_is_valid(hash))
                return -EBADMSG;
        snprintf(path, sizeof(path), "lib-%s.so", hash);
        fd = openat(j->dir_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0 || (uint64_t) st.st_size > JOURNAL_LIBRARY_MAX)
                return -EBADMSG;
        data = malloc((size_t) st.st_size);
        if (!data)
                return -ENOMEM;
        while (got < (size_t) st.st_size) {
                ssize_t k = read(fd, data + got, (size_t) st.st_size - got);
                if (k <= 0) {
                        free(data);
                        return k < 0 ? -errno : -EBADMSG;
                }
                got += (size_t) k;
        }
        *ret = (ProtobufCBinaryData) { .len = got, .data = data };
        return 0;
}

static int replay_job(Driver *d, const uint8_t *p, size_t n, ReplayCounts *c) {
        char id[256], hash[SHA256_HEX_SIZE];
        Spark__SubmitJob *sj;
        size_t id_len, off;
        bool has_lib;
        int r;

        if (n < 2 || (id_len = p[0]) == 0 || n < 2 + id_len)
                return -EBADMSG;
        memcpy(id, p + 1, id_len);
        id[id_len] = 0;
        has_lib = p[1 + id_len];
        off = 2 + id_len;
        if (has_lib) {
                if (n < off + SHA256_HEX_SIZE - 1)
                        return -EBADMSG;
                memcpy(hash, p + off, SHA256_HEX_SIZE - 1);
                hash[SHA256_HEX_SIZE - 1] = 0;
                off += SHA256_HEX_SIZE - 1;
        }
        sj = spark__submit_job__unpack(NULL, n - off, p + off);
        if (!sj)
                return -EBADMSG;
        if (has_lib) {
                r = library_load(d->journal, hash, &sj->library);
                if (r < 0) {
                        spark__submit_job__free_unpacked(sj, NULL);
                        return log_error_errno(r, "Failed to read the shared object %s of job %s: %m", hash, id);
                }
        }
        r = driver_restore_job(d, id, sj);
        if (has_lib) {
                free(sj->library.data);
                sj->library = (ProtobufCBinaryData) {};
        }
        spark__submit_job__free_unpacked(sj, NULL);
        if (r >= 0)
                c->jobs++;
        return r;
}

/* The job id of a 'J' entry's body (n > 0). */
static bool job_entry_id(const uint8_t *p, size_t n, char id[static 256]) {
        size_t id_len = p[0];

        if (id_len == 0 || n < 2 + id_len)
                return false;
        memcpy(id, p + 1, id_len);
        id[id_len] = 0;
        return true;
}

/* entry: the whole entry's size, which counts toward its job (or is dead). */
static int replay_entry(Driver *d, const uint8_t *p, size_t n, uint64_t entry, ReplayCounts *c) {
        DriverJournal *j = d->journal;
        Spark__TaskResult *res;
        char id[256];
        int r;

        if (n < 1)
                return -EBADMSG;
        switch (p[0]) {
        case 'A':
                if (n < 2 + EXECUTOR_KEY_SIZE || n - 1 - EXECUTOR_KEY_SIZE >= sizeof(d->app_id))
                        return -EBADMSG;
                memcpy(d->executor_key, p + 1, EXECUTOR_KEY_SIZE);
                memcpy(d->app_id, p + 1 + EXECUTOR_KEY_SIZE, n - 1 - EXECUTOR_KEY_SIZE);
                d->app_id[n - 1 - EXECUTOR_KEY_SIZE] = 0;
                if (!app_id_is_valid(d->app_id))
                        return -EBADMSG;
                j->dead += j->app_bytes;
                j->app_bytes = entry;
                return 0;
        case 'J':
                r = replay_job(d, p + 1, n - 1, c);
                if (r >= 0 && job_entry_id(p + 1, n - 1, id))
                        driver_job_journaled(d, id, entry);
                return r;
        case 'R':
                res = spark__task_result__unpack(NULL, n - 1, p + 1);
                if (!res)
                        return -EBADMSG;
                r = driver_restore_result(d, res);
                if (r >= 0)
                        driver_job_journaled(d, res->job_id, entry);
                spark__task_result__free_unpacked(res, NULL);
                if (r == -EALREADY) {
                        c->duplicates++;
                        j->dead += entry;
                        return 0;
                }
                if (r >= 0)
                        c->results++;
                return r;
        case 'E':
                if (n - 1 >= sizeof(id))
                        return -EBADMSG;
                memcpy(id, p + 1, n - 1);
                id[n - 1] = 0;
                r = driver_restore_job_end(d, id);
                if (r >= 0) {
                        c->ended++;
                        driver_job_journaled(d, id, entry);
                }
                return r;
        case 'N':
                if (n != 5)
                        return -EBADMSG;
                d->next_job_number = MAX(d->next_job_number, (unsigned) p[1] | (unsigned) p[2] << 8 |
                                                                     (unsigned) p[3] << 16 | (unsigned) p[4] << 24);
                return 0;
        default:
                return -EBADMSG;
        }
}

/* ------------------------------------------------------------ compaction */

/* Whether an entry belongs to a job still in the table.  The application's
 * entry is written afresh, so the old ones are not copied. */
static bool entry_is_live(Driver *d, const uint8_t *p, size_t n) {
        Spark__TaskResult *res;
        char id[256];
        bool live;

        if (n < 1)
                return false;
        switch (p[0]) {
        case 'J':
                return job_entry_id(p + 1, n - 1, id) && hashmap_get(d->jobs, id);
        case 'R':
                res = spark__task_result__unpack(NULL, n - 1, p + 1);
                live = res && !isempty(res->job_id) && hashmap_get(d->jobs, res->job_id);
                if (res)
                        spark__task_result__free_unpacked(res, NULL);
                return live;
        case 'E':
                if (n - 1 >= sizeof(id))
                        return false;
                memcpy(id, p + 1, n - 1);
                id[n - 1] = 0;
                return hashmap_get(d->jobs, id);
        default:
                return false;
        }
}

typedef struct CompactOut {
        int fd;
        uint8_t *buf;
        size_t len;
        uint64_t total;
} CompactOut;

static int compact_put(CompactOut *o, const void *p, size_t n) {
        int r;

        if (o->len + n > JOURNAL_BUFFER_MAX && o->len > 0) {
                r = write_full(o->fd, o->buf, o->len);
                if (r < 0)
                        return r;
                o->len = 0;
        }
        if (n > JOURNAL_BUFFER_MAX)
                r = write_full(o->fd, p, n);
        else {
                memcpy(o->buf + o->len, p, n);
                o->len += n;
                r = 0;
        }
        o->total += n;
        return r;
}

/* The shared objects of jobs no longer in the table go too. */
static void remove_unused_libraries(Driver *d) {
        DriverJournal *j = d->journal;
        _cleanup_close_ int fd = dup(j->dir_fd);
        DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!dir)
                return;
        fd = -1;
        while ((de = readdir(dir))) {
                char hash[SHA256_HEX_SIZE];
                size_t n = strlen(de->d_name);

                if (strncmp(de->d_name, "lib-", 4) != 0 || n != 4 + SHA256_HEX_SIZE - 1 + 3 ||
                    !streq(de->d_name + n - 3, ".so"))
                        continue;
                memcpy(hash, de->d_name + 4, SHA256_HEX_SIZE - 1);
                hash[SHA256_HEX_SIZE - 1] = 0;
                if (!hashmap_get(d->libraries, hash))
                        (void) unlinkat(j->dir_fd, de->d_name, 0);
        }
        closedir(dir);
}

int driver_journal_compact_steps(Driver *d, bool stop_before_rename) {
        DriverJournal *j = d->journal;
        CompactOut o = { .fd = -1 };
        uint8_t *map = MAP_FAILED;
        uint64_t before;
        struct stat st;
        size_t len = 0, off = 0;
        int r;

        if (!j || j->removed)
                return 0;
        r = driver_journal_flush(d);
        if (r < 0)
                return r;
        journal_sync_wait(d);
        if (fstat(j->fd, &st) < 0)
                return log_error_errno(-errno, "Failed to compact %s/%s: %m", d->config.driver.state_dir,
                                       DRIVER_JOURNAL_FILE);
        before = (uint64_t) st.st_size;
        len = (size_t) st.st_size;
        o.buf = malloc(JOURNAL_BUFFER_MAX);
        if (!o.buf)
                return log_oom();
        if (len > 0) {
                map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, j->fd, 0);
                if (map == MAP_FAILED) {
                        r = -errno;
                        goto finish;
                }
        }
        o.fd = openat(j->dir_fd, DRIVER_JOURNAL_NEW, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (o.fd < 0) {
                r = -errno;
                goto finish;
        }
        if (!isempty(d->app_id)) {
                size_t app_len = strlen(d->app_id), payload = 1 + EXECUTOR_KEY_SIZE + app_len;
                uint8_t entry[RECORD_FRAME_HEADER + 1 + EXECUTOR_KEY_SIZE + sizeof(d->app_id)];

                entry[RECORD_FRAME_HEADER] = 'A';
                memcpy(entry + RECORD_FRAME_HEADER + 1, d->executor_key, EXECUTOR_KEY_SIZE);
                memcpy(entry + RECORD_FRAME_HEADER + 1 + EXECUTOR_KEY_SIZE, d->app_id, app_len);
                record_frame_header(entry, entry + RECORD_FRAME_HEADER, payload);
                r = compact_put(&o, entry, RECORD_FRAME_HEADER + payload);
                if (r < 0)
                        goto finish;
                j->app_bytes = RECORD_FRAME_HEADER + payload;
        }
        {
                uint8_t entry[RECORD_FRAME_HEADER + 5];
                unsigned next = d->next_job_number;

                entry[RECORD_FRAME_HEADER] = 'N';
                for (int i = 0; i < 4; i++)
                        entry[RECORD_FRAME_HEADER + 1 + i] = (uint8_t) (next >> (8 * i));
                record_frame_header(entry, entry + RECORD_FRAME_HEADER, 5);
                r = compact_put(&o, entry, sizeof(entry));
                if (r < 0)
                        goto finish;
        }
        while (off < len) {
                RecordFrame f;

                record_frame_next(map, len, off, &f);
                if (f.status != RECORD_FRAME_OK) {
                        /* the replay left only whole entries: this is new damage */
                        r = -EBADMSG;
                        goto finish;
                }
                if (entry_is_live(d, f.payload, f.payload_len)) {
                        r = compact_put(&o, map + off, f.next - off);
                        if (r < 0)
                                goto finish;
                }
                off = f.next;
        }
        r = o.len > 0 ? write_full(o.fd, o.buf, o.len) : 0;
        if (r >= 0 && fsync(o.fd) < 0)
                r = -errno;
        if (r < 0 || stop_before_rename)
                goto finish;
        /* the step that makes the new journal the journal */
        if (renameat(j->dir_fd, DRIVER_JOURNAL_NEW, j->dir_fd, DRIVER_JOURNAL_FILE) < 0) {
                r = -errno;
                goto finish;
        }
        if (fsync(j->dir_fd) < 0)
                log_warning_errno(-errno, "Failed to sync driver.state_dir %s after compacting its journal: %m",
                                  d->config.driver.state_dir);
        j->rewrite = false;
        close(j->fd);
        j->fd = o.fd;  /* where the appends go on: its end */
        o.fd = -1;
        j->size = o.total;
        j->dead = 0;
        j->n_compactions++;
        remove_unused_libraries(d);
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id),
                   "Compacted %s/%s: %" PRIu64 " bytes of entries of removed jobs dropped, %" PRIu64 " kept",
                   d->config.driver.state_dir, DRIVER_JOURNAL_FILE, before - MIN(before, o.total), o.total);
finish:
        if (map != MAP_FAILED)
                (void) munmap(map, len);
        if (o.fd >= 0) {
                close(o.fd);
                if (!stop_before_rename || r < 0)
                        (void) unlinkat(j->dir_fd, DRIVER_JOURNAL_NEW, 0);
        }
        free(o.buf);
        if (r < 0) {
                /* the old journal stays as it was; try again when more is dead */
                j->dead = 0;
                return log_error_errno(r, "Failed to compact %s/%s (it is kept as it was): %m",
                                       d->config.driver.state_dir, DRIVER_JOURNAL_FILE);
        }
        return 0;
}

int driver_journal_compact(Driver *d) {
        return driver_journal_compact_steps(d, false);
}

/* Copies the damaged journal aside, for whoever looks into it. */
static void keep_damaged(DriverJournal *j, const uint8_t *buf, size_t len) {
        _cleanup_close_ int fd = openat(j->dir_fd, DRIVER_JOURNAL_DAMAGED, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                                        0600);

        if (fd < 0 || write_full(fd, buf, len) < 0 || fsync(fd) < 0)
                log_warning_errno(errno > 0 ? -errno : -EIO, "Failed to keep the damaged journal aside as %s: %m",
                                  DRIVER_JOURNAL_DAMAGED);
}

static int journal_replay(Driver *d, const char *path) {
        DriverJournal *j = d->journal;
        ReplayCounts c = {};
        struct stat st;
        uint8_t *buf;
        size_t len, off = 0, good = 0;
        bool damaged = false;
        int r = 0;

        if (fstat(j->fd, &st) < 0)
                return -errno;
        if (st.st_size == 0)
                return 0;
        len = (size_t) st.st_size;
        /* mapped, not read: a journal of many results is not all in memory */
        buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, j->fd, 0);
        if (buf == MAP_FAILED)
                return -errno;
        while (off < len) {
                RecordFrame f;

                record_frame_next(buf, len, off, &f);
                if (f.status == RECORD_FRAME_TORN) {
                        log_warning("%s: the last entry, at offset %zu, was cut short (a crash while it was "
                                    "written); dropping it",
                                    path, off);
                        break;
                }
                if (f.status == RECORD_FRAME_CORRUPT) {
                        log_error("%s: the entry at offset %zu is damaged (its checksum or length is wrong); "
                                  "keeping the file aside as %s and going on with what comes before it",
                                  path, off, DRIVER_JOURNAL_DAMAGED);
                        damaged = true;
                        break;
                }
                r = replay_entry(d, f.payload, f.payload_len, f.next - off, &c);
                if (r < 0) {
                        log_error_errno(r, "%s: the entry at offset %zu (type '%c') cannot be applied: %m; keeping "
                                           "the file aside as %s and going on with what comes before it",
                                        path, off, f.payload_len > 0 && f.payload[0] >= 0x20 && f.payload[0] < 0x7f
                                                           ? f.payload[0] : '?',
                                        DRIVER_JOURNAL_DAMAGED);
                        damaged = true;
                        r = 0;
                        break;
                }
                off = f.next;
                good = off;
        }
        if (damaged)
                keep_damaged(j, buf, len);
        (void) munmap(buf, len);
        /* appends go after the last good entry */
        if (good < len && ftruncate(j->fd, (off_t) good) < 0)
                return -errno;
        if (lseek(j->fd, (off_t) good, SEEK_SET) < 0)
                return -errno;
        j->size = good;
        j->dead = MIN(j->dead, j->size);
        log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id),
                   "Restored from %s: application %s, %zu jobs (%zu ended early), %zu results%s%s", path,
                   isempty(d->app_id) ? "(not registered yet)" : d->app_id, c.jobs, c.ended, c.results,
                   c.duplicates ? ", duplicates dropped" : "", damaged ? "; the rest was damaged" : "");
        return r;
}

int driver_journal_open(Driver *d) {
        _cleanup_free_ char *path = NULL;
        DriverJournal *j;
        int r;

        if (isempty(d->config.driver.state_dir))
                return 0;
        if (mkdir(d->config.driver.state_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(-errno, "Failed to create driver.state_dir %s: %m",
                                       d->config.driver.state_dir);
        j = calloc(1, sizeof(*j));
        if (!j)
                return log_oom();
        j->fd = j->dir_fd = -1;
        j->compact_min = JOURNAL_COMPACT_MIN;
        j->sync_on_loop = streq_ptr(d->config.driver.journal_sync, "before-reply");
        d->journal = j;
        if (asprintf(&path, "%s/%s", d->config.driver.state_dir, DRIVER_JOURNAL_FILE) < 0)
                return log_oom();
        j->dir_fd = open(d->config.driver.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (j->dir_fd < 0)
                return log_error_errno(-errno, "Failed to open driver.state_dir %s: %m", d->config.driver.state_dir);
        /* Two drivers on one journal would each take the other's jobs for
         * their own (a driver-NAME.conf copied from driver.conf keeps its
         * state_dir): the lock goes with this process, however it ends. */
        if (flock(j->dir_fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EWOULDBLOCK)
                        return log_error_errno(-EBUSY,
                                               "driver.state_dir %s is in use by another driver: give each "
                                               "driver a state_dir of its own",
                                               d->config.driver.state_dir);
                return log_error_errno(-errno, "Failed to lock driver.state_dir %s: %m", d->config.driver.state_dir);
        }
        /* a compaction that a crash cut short: the old journal is whole */
        if (unlinkat(j->dir_fd, DRIVER_JOURNAL_NEW, 0) >= 0)
                log_notice("Removed %s/%s, left by a compaction that did not finish; %s is whole",
                           d->config.driver.state_dir, DRIVER_JOURNAL_NEW, DRIVER_JOURNAL_FILE);
        j->fd = openat(j->dir_fd, DRIVER_JOURNAL_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (j->fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", path);
        r = journal_replay(d, path);
        if (r < 0)
                return log_error_errno(r, "Failed to replay %s: %m", path);
        r = sd_event_add_defer(d->event, &j->commit, on_commit, d);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the journal's commits: %m");
        /* after everything else of the turn: the batch is as large as it gets */
        (void) sd_event_source_set_priority(j->commit, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_enabled(j->commit, SD_EVENT_OFF);
        return 0;
}

void driver_journal_close(Driver *d) {
        DriverJournal *j = d->journal;

        if (!j)
                return;
        (void) driver_journal_flush(d);
        /* a stopped driver's journal is on disk */
        journal_sync_wait(d);
        sd_event_source_disable_unref(j->commit);
        if (j->fd >= 0)
                close(j->fd);
        if (j->dir_fd >= 0)
                close(j->dir_fd);
        free(j->buf);
        free(j);
        d->journal = NULL;
}

void driver_journal_remove(Driver *d) {
        DriverJournal *j = d->journal;

        if (!j)
                return;
        if (unlinkat(j->dir_fd, DRIVER_JOURNAL_FILE, 0) < 0 && errno != ENOENT)
                log_warning_errno(-errno, "Failed to remove %s/%s: %m", d->config.driver.state_dir,
                                  DRIVER_JOURNAL_FILE);
        else
                log_struct(LOG_INFO, LOG_FIELDS(.app_id = d->app_id),
                           "Application %s ended for good: its journal in %s is removed", d->app_id,
                           d->config.driver.state_dir);
        /* the shared objects went with the jobs */
        {
                _cleanup_close_ int fd = dup(j->dir_fd);
                DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
                struct dirent *de;

                if (dir) {
                        fd = -1;
                        while ((de = readdir(dir)))
                                if (strncmp(de->d_name, "lib-", 4) == 0)
                                        (void) unlinkat(j->dir_fd, de->d_name, 0);
                        closedir(dir);
                }
        }
        j->len = 0;
        j->unsynced = false;
        j->removed = true;
        (void) fsync(j->dir_fd);
}
