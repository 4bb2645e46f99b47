/* See library-cache.h. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "error-buf.h"
#include "fileio.h"
#include "hashmap.h"
#include "library-cache.h"
#include "sha256.h"

typedef enum LibraryState {
        LIBRARY_NEW,     /* not loaded yet, or the last fetch failed */
        LIBRARY_LOADED,
        LIBRARY_BROKEN,  /* its bytes are unusable: error says why */
        _LIBRARY_STATE_MAX,
        _LIBRARY_STATE_INVALID = -EINVAL,
} LibraryState;

typedef struct Symbol {
        spark_task_fn fn;
        char name[];
} Symbol;

typedef struct Library {
        char hash[SHA256_HEX_SIZE];
        pthread_mutex_t lock;
        /* Guarded by lock. */
        LibraryState state;
        int error_code;
        char *error;
        void *handle;
        Hashmap *symbols;  /* name → Symbol */
} Library;

struct LibraryCache {
        char *dir;
        uint64_t id;
        LibraryFetchFn fetch;
        void *userdata;
        pthread_mutex_t lock;
        Hashmap *libraries;  /* hash → Library, guarded by lock */
};

static atomic_uint_fast64_t cache_ids = 0;

static Library *library_free(Library *l) {
        size_t i = 0;
        void *v;

        if (!l)
                return NULL;
        if (l->symbols) {
                while (hashmap_iterate(l->symbols, &i, &v, NULL))
                        free(v);
                hashmap_free(l->symbols);
        }
        if (l->handle)
                dlclose(l->handle);
        free(l->error);
        pthread_mutex_destroy(&l->lock);
        free(l);
        return NULL;
}

int library_cache_new(const char *dir, LibraryFetchFn fetch, void *userdata, LibraryCache **ret) {
        LibraryCache *c;
        int r;

        if (isempty(dir) || !ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->dir = strdup(dir);
        if (!c->dir) {
                free(c);
                return -ENOMEM;
        }
        r = hashmap_new(&c->libraries);
        if (r < 0) {
                free(c->dir);
                free(c);
                return r;
        }
        pthread_mutex_init(&c->lock, NULL);
        c->fetch = fetch;
        c->userdata = userdata;
        c->id = atomic_fetch_add(&cache_ids, 1) + 1;
        *ret = c;
        return 0;
}

LibraryCache *library_cache_free(LibraryCache *c) {
        size_t i = 0;
        void *v;

        if (!c)
                return NULL;
        while (hashmap_iterate(c->libraries, &i, &v, NULL))
                library_free(v);
        hashmap_free(c->libraries);
        pthread_mutex_destroy(&c->lock);
        free(c->dir);
        free(c);
        return NULL;
}

uint64_t library_cache_id(const LibraryCache *c) {
        return c ? c->id : 0;
}

int library_cache_path(const LibraryCache *c, const char *hash, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/lib-%s.so", c->dir, hash);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* Writes data to path atomically: a temporary file next to it, renamed. */
static int write_file_atomic(const char *dir, const char *path, const char *hash, const void *data, size_t len) {
        char tmp[PATH_MAX];
        _cleanup_close_ int fd = -1;
        const char *p = data;
        int n, r;

        n = snprintf(tmp, sizeof(tmp), "%s/.lib-%s.so.XXXXXX", dir, hash);
        if (n < 0 || (size_t) n >= sizeof(tmp))
                return -ENAMETOOLONG;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        while (len > 0) {
                ssize_t k = write(fd, p, len);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = negative_errno();
                        (void) unlink(tmp);
                        return r;
                }
                p += k;
                len -= (size_t) k;
        }
        if (fchmod(fd, 0500) < 0 || close(TAKE_FD(fd)) < 0 || rename(tmp, path) < 0) {
                r = negative_errno();
                (void) unlink(tmp);
                return r;
        }
        return 0;
}

static bool hash_matches(const void *data, size_t len, const char *hash, char actual[static SHA256_HEX_SIZE]) {
        sha256_hex(data, len, actual);
        return streq(actual, hash);
}

/* Called with l->lock held.  Makes sure DIR/lib-HASH.so holds the right
 * bytes: a file already there is checked too (a previous executor of this
 * app may have left it; anything else there is replaced). */
static int library_materialize(LibraryCache *c, Library *l, const char *path, char *error, size_t error_size) {
        _cleanup_free_ void *data = NULL;
        _cleanup_free_ char *stored = NULL;
        char actual[SHA256_HEX_SIZE];
        size_t len = 0;
        int r;

        r = read_full_file(path, READ_FILE_NOFOLLOW | READ_FILE_REGULAR, 0, &stored, &len);
        if (r >= 0 && hash_matches(stored, len, l->hash, actual))
                return 0;
        if (r != -ENOENT)
                (void) unlink(path);

        if (!c->fetch)
                return error_buf_set(error, error_size, -ENOENT, "library %s is not available", l->hash);
        r = c->fetch(l->hash, &data, &len, error, error_size, c->userdata);
        if (r < 0)
                return r;
        if (!hash_matches(data, len, l->hash, actual))
                return error_buf_set(error, error_size, -EBADMSG,
                                     "library hash mismatch: the %zu bytes fetched for %s have hash %s", len, l->hash,
                                     actual);
        r = write_file_atomic(c->dir, path, l->hash, data, len);
        if (r < 0)
                return error_buf_set(error, error_size, r, "cannot store library %s in %s: %s", l->hash, c->dir,
                                     strerror(-r));
        return 0;
}

static void library_break(Library *l, int code, const char *error) {
        l->state = LIBRARY_BROKEN;
        l->error_code = code;
        l->error = strdup(error);
}

/* Called with l->lock held, state LIBRARY_NEW. */
static int library_load(LibraryCache *c, Library *l, char *error, size_t error_size) {
        const uint32_t *abi;
        char path[PATH_MAX];
        void *h;
        int r;

        r = library_cache_path(c, l->hash, path, sizeof(path));
        if (r < 0)
                return error_buf_set(error, error_size, r, "library directory name too long: %s", c->dir);

        r = library_materialize(c, l, path, error, error_size);
        if (r == -EBADMSG)
                library_break(l, r, error);
        if (r < 0)
                return r;

        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                const char *e = dlerror();

                r = error_buf_set(error, error_size, -ENOEXEC, "library %s: %s", l->hash, e ? e : "cannot be loaded");
                library_break(l, r, error);
                return r;
        }
        abi = dlsym(h, SPARK_TASK_ABI_SYMBOL);
        if (!abi || *abi != SPARK_TASK_ABI_VERSION) {
                if (!abi)
                        r = error_buf_set(error, error_size, -ENOEXEC,
                                          "library %s: no %s symbol (build it with SPARK_TASK_ABI from <spark/task.h>)",
                                          l->hash, SPARK_TASK_ABI_SYMBOL);
                else
                        r = error_buf_set(error, error_size, -ENOEXEC, "library %s: ABI version %u, expected %u",
                                          l->hash, (unsigned) *abi, SPARK_TASK_ABI_VERSION);
                dlclose(h);
                library_break(l, r, error);
                return r;
        }
        l->handle = h;
        l->state = LIBRARY_LOADED;
        return 0;
}

static Library *cache_get_library(LibraryCache *c, const char *hash) {
        Library *l;

        pthread_mutex_lock(&c->lock);
        l = hashmap_get(c->libraries, hash);
        if (!l) {
                l = calloc(1, sizeof(*l));
                if (l) {
                        memcpy(l->hash, hash, SHA256_HEX_SIZE);
                        pthread_mutex_init(&l->lock, NULL);
                        if (hashmap_new(&l->symbols) < 0 || hashmap_put(c->libraries, l->hash, l) < 0)
                                l = library_free(l);
                }
        }
        pthread_mutex_unlock(&c->lock);
        return l;
}

static int library_find_symbol(Library *l, const char *symbol, spark_task_fn *ret, char *error, size_t error_size) {
        Symbol *s = hashmap_get(l->symbols, symbol);
        size_t n;
        void *p;

        if (s) {
                *ret = s->fn;
                return 0;
        }
        (void) dlerror();
        p = dlsym(l->handle, symbol);
        if (!p)
                return error_buf_set(error, error_size, -ENOENT, "symbol '%.255s' not found in library %s", symbol,
                                     l->hash);

        n = strlen(symbol);
        s = malloc(sizeof(Symbol) + n + 1);
        if (s) {
                memcpy(s->name, symbol, n + 1);
                /* POSIX guarantees this conversion for dlsym() results. */
                *(void **) &s->fn = p;
                if (hashmap_put(l->symbols, s->name, s) < 0)
                        free(s); /* not cached; still usable */
        }
        *(void **) ret = p;
        return 0;
}

int library_cache_lookup(LibraryCache *c, const char *hash, const char *symbol, spark_task_fn *ret_fn,
                         bool *ret_loaded, char *error, size_t error_size) {
        bool loaded = false;
        Library *l;
        int r;

        if (ret_loaded)
                *ret_loaded = false;
        if (!c || !ret_fn)
                return -EINVAL;
        if (!sha256_hex_is_valid(hash))
                return error_buf_set(error, error_size, -EINVAL, "invalid library hash \"%.80s\"", strna(hash));
        if (isempty(symbol))
                return error_buf_set(error, error_size, -EINVAL, "no symbol given for library %s", hash);

        l = cache_get_library(c, hash);
        if (!l)
                return error_buf_set(error, error_size, -ENOMEM, "out of memory");

        pthread_mutex_lock(&l->lock);
        if (l->state == LIBRARY_NEW) {
                loaded = true;
                r = library_load(c, l, error, error_size);
                if (r < 0)
                        goto out;
        }
        if (l->state == LIBRARY_BROKEN) {
                r = error_buf_set(error, error_size, l->error_code, "%s", strna(l->error));
                goto out;
        }
        r = library_find_symbol(l, symbol, ret_fn, error, error_size);
out:
        pthread_mutex_unlock(&l->lock);
        if (ret_loaded)
                *ret_loaded = loaded;
        return r;
}
