/* The highest leader epoch a worker has accepted, kept in a small file so
 * that a restarted worker still refuses the commands of a deposed leader
 * (fencing, docs/ha.md).  The file holds one line, "spark-epoch N". */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Whether a command or event of a leader with epoch may be obeyed by a
 * receiver that has accepted *highest so far: epoch 0 (a single master,
 * filesystem mode) always, an older epoch never.  A newer one raises
 * *highest. */
static inline bool leader_epoch_accept(uint64_t *highest, uint64_t epoch) {
        if (epoch == 0)
                return true;
        if (epoch < *highest)
                return false;
        *highest = epoch;
        return true;
}

/* Reads path.  -ENOENT: no file (no epoch seen yet); -EBADMSG: anything
 * but one well-formed line (the caller says which file is at fault). */
int epoch_file_load(const char *path, uint64_t *ret);

/* Replaces path with epoch, atomically: a temporary file in the same
 * directory, synced, renamed over path, and the directory synced.  A crash
 * leaves the old epoch or the new one, never a torn file. */
int epoch_file_save(const char *path, uint64_t epoch);
