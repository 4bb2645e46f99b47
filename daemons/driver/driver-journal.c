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
 *
 * The application and the jobs are synced before anyone hears of them.
 * Results are appended to a buffer and written with one fdatasync() at the
 * end of the event loop's turn (a deferred source of the lowest priority),
 * or sooner when a client is about to see them: a result a client has seen
 * is on disk, so a restart never delivers another one in its place. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver-jobs.h"
#include "driver-journal.h"
#include "fileio.h"
#include "log.h"
#include "record-frame.h"
#include "sha256.h"

/* A buffer of appended entries larger than this is written out at once
 * (still synced at the end of the turn): bounded memory. */
#define JOURNAL_BUFFER_MAX (4u * 1024u * 1024u)
#define JOURNAL_LIBRARY_MAX (256u * 1024u * 1024u)

struct DriverJournal {
        int fd;
        int dir_fd;
        uint8_t *buf;
        size_t len, allocated;
        bool unsynced;               /* written or buffered, not yet synced */
        sd_event_source *commit;     /* the end of this turn */
        uint64_t n_entries, n_syncs;
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

int driver_journal_flush(Driver *d) {
        DriverJournal *j = d->journal;
        int r;

        if (!j || !j->unsynced)
                return 0;
        r = journal_write_out(j);
        if (r >= 0 && fdatasync(j->fd) < 0)
                r = -errno;
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/%s: %m", d->config.driver.state_dir,
                                       DRIVER_JOURNAL_FILE);
        j->unsynced = false;
        j->n_syncs++;
        return 0;
}

static int on_commit(sd_event_source *s, void *userdata) {
        (void) s;
        (void) driver_journal_flush(userdata);
        return 0;
}

/* Adds one entry (type, then the pieces) to the buffer. */
static int journal_append(Driver *d, uint8_t type, const void *a, size_t a_len, const void *b, size_t b_len) {
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
        j->n_entries++;
        j->unsynced = true;
        if (j->commit)
                (void) sd_event_source_set_enabled(j->commit, SD_EVENT_ONESHOT);
        return 0;
}

int driver_journal_app(Driver *d) {
        int r;

        if (!d->journal)
                return 0;
        r = journal_append(d, 'A', d->executor_key, sizeof(d->executor_key), d->app_id, strlen(d->app_id));
        if (r < 0)
                return log_error_errno(r, "Failed to journal application %s: %m", d->app_id);
        return driver_journal_flush(d);
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

int driver_journal_job(Driver *d, const char *job_id, const Spark__SubmitJob *sj, const char *library_hash) {
        Spark__SubmitJob copy;
        _cleanup_free_ uint8_t *packed = NULL, *head = NULL;
        size_t id_len = strlen(job_id), packed_len, head_len;
        bool has_lib = library_hash && sj->library.len > 0;
        int r;

        if (!d->journal)
                return 0;
        if (has_lib) {
                r = library_store(d, library_hash, &sj->library);
                if (r < 0)
                        return log_error_errno(r, "Failed to store the shared object of %s in %s: %m", job_id,
                                               d->config.driver.state_dir);
        }
        copy = *sj;
        copy.library = (ProtobufCBinaryData) {};  /* stored by hash */
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
        r = journal_append(d, 'J', head, head_len, packed, packed_len);
        if (r >= 0)
                r = driver_journal_flush(d);
        if (r < 0)
                return log_error_errno(r, "Failed to journal job %s: %m", job_id);
        return 0;
}

void driver_journal_result(Driver *d, const Spark__TaskResult *res) {
        Spark__TaskResult copy;
        uint8_t small[256];
        _cleanup_free_ uint8_t *big = NULL;
        uint8_t *p = small;
        size_t n;
        int r;

        if (!d->journal)
                return;
        /* what replay needs; the error and timing are not kept */
        copy = *res;
        copy.error = NULL;
        copy.run_us = 0;
        n = spark__task_result__get_packed_size(&copy);
        if (n > sizeof(small)) {
                p = big = malloc(n);
                if (!big) {
                        log_oom();
                        return;
                }
        }
        spark__task_result__pack(&copy, p);
        r = journal_append(d, 'R', p, n, NULL, 0);
        if (r < 0)
                log_struct_errno(LOG_ERR, r, LOG_FIELDS(.app_id = d->app_id, .job_id = res->job_id),
                                 "Failed to journal the result of task %s/%d: %m", res->job_id, res->index);
}

void driver_journal_job_ended(Driver *d, const char *job_id) {
        if (d->journal && journal_append(d, 'E', job_id, strlen(job_id), NULL, 0) < 0)
                log_struct(LOG_ERR, LOG_FIELDS(.app_id = d->app_id, .job_id = job_id),
                           "Failed to journal the end of job %s", job_id);
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

static int replay_entry(Driver *d, const uint8_t *p, size_t n, ReplayCounts *c) {
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
                return app_id_is_valid(d->app_id) ? 0 : -EBADMSG;
        case 'J':
                return replay_job(d, p + 1, n - 1, c);
        case 'R':
                res = spark__task_result__unpack(NULL, n - 1, p + 1);
                if (!res)
                        return -EBADMSG;
                r = driver_restore_result(d, res);
                spark__task_result__free_unpacked(res, NULL);
                if (r == -EALREADY) {
                        c->duplicates++;
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
                if (r >= 0)
                        c->ended++;
                return r;
        default:
                return -EBADMSG;
        }
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
                r = replay_entry(d, f.payload, f.payload_len, &c);
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
        d->journal = j;
        if (asprintf(&path, "%s/%s", d->config.driver.state_dir, DRIVER_JOURNAL_FILE) < 0)
                return log_oom();
        j->dir_fd = open(d->config.driver.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (j->dir_fd < 0)
                return log_error_errno(-errno, "Failed to open driver.state_dir %s: %m", d->config.driver.state_dir);
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
        (void) fsync(j->dir_fd);
}
