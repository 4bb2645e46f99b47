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

/* Appends and syncs at once: the application (after its first
 * registration) and a job (before it is acknowledged; its shared object is
 * stored by hash beside the journal). */
int driver_journal_app(Driver *d);
int driver_journal_job(Driver *d, const char *job_id, const Spark__SubmitJob *sj, const char *library_hash);
/* Appended now, synced with the others of this turn of the event loop:
 * one fdatasync per batch (group commit). */
void driver_journal_result(Driver *d, const Spark__TaskResult *r);
void driver_journal_job_ended(Driver *d, const char *job_id);
/* Writes and syncs what is appended: before a client sees a result. */
int driver_journal_flush(Driver *d);
/* The application ended for good: nothing to come back to. */
void driver_journal_remove(Driver *d);

/* For tests and /metrics: entries appended and fdatasync() calls made. */
uint64_t driver_journal_n_entries(const Driver *d);
uint64_t driver_journal_n_syncs(const Driver *d);
