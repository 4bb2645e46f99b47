/* fdatasync() on a thread of its own, so that an event loop goes on while
 * the disk works: a sync costs ~0.4–1.5 ms here, about what answering a
 * request does, and everything that arrived meanwhile used to wait for it.
 *
 * The loop asks for a sync of a file (after writing to it) and gets a
 * ticket; tickets increase.  The thread syncs the file and reports, on the
 * loop, the highest ticket whose writes are on disk: every ticket at or
 * below it is done.  Asks that come while a sync runs are served by the
 * next one (group commit). */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

#include "macro.h"

typedef struct FileSyncer FileSyncer;

/* On the loop: every ticket ≤ ticket is synced (error 0), or the sync
 * that was to cover them failed (a negative errno; the tickets are done
 * all the same: the caller decides what a failure means). */
typedef void (*FileSyncDone)(FileSyncer *s, uint64_t ticket, int error, void *userdata);

int file_syncer_new(sd_event *e, FileSyncDone done, void *userdata, FileSyncer **ret);

/* A sync of fd covering everything written to it before this call;
 * *ret_ticket is what done() will report.  fd must stay open until then. */
int file_syncer_request(FileSyncer *s, int fd, uint64_t *ret_ticket);

/* At least usec between the starts of two syncs (0, the default: none):
 * what is asked meanwhile waits for the next, so that a steady trickle of
 * asks costs one sync per interval rather than one each. */
void file_syncer_set_min_interval(FileSyncer *s, uint64_t usec);

/* The last ticket handed out, and the last one reported done. */
uint64_t file_syncer_requested(const FileSyncer *s);
uint64_t file_syncer_completed(const FileSyncer *s);

/* Waits for the sync under way (if any) and for those asked for, reports
 * them through done() and frees. */
FileSyncer *file_syncer_free(FileSyncer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(FileSyncer *, file_syncer_free);
