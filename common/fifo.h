/* An intrusive, singly linked FIFO: its owner keeps a head and a tail
 * pointer, and each item points to the next through a field of its own
 * (so one item can be on several queues).  Pushing and popping are O(1);
 * removing an item from the middle walks the queue, which suits queues
 * where that is rare (a cancelled start, a job freed before it was seen).
 *
 *     FIFO_PUSH(m->start_head, m->start_tail, start_next, u);
 *     u = FIFO_POP(m->start_head, m->start_tail, start_next);
 *
 * None of these locks: a queue shared between threads is guarded by its
 * owner's lock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define FIFO_PUSH(head, tail, next, item)                                                                         \
        do {                                                                                                      \
                typeof(item) _fifo_item = (item);                                                                 \
                _fifo_item->next = NULL;                                                                          \
                if (tail)                                                                                         \
                        (tail)->next = _fifo_item;                                                                \
                else                                                                                              \
                        (head) = _fifo_item;                                                                      \
                (tail) = _fifo_item;                                                                              \
        } while (false)

/* The first item, unlinked, or NULL when the queue is empty. */
#define FIFO_POP(head, tail, next)                                                                                \
        ({                                                                                                        \
                typeof(head) _fifo_first = (head);                                                                \
                if (_fifo_first) {                                                                                \
                        (head) = _fifo_first->next;                                                                \
                        if (!(head))                                                                              \
                                (tail) = NULL;                                                                    \
                        _fifo_first->next = NULL;                                                                 \
                }                                                                                                 \
                _fifo_first;                                                                                      \
        })

/* Unlinks item if it is on the queue; whether it was. */
#define FIFO_REMOVE(head, tail, next, item)                                                                       \
        ({                                                                                                        \
                typeof(head) _fifo_prev = NULL, _fifo_want = (item);                                              \
                bool _fifo_found = false;                                                                         \
                for (typeof(head) _fifo_i = (head); _fifo_i; _fifo_prev = _fifo_i, _fifo_i = _fifo_i->next) {     \
                        if (_fifo_i != _fifo_want)                                                                \
                                continue;                                                                         \
                        if (_fifo_prev)                                                                           \
                                _fifo_prev->next = _fifo_i->next;                                                 \
                        else                                                                                      \
                                (head) = _fifo_i->next;                                                           \
                        if ((tail) == _fifo_i)                                                                    \
                                (tail) = _fifo_prev;                                                              \
                        _fifo_i->next = NULL;                                                                     \
                        _fifo_found = true;                                                                       \
                        break;                                                                                    \
                }                                                                                                 \
                _fifo_found;                                                                                      \
        })
