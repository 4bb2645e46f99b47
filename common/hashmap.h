/* A string-keyed hash map (open addressing, linear probing).  The map does
 * not own keys or values: a value usually embeds its own key, and the caller
 * keeps the key alive while it is in the map. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct Hashmap Hashmap;

int hashmap_new(Hashmap **ret);
Hashmap *hashmap_free(Hashmap *h);

/* -EEXIST if key is present. */
int hashmap_put(Hashmap *h, const char *key, void *value);
void *hashmap_get(const Hashmap *h, const char *key);
/* Returns the removed value or NULL. */
void *hashmap_remove(Hashmap *h, const char *key);
size_t hashmap_size(const Hashmap *h);
/* Empties the map (it keeps its table); free the values first if owned. */
void hashmap_clear(Hashmap *h);

/* Iteration: `size_t i = 0; void *v; while (hashmap_iterate(h, &i, &v, NULL)) ...`.
 * The map must not change while iterating: collect first, then remove. */
bool hashmap_iterate(const Hashmap *h, size_t *state, void **ret_value, const char **ret_key);

static inline void hashmap_freep(Hashmap **h) {
        hashmap_free(*h);
}
