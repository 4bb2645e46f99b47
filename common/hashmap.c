/* See hashmap.h.  Deletion uses backward-shift, so there are no tombstones
 * and lookups stay short however many removals happen. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

typedef struct Entry {
        const char *key; /* NULL: empty slot */
        void *value;
        uint64_t hash;
} Entry;

struct Hashmap {
        Entry *entries;
        size_t capacity; /* a power of two */
        size_t size;
};

/* FNV-1a, then a final mix so that similar ids spread over the table. */
static uint64_t hash_string(const char *s) {
        uint64_t h = 1469598103934665603ULL;

        for (; *s; s++) {
                h ^= (unsigned char) *s;
                h *= 1099511628211ULL;
        }
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        return h;
}

int hashmap_new(Hashmap **ret) {
        Hashmap *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        h->capacity = 16;
        h->entries = calloc(h->capacity, sizeof(Entry));
        if (!h->entries) {
                free(h);
                return -ENOMEM;
        }
        *ret = h;
        return 0;
}

Hashmap *hashmap_free(Hashmap *h) {
        if (h) {
                free(h->entries);
                free(h);
        }
        return NULL;
}

static Entry *find_slot(const Hashmap *h, const char *key, uint64_t hash) {
        size_t mask = h->capacity - 1;

        for (size_t i = hash & mask;; i = (i + 1) & mask) {
                Entry *e = &h->entries[i];
                if (!e->key || (e->hash == hash && strcmp(e->key, key) == 0))
                        return e;
        }
}

static int grow(Hashmap *h) {
        Entry *old = h->entries;
        size_t old_cap = h->capacity;
        size_t cap = old_cap * 2;
        Entry *n = calloc(cap, sizeof(Entry));

        if (!n)
                return -ENOMEM;
        h->entries = n;
        h->capacity = cap;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i].key)
                        *find_slot(h, old[i].key, old[i].hash) = old[i];
        free(old);
        return 0;
}

int hashmap_put(Hashmap *h, const char *key, void *value) {
        uint64_t hash;
        Entry *e;

        if (!key)
                return -EINVAL;
        /* keep the load factor under 3/4 */
        if ((h->size + 1) * 4 > h->capacity * 3) {
                int r = grow(h);
                if (r < 0)
                        return r;
        }
        hash = hash_string(key);
        e = find_slot(h, key, hash);
        if (e->key)
                return -EEXIST;
        *e = (Entry) { .key = key, .value = value, .hash = hash };
        h->size++;
        return 0;
}

void *hashmap_get(const Hashmap *h, const char *key) {
        Entry *e;

        if (!h || !key)
                return NULL;
        e = find_slot(h, key, hash_string(key));
        return e->key ? e->value : NULL;
}

void *hashmap_remove(Hashmap *h, const char *key) {
        size_t mask, i, j;
        void *value;
        Entry *e;

        if (!h || !key)
                return NULL;
        e = find_slot(h, key, hash_string(key));
        if (!e->key)
                return NULL;
        value = e->value;
        mask = h->capacity - 1;
        i = (size_t) (e - h->entries);
        /* backward-shift: pull later entries of the same probe run into the hole */
        for (j = (i + 1) & mask; h->entries[j].key; j = (j + 1) & mask) {
                size_t home = h->entries[j].hash & mask;
                /* entry j may move to i if its home is not in (i, j] cyclically */
                bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
                if (!between) {
                        h->entries[i] = h->entries[j];
                        i = j;
                }
        }
        h->entries[i] = (Entry) {};
        h->size--;
        return value;
}

size_t hashmap_size(const Hashmap *h) {
        return h ? h->size : 0;
}

void hashmap_clear(Hashmap *h) {
        if (!h)
                return;
        memset(h->entries, 0, h->capacity * sizeof(Entry));
        h->size = 0;
}

bool hashmap_iterate(const Hashmap *h, size_t *state, void **ret_value, const char **ret_key) {
        if (!h)
                return false;
        while (*state < h->capacity) {
                size_t i = *state;
                (*state)++;
                if (h->entries[i].key) {
                        if (ret_value)
                                *ret_value = h->entries[i].value;
                        if (ret_key)
                                *ret_key = h->entries[i].key;
                        return true;
                }
        }
        return false;
}
