/* Unit properties of an executor's sandbox as "Name=value" strings, the
 * form of worker.executor_properties (spark.conf(5)) and of the worker's own
 * built-in sandbox: which names the worker knows how to send, the value each
 * takes, and the typed value that goes on the bus.  Values follow
 * systemd.exec(5) / systemd.resource-control(5); the D-Bus signatures are
 * those of systemd 252's transient units (src/core/dbus-execute.c,
 * dbus-cgroup.c).
 *
 * One parser for the configuration (so --check-config refuses what the
 * worker could not send) and for the worker (which sends what it parsed). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef enum ExecPropertyType {
        EXEC_PROPERTY_BOOL,       /* b: yes, no, true, false, on, off, 1, 0 */
        EXEC_PROPERTY_WORD,       /* s: one of the property's words */
        EXEC_PROPERTY_PATHS,      /* as: absolute paths split on blanks, each may start with "-" */
        EXEC_PROPERTY_WORDS,      /* as: words split on blanks */
        EXEC_PROPERTY_NAME_LIST,  /* (bas): "~" first for a deny list, then names */
        EXEC_PROPERTY_BIND_PATHS, /* a(ssbt): [-]SOURCE[:DEST[:rbind|norbind]] split on blanks */
        EXEC_PROPERTY_DEVICE,     /* a(ss): PATH [r][w][m] */
        EXEC_PROPERTY_CAPS,       /* t: capability names split on blanks; empty: none */
        EXEC_PROPERTY_NAMESPACES, /* t: yes (none allowed) or no (all allowed) */
        EXEC_PROPERTY_UINT,       /* t: a number in the property's range, or "infinity" */
        EXEC_PROPERTY_UMASK,      /* u: octal, at most 0777 */
        _EXEC_PROPERTY_TYPE_MAX,
        _EXEC_PROPERTY_TYPE_INVALID = -EINVAL,
} ExecPropertyType;

typedef struct ExecPropertyInfo {
        const char *name;
        ExecPropertyType type;
        const char *const *words; /* WORD, WORDS: the accepted words; NULL: any word */
        uint64_t min, max;        /* UINT */
        bool infinity;            /* UINT: "infinity" is accepted */
} ExecPropertyInfo;

/* A parsed assignment.  Only the members of its type are set. */
typedef struct ExecProperty {
        const ExecPropertyInfo *info;
        bool b;            /* BOOL; NAME_LIST: true for an allow list */
        uint64_t t;        /* CAPS, NAMESPACES, UINT */
        uint32_t u;        /* UMASK */
        char *s;           /* WORD; DEVICE: the path */
        char *perm;        /* DEVICE: "rwm" or a part of it */
        char **strv;       /* PATHS, WORDS, NAME_LIST; BIND_PATHS: the sources */
        char **dest;       /* BIND_PATHS: the destinations */
        bool *ignore;      /* BIND_PATHS: a "-" prefix */
        bool *recursive;   /* BIND_PATHS: rbind (the default) */
        size_t n;          /* entries of strv */
} ExecProperty;

/* The names the worker knows how to send, in a fixed order; NULL if name
 * is not one of them. */
const ExecPropertyInfo *exec_property_info(const char *name);
const ExecPropertyInfo *exec_property_table(size_t *ret_n);

/* Whether the first len bytes of name are a property only the worker may
 * set: the command, the user, the slice, the working and state
 * directories, the environment, credentials, resources it sets from the
 * app's request, and the unit's bookkeeping. */
bool exec_property_name_is_reserved(const char *name, size_t len);

/* Parses "Name=value" into *ret (which then owns memory: exec_property_done()).
 * -EINVAL with a message naming the property in error (may be NULL) if the
 * name is unknown or reserved, or the value is not of the property's form. */
int exec_property_parse(const char *assignment, ExecProperty *ret, char *error, size_t error_size);
void exec_property_done(ExecProperty *p);

/* The length of the name in "Name=value" (up to '=', or all of it). */
size_t exec_property_name_length(const char *assignment);
