/* See alloc-util.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "macro.h"

/* The first allocation: 8 elements, or 64 bytes of small ones. */
#define GREEDY_MIN_ELEMENTS 8u
#define GREEDY_MIN_BYTES 64u

int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size, size_t max, int zero) {
        size_t cap, old = *allocated;
        void *q;

        if (need <= old)
                return 0;
        if (size == 0 || need > max || need > SIZE_MAX / size)
                return -ENOMEM;

        cap = MAX(MAX(need, (size_t) GREEDY_MIN_ELEMENTS), (size_t) GREEDY_MIN_BYTES / size);
        if (old <= SIZE_MAX / 2)
                cap = MAX(cap, old * 2);
        cap = MIN(cap, MIN(max, SIZE_MAX / size));

        q = realloc(*p, cap * size);
        if (!q)
                return -ENOMEM;
        if (zero)
                memset((char *) q + old * size, 0, (cap - old) * size);
        *p = q;
        *allocated = cap;
        return 0;
}
