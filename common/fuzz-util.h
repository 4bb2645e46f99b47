/* Shared by the libFuzzer targets (fuzz-*.c): splitting one input into
 * several messages, a private temporary directory, and writing the seed
 * corpus from the encoders (tests/fuzz/<target>/seeds/, `make fuzz-seeds`). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

/* One input may carry several messages (a conversation: register, then use
 * what was registered), separated by this marker.  Also in the dictionaries. */
#define FUZZ_SEPARATOR "\xfe\xfeNEXT\xfe\xfe"
#define FUZZ_SEPARATOR_LEN (sizeof(FUZZ_SEPARATOR) - 1)

typedef struct FuzzChunk {
        const uint8_t *data;
        size_t len;
} FuzzChunk;

/* Splits data at each FUZZ_SEPARATOR into at most max chunks (the last one
 * keeps the rest); returns how many. */
size_t fuzz_split(const uint8_t *data, size_t size, FuzzChunk *chunks, size_t max);

/* A directory of this process under $TMPDIR (or /tmp), removed at exit. */
const char *fuzz_tmpdir(void);
/* "<tmpdir>/<name>"; the string is static until the next call. */
const char *fuzz_tmp_path(const char *name);
/* Empties a directory tree below path (path itself stays). */
void fuzz_rm_rf_below(const char *path);
/* Removes path and everything below it. */
void fuzz_rm_rf(const char *path);

int fuzz_write_file(const char *path, const void *data, size_t len);

/* Daemon logs would only slow the fuzzer down; SPARK_FUZZ_LOG=1 keeps them. */
void fuzz_quiet_logs(void);

/* The seed directory when the binary was started by `make fuzz-seeds`
 * (SPARK_FUZZ_WRITE_SEEDS=DIR), else NULL. */
const char *fuzz_seed_dir(void);
/* The start of every target's LLVMFuzzerInitialize(): started by `make
 * fuzz-seeds`, the binary only writes its seeds with write_seeds(DIR) and
 * exits; otherwise this returns. */
void fuzz_write_seeds_if_asked(void (*write_seeds)(const char *dir));
/* Writes DIR/NAME: the encoded envelopes joined by FUZZ_SEPARATOR.  Exits
 * the process on failure (only used when generating seeds). */
void fuzz_write_seed(const char *dir, const char *name, Envelope *const *msgs, size_t n);
void fuzz_write_seed_raw(const char *dir, const char *name, const void *data, size_t len);

/* Aborts with a message: an oracle of a fuzz target failed. */
_Noreturn void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define FUZZ_ASSERT(x)                                                                 \
        do {                                                                           \
                if (!(x))                                                              \
                        fuzz_fail("%s:%d: assertion failed: %s", __FILE__, __LINE__, #x); \
        } while (0)
