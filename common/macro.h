/* Small helpers shared by every program: cleanup attributes in the style of
 * systemd's src/fundamental/macro.h, so that error paths stay short. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand ownership of a pointer out of a _cleanup_ variable. */
#define TAKE_PTR(p)                          \
        ({                                   \
                __typeof__(p) _p_ = (p);     \
                (p) = NULL;                  \
                _p_;                         \
        })

#define TAKE_FD(fd)                  \
        ({                           \
                int _fd_ = (fd);     \
                (fd) = -1;           \
                _fd_;                \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Define a cleanup function for a type's unref/free function, NULL-safe. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
        static inline void func##p(type *p) {   \
                if (*p)                         \
                        func(*p);               \
        }

static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

#define streq(a, b) (strcmp((a), (b)) == 0)
#define isempty(s) (!(s) || !(s)[0])

static inline const char *strna(const char *s) {
        return s ? s : "n/a";
}

static inline const char *strempty(const char *s) {
        return s ? s : "";
}
