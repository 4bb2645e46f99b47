/* The shared objects of function tasks, by SHA-256: each is fetched from the
 * driver once, checked against its hash, stored as DIR/lib-HASH.so (written
 * to a temporary file and renamed, so a half-written file is never seen),
 * dlopen()ed once (RTLD_NOW | RTLD_LOCAL) and kept open for the life of the
 * cache.  Before anything in it is used, the object must export
 * SPARK_TASK_ABI_SYMBOL with our SPARK_TASK_ABI_VERSION.
 *
 * What depends only on the object's bytes (hash mismatch, dlopen error,
 * missing or wrong ABI version) is remembered, so every later task of that
 * library fails at once with the same message; a failed fetch is not, the
 * next task tries again.  Thread-safe: tasks of one library that arrive
 * together wait for a single fetch. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <spark/task.h>

#include "macro.h"

typedef struct LibraryCache LibraryCache;

/* Gets the object's bytes (malloc()ed) from wherever they live.  On failure
 * returns a negative errno and says why in error. */
typedef int (*LibraryFetchFn)(const char *hash, void **ret_data, size_t *ret_len, char *error, size_t error_size,
                              void *userdata);

/* dir must exist; it is where the objects are stored. */
int library_cache_new(const char *dir, LibraryFetchFn fetch, void *userdata, LibraryCache **ret);
/* dlclose()s everything: no function from it may still be running. */
LibraryCache *library_cache_free(LibraryCache *c);

/* Finds symbol in the library named by hash, loading the library first if
 * needed.  Returns 0, or a negative errno with the reason in error:
 *   -EINVAL   hash is not 64 lower-case hex digits, or symbol is empty
 *   -EBADMSG  the fetched bytes do not have that hash
 *   -ENOEXEC  dlopen() failed, or no / a different ABI version
 *   -ENOENT   no such symbol in the library
 *   other     the fetch failed
 * *ret_loaded (may be NULL) tells whether this call did the loading
 * attempt, so that the caller logs it once. */
int library_cache_lookup(LibraryCache *c, const char *hash, const char *symbol, spark_task_fn *ret_fn,
                         bool *ret_loaded, char *error, size_t error_size);

/* A number no other cache of this process has had: callers may keep a
 * looked-up function keyed by it, since a cache never unloads a library. */
uint64_t library_cache_id(const LibraryCache *c);

/* DIR/lib-HASH.so */
int library_cache_path(const LibraryCache *c, const char *hash, char *buf, size_t size);

DEFINE_TRIVIAL_CLEANUP_FUNC(LibraryCache *, library_cache_free);
