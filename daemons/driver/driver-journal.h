/* The driver's journal (driver-journal.c): with driver.state_dir, what a
 * restarted driver needs to lose nothing — its application id and key,
 * every submitted job, every accepted result, the end of jobs that failed
 * or were cancelled.  Without a state_dir every call here does nothing. */
#pragma once

#include "driver.h"

#define DRIVER_JOURNAL_FILE "jobs.journal"
#define DRIVER_JOURNAL_DAMAGED "jobs.journal.damaged"

/* Replays the journal of driver.state_dir, if any, and opens it for
 * appending: the application id and key, the jobs and their results come
 * back.  A torn last entry is dropped; a damaged one stops the replay
 * there, the file is kept aside as jobs.journal.damaged and what was
 * restored is said. */
int driver_journal_open(Driver *d);
void driver_journal_close(Driver *d);
bool driver_journal_enabled(const Driver *d);

/* Appends, writes and syncs on the loop, whatever driver.journal_sync
 * says: the application (after its first registration). */
int driver_journal_app(Driver *d);
/* Appends a job (its shared object, library, is stored by hash beside the
 * journal, synced, unless it is there already) and returns the bytes of its
 * entry (0: no journal).  The entry is synced by the next
 * driver_journal_flush(), which comes before any client hears of the job:
 * its tasks run meanwhile, and a submission that waits for its results has
 * them synced with it, one sync for both. */
int driver_journal_job(Driver *d, const char *job_id, const Spark__SubmitJob *sj, const char *library_hash,
                       const ProtobufCBinaryData *library);
/* Appended now, synced with the others of this turn of the event loop:
 * one fdatasync per batch (group commit).  They return the bytes the entry
 * takes in the journal (0: not journaled), which count toward its job. */
uint64_t driver_journal_result(Driver *d, const Spark__TaskResult *r);
uint64_t driver_journal_job_ended(Driver *d, const char *job_id);
/* A removed job's entries (bytes of them) are dead: once the dead bytes
 * pass half the journal (and 8 MiB), the end of the loop's turn compacts
 * it. */
void driver_journal_forget(Driver *d, uint64_t bytes);
/* Copies the live entries to jobs.journal.new, syncs it, renames it over
 * jobs.journal and syncs the directory; a failure leaves the old journal as
 * it was.  stop_before_rename: the first two steps only, as a crash there
 * would (tests). */
int driver_journal_compact(Driver *d);
int driver_journal_compact_steps(Driver *d, bool stop_before_rename);
/* Writes what is appended, before a client sees a result, and has it
 * synced as driver.journal_sync says: by the syncer thread while the loop
 * goes on ("background"), or at once ("before-reply"). */
int driver_journal_flush(Driver *d);
/* The application ended for good: nothing to come back to. */
void driver_journal_remove(Driver *d);

/* For tests and /metrics: entries appended and syncs asked for (on the
 * loop or of the thread); whether one asked of the thread is still to be
 * reported. */
uint64_t driver_journal_n_entries(const Driver *d);
uint64_t driver_journal_n_syncs(const Driver *d);
bool driver_journal_sync_pending(const Driver *d);
uint64_t driver_journal_n_compactions(const Driver *d);
/* Bytes of entries in the journal, and of them dead ones. */
void driver_journal_sizes(const Driver *d, uint64_t *ret_size, uint64_t *ret_dead);
/* Tests: the dead bytes a compaction waits for (8 MiB). */
void driver_journal_set_compact_min(Driver *d, uint64_t bytes);
/* Tests: what a failed background sync does, as if the syncer thread had
 * reported error (a real disk is not made to fail on demand). */
void driver_journal_sync_failed(Driver *d, int error);
