/* The highest leader epoch this worker has accepted outlives the worker:
 * it is kept in work_dir/worker-PORT.epoch (next to the worker id), so that
 * a worker restarted while a deposed leader still sends (a leader cut off
 * from ZooKeeper but not from us) refuses that leader's commands as before
 * the restart (fencing, docs/ha.md). */
#include <inttypes.h>

#include "epoch-file.h"
#include "log.h"
#include "worker.h"

int worker_load_master_epoch(WorkerManager *w, const char *path) {
        uint64_t epoch = 0;
        int r;

        free(w->epoch_path);
        w->epoch_path = strdup(path);
        if (!w->epoch_path)
                return log_oom();
        r = epoch_file_load(path, &epoch);
        if (r == -ENOENT)
                return 0;  /* no leader seen yet, or filesystem mode */
        if (r == -EBADMSG) {
                /* Written atomically, so never torn: someone else wrote it.
                 * Starting with no epoch would obey any deposed leader. */
                log_error("%s is not a leader epoch file (expected one line \"spark-epoch N\"); "
                          "remove it if this worker's masters were all replaced",
                          path);
                return -EINVAL;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to read the leader epoch in %s: %m", path);
        w->master_epoch = epoch;
        log_info("Refusing commands of leaders older than epoch %" PRIu64 " (from %s)", epoch, path);
        return 0;
}

void worker_raise_master_epoch(WorkerManager *w, uint64_t epoch) {
        int r;

        if (epoch <= w->master_epoch)
                return;
        log_struct(LOG_INFO, LOG_FIELDS(.worker_id = w->id), "Master epoch %" PRIu64 " (was %" PRIu64 ")", epoch,
                   w->master_epoch);
        w->master_epoch = epoch;
        if (!w->epoch_path)
                return;
        /* Before the command is carried out: a crash right after it must not
         * forget the epoch the command was accepted under. */
        r = epoch_file_save(w->epoch_path, epoch);
        if (r < 0)
                log_struct_errno(LOG_WARNING, r, LOG_FIELDS(.worker_id = w->id),
                                 "Failed to save leader epoch %" PRIu64 " to %s, keeping it in memory only: %m",
                                 epoch, w->epoch_path);
}
