/* See memstream-util.h. */
#include <errno.h>
#include <stdlib.h>

#include "memstream-util.h"

FILE *memstream_init(MemStream *m) {
        *m = (MemStream) {};
        m->f = open_memstream(&m->buf, &m->size);
        return m->f;
}

int memstream_finalize(MemStream *m, char **ret, size_t *ret_size) {
        int r = 0;

        /* fclose() writes buf and size a last time: they are valid only after it */
        if (m->f && fclose(m->f) != 0)
                r = -ENOMEM;
        m->f = NULL;
        if (r == 0 && !m->buf)
                r = -ENOMEM;
        if (r < 0) {
                free(m->buf);
                m->buf = NULL;
                return r;
        }
        *ret = m->buf;
        if (ret_size)
                *ret_size = m->size;
        m->buf = NULL;
        m->size = 0;
        return 0;
}

void memstream_done(MemStream *m) {
        if (m->f)
                fclose(m->f);
        m->f = NULL;
        free(m->buf);
        m->buf = NULL;
}
