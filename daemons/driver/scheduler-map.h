/* An int-keyed open-addressing hash map: the scheduler's executors by id
 * (common/hashmap.h is keyed by strings).  Values are non-NULL pointers
 * owned by the caller. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct SchedMapEntry {
        int64_t key;
        void *value;    /* NULL: empty slot */
} SchedMapEntry;

typedef struct SchedMap {
        SchedMapEntry *entries;
        size_t mask;    /* capacity - 1; entries == NULL while empty */
        size_t n;
} SchedMap;

void sched_map_init(SchedMap *m);
void sched_map_done(SchedMap *m);

void *sched_map_get(const SchedMap *m, int64_t key);
/* -EEXIST if the key is present, -EINVAL for a NULL value, -ENOMEM. */
int sched_map_put(SchedMap *m, int64_t key, void *value);
/* Returns the removed value, NULL if absent. */
void *sched_map_remove(SchedMap *m, int64_t key);
