/* Linear probing at a load factor of at most 1/2, with backward-shift
 * deletion so that no tombstones build up as executors come and go. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "scheduler-map.h"

static size_t slot_of(const SchedMap *m, int64_t key) {
        /* Fibonacci hashing: sequential executor ids spread over the table. */
        return (size_t) (((uint64_t) key * 0x9e3779b97f4a7c15ULL) >> 32) & m->mask;
}

static SchedMapEntry *find(const SchedMap *m, int64_t key) {
        if (!m->entries)
                return NULL;
        for (size_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
                SchedMapEntry *e = &m->entries[i];

                if (!e->value)
                        return NULL;
                if (e->key == key)
                        return e;
        }
}

static void insert_entry(SchedMap *m, int64_t key, void *value) {
        size_t i = slot_of(m, key);

        while (m->entries[i].value)
                i = (i + 1) & m->mask;
        m->entries[i] = (SchedMapEntry) { key, value };
        m->n++;
}

static int grow(SchedMap *m) {
        size_t old_cap = m->entries ? m->mask + 1 : 0, cap = old_cap ? old_cap * 2 : 16;
        SchedMapEntry *old = m->entries, *e;

        e = calloc(cap, sizeof(SchedMapEntry));
        if (!e)
                return -ENOMEM;
        m->entries = e;
        m->mask = cap - 1;
        m->n = 0;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i].value)
                        insert_entry(m, old[i].key, old[i].value);
        free(old);
        return 0;
}

void sched_map_init(SchedMap *m) {
        *m = (SchedMap) {};
}

void sched_map_done(SchedMap *m) {
        free(m->entries);
        *m = (SchedMap) {};
}

void *sched_map_get(const SchedMap *m, int64_t key) {
        SchedMapEntry *e = find(m, key);

        return e ? e->value : NULL;
}

int sched_map_put(SchedMap *m, int64_t key, void *value) {
        int r;

        if (!value)
                return -EINVAL;
        if (find(m, key))
                return -EEXIST;
        if (!m->entries || (m->n + 1) * 2 > m->mask + 1) {
                r = grow(m);
                if (r < 0)
                        return r;
        }
        insert_entry(m, key, value);
        return 0;
}

void *sched_map_remove(SchedMap *m, int64_t key) {
        SchedMapEntry *e = find(m, key);
        size_t hole;
        void *value;

        if (!e)
                return NULL;
        value = e->value;
        hole = (size_t) (e - m->entries);
        /* Pull later entries of the probe run back over the hole whenever
         * their home slot does not lie cyclically between the hole and them. */
        for (size_t j = (hole + 1) & m->mask; m->entries[j].value; j = (j + 1) & m->mask) {
                size_t home = slot_of(m, m->entries[j].key);

                if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
                        m->entries[hole] = m->entries[j];
                        hole = j;
                }
        }
        m->entries[hole] = (SchedMapEntry) {};
        m->n--;
        return value;
}
