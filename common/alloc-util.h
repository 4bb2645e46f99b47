/* Growable arrays, in the spirit of systemd's GREEDY_REALLOC: one way to
 * make room in an array that grows by doubling, instead of a realloc block
 * at each place that grows one. */
#pragma once

#include <stddef.h>

/* Makes *p hold at least need elements of size bytes.  *allocated is the
 * capacity in elements; it grows to the larger of need, twice what it was
 * and a small minimum, but never beyond max.  Elements past the old
 * capacity are zeroed when zero is true.  Returns 0, or -ENOMEM (out of
 * memory, or need beyond max); *p and *allocated are unchanged then. */
int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size, size_t max, int zero);

/* The check for room is inline: most calls find it, and some are on hot
 * paths (the driver's scheduler). */
#define GREEDY_REALLOC_FULL(array, allocated, need, zero)                                               \
        ({                                                                                              \
                size_t _need = (need);                                                                  \
                int _r = 0;                                                                             \
                if (_need > (size_t) (allocated)) {                                                     \
                        size_t _cap = (allocated);                                                      \
                        void *_p = (array);                                                             \
                        _r = greedy_realloc(&_p, &_cap, _need, sizeof((array)[0]),                      \
                                            (size_t) (__typeof__(allocated)) -1, (zero));              \
                        if (_r >= 0) {                                                                  \
                                (array) = _p;                                                           \
                                (allocated) = (__typeof__(allocated)) _cap;                             \
                        }                                                                               \
                }                                                                                       \
                _r;                                                                                     \
        })

/* GREEDY_REALLOC(array, allocated, need): room for need elements in array,
 * whose capacity (an unsigned integer of any width) is allocated.  Returns
 * 0 or -ENOMEM.  GREEDY_REALLOC0 also zeroes the new elements. */
#define GREEDY_REALLOC(array, allocated, need) GREEDY_REALLOC_FULL(array, allocated, need, 0)
#define GREEDY_REALLOC0(array, allocated, need) GREEDY_REALLOC_FULL(array, allocated, need, 1)
