/* The driver's result spill (driver-spill.c): task results beyond
 * driver.result_memory_mb, in an append-only file that has no name (an
 * O_TMPFILE), so that it goes with the driver however the driver ends.
 * A result is found again by its offset alone: each record holds its
 * length and exit code in front of its bytes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ResultSpill ResultSpill;

/* Makes the spill file in dir (created if missing); nothing is written
 * before the first append.  -errno when dir cannot hold one. */
int result_spill_open(const char *dir, ResultSpill **ret);
ResultSpill *result_spill_free(ResultSpill *s);
const char *result_spill_dir(const ResultSpill *s);

/* Appends one result; its offset (a multiple of 8, never above
 * RESULT_SPILL_OFFSET_MAX) is where result_spill_read() finds it. */
int result_spill_append(ResultSpill *s, int32_t exit_code, const void *data, uint32_t len, uint64_t *ret_offset);
/* The length and exit code of the result at offset: -EIO (logged by the
 * caller) when the file cannot be read, -EBADMSG when the record there is
 * not whole. */
int result_spill_stat(ResultSpill *s, uint64_t offset, uint32_t *ret_len, int32_t *ret_exit_code);
/* Its bytes, len of them (as result_spill_stat() said). */
int result_spill_read(ResultSpill *s, uint64_t offset, void *buf, uint32_t len);
/* n results of len bytes in all that no one needs any more (a job's, when
 * it is removed).  When none is left the file is emptied: the space of
 * removed jobs comes back. */
void result_spill_forget(ResultSpill *s, uint64_t n, uint64_t len);

/* For tests and /metrics: the bytes of live results, the file's size. */
uint64_t result_spill_live_bytes(const ResultSpill *s);
uint64_t result_spill_file_bytes(const ResultSpill *s);

#define RESULT_SPILL_HEADER 8u
#define RESULT_SPILL_OFFSET_MAX (UINT64_C(1) << 62)
