/* Removing a directory tree without following symbolic links: a tree that
 * other users could write (executors' work dirs) may hold links to places
 * its remover must not touch. */
#pragma once

/* Removes name (relative to the directory dir_fd, or AT_FDCWD) and, if it
 * is a directory, everything below it; a symbolic link is removed, never
 * followed.  A tree deeper than RM_RF_DEPTH_MAX is -ELOOP (what could be
 * removed above that depth is gone).  A name that does not exist is 0. */
#define RM_RF_DEPTH_MAX 64
int rm_rf_at(int dir_fd, const char *name);
