/* The web UI's files (daemons/shared/ui/), embedded in each daemon's binary
 * by tools/embed-files.sh at build time. */
#pragma once

#include <stddef.h>

typedef struct UiAsset {
        const char *path; /* "/master.html" */
        const char *content_type;
        const unsigned char *data;
        size_t size;
} UiAsset;

/* Ends with an entry whose path is NULL. */
extern const UiAsset ui_assets[];
