/* See exec-property.h. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error-buf.h"
#include "exec-property.h"

#define EXEC_PROPERTY_VALUE_MAX 4096
#define EXEC_PROPERTY_ENTRIES_MAX 128

static const char *const protect_system_words[] = { "no", "yes", "full", "strict", NULL };
static const char *const protect_home_words[] = { "no", "yes", "read-only", "tmpfs", NULL };
static const char *const protect_proc_words[] = { "default", "invisible", "ptraceable", "noaccess", NULL };
static const char *const proc_subset_words[] = { "all", "pid", NULL };
static const char *const device_policy_words[] = { "auto", "closed", "strict", NULL };
static const char *const keyring_mode_words[] = { "inherit", "private", "shared", NULL };
static const char *const architecture_words[] = { "native", "x86", "x86-64", "x32", "arm", "arm64", NULL };

#define BOOL(n) { .name = #n, .type = EXEC_PROPERTY_BOOL }
#define WORD(n, w) { .name = #n, .type = EXEC_PROPERTY_WORD, .words = (w) }
#define TYPED(n, t) { .name = #n, .type = (t) }

/* Sorted only by concern; the worker's built-in sandbox uses most of them. */
static const ExecPropertyInfo table[] = {
        BOOL(NoNewPrivileges),
        WORD(ProtectSystem, protect_system_words),
        BOOL(PrivateTmp),
        WORD(ProtectHome, protect_home_words),
        BOOL(ProtectKernelTunables),
        BOOL(ProtectKernelModules),
        BOOL(ProtectKernelLogs),
        BOOL(ProtectControlGroups),
        BOOL(ProtectClock),
        BOOL(ProtectHostname),
        WORD(ProtectProc, protect_proc_words),
        WORD(ProcSubset, proc_subset_words),
        BOOL(PrivateMounts),
        BOOL(PrivateDevices),
        BOOL(PrivateNetwork),
        BOOL(PrivateUsers),
        BOOL(RestrictSUIDSGID),
        BOOL(RestrictRealtime),
        TYPED(RestrictNamespaces, EXEC_PROPERTY_NAMESPACES),
        BOOL(LockPersonality),
        BOOL(MemoryDenyWriteExecute),
        BOOL(RemoveIPC),
        WORD(KeyringMode, keyring_mode_words),
        TYPED(CapabilityBoundingSet, EXEC_PROPERTY_CAPS),
        TYPED(SystemCallFilter, EXEC_PROPERTY_NAME_LIST),
        { .name = "SystemCallArchitectures", .type = EXEC_PROPERTY_WORDS, .words = architecture_words },
        TYPED(RestrictAddressFamilies, EXEC_PROPERTY_NAME_LIST),
        WORD(DevicePolicy, device_policy_words),
        TYPED(DeviceAllow, EXEC_PROPERTY_DEVICE),
        TYPED(UMask, EXEC_PROPERTY_UMASK),
        { .name = "TasksMax", .type = EXEC_PROPERTY_UINT, .min = 1, .max = 4194304, .infinity = true },
        BOOL(CPUAccounting),
        BOOL(TasksAccounting),
        TYPED(ReadWritePaths, EXEC_PROPERTY_PATHS),
        TYPED(ReadOnlyPaths, EXEC_PROPERTY_PATHS),
        TYPED(InaccessiblePaths, EXEC_PROPERTY_PATHS),
        TYPED(BindPaths, EXEC_PROPERTY_BIND_PATHS),
        TYPED(BindReadOnlyPaths, EXEC_PROPERTY_BIND_PATHS),
};

/* What the worker sets itself, from its configuration and the app's
 * request: an executor_properties entry may not change them. */
static const char *const reserved[] = {
        "ExecStart", "ExecStartPre", "ExecStartPost", "ExecStop", "ExecStopPost", "ExecReload",
        "Type", "User", "Group", "DynamicUser", "SupplementaryGroups", "Slice",
        "WorkingDirectory", "RootDirectory", "RootImage", "StateDirectory", "RuntimeDirectory",
        "CacheDirectory", "LogsDirectory", "ConfigurationDirectory",
        "Environment", "EnvironmentFile", "PassEnvironment", "UnsetEnvironment",
        "LoadCredential", "LoadCredentialEncrypted", "SetCredential", "SetCredentialEncrypted",
        "ImportCredential", "MemoryMax", "MemoryAccounting", "CPUQuota", "CPUQuotaPerSecUSec",
        "CPUWeight", "Description", "CollectMode", "KillMode", "TimeoutStopUSec",
        "SyslogIdentifier", "LogExtraFields", "Delegate", "PAMName",
};

#define CAP(c) { #c, c }
static const struct {
        const char *name;
        int cap;
} caps[] = {
        CAP(CAP_CHOWN), CAP(CAP_DAC_OVERRIDE), CAP(CAP_DAC_READ_SEARCH), CAP(CAP_FOWNER),
        CAP(CAP_FSETID), CAP(CAP_KILL), CAP(CAP_SETGID), CAP(CAP_SETUID), CAP(CAP_SETPCAP),
        CAP(CAP_LINUX_IMMUTABLE), CAP(CAP_NET_BIND_SERVICE), CAP(CAP_NET_BROADCAST),
        CAP(CAP_NET_ADMIN), CAP(CAP_NET_RAW), CAP(CAP_IPC_LOCK), CAP(CAP_IPC_OWNER),
        CAP(CAP_SYS_MODULE), CAP(CAP_SYS_RAWIO), CAP(CAP_SYS_CHROOT), CAP(CAP_SYS_PTRACE),
        CAP(CAP_SYS_PACCT), CAP(CAP_SYS_ADMIN), CAP(CAP_SYS_BOOT), CAP(CAP_SYS_NICE),
        CAP(CAP_SYS_RESOURCE), CAP(CAP_SYS_TIME), CAP(CAP_SYS_TTY_CONFIG), CAP(CAP_MKNOD),
        CAP(CAP_LEASE), CAP(CAP_AUDIT_WRITE), CAP(CAP_AUDIT_CONTROL), CAP(CAP_SETFCAP),
        CAP(CAP_MAC_OVERRIDE), CAP(CAP_MAC_ADMIN), CAP(CAP_SYSLOG), CAP(CAP_WAKE_ALARM),
        CAP(CAP_BLOCK_SUSPEND), CAP(CAP_AUDIT_READ), CAP(CAP_PERFMON), CAP(CAP_BPF),
        CAP(CAP_CHECKPOINT_RESTORE),
};

const ExecPropertyInfo *exec_property_table(size_t *ret_n) {
        if (ret_n)
                *ret_n = ELEMENTSOF(table);
        return table;
}

size_t exec_property_name_length(const char *assignment) {
        return strcspn(assignment, "=");
}

static bool name_is(const char *a, size_t len, const char *b) {
        return strlen(b) == len && strncmp(a, b, len) == 0;
}

const ExecPropertyInfo *exec_property_info(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].name, name))
                        return table + i;
        return NULL;
}

bool exec_property_name_is_reserved(const char *name, size_t len) {
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                if (name_is(name, len, reserved[i]))
                        return true;
        return false;
}

static char **strv_free_local(char **l, size_t n) {
        if (l)
                for (size_t i = 0; i < n; i++)
                        free(l[i]);
        free(l);
        return NULL;
}

void exec_property_done(ExecProperty *p) {
        if (!p)
                return;
        free(p->s);
        free(p->perm);
        strv_free_local(p->strv, p->n);
        strv_free_local(p->dest, p->n);
        free(p->ignore);
        free(p->recursive);
        *p = (ExecProperty) {};
}

static int parse_bool(const char *v) {
        if (streq(v, "yes") || streq(v, "true") || streq(v, "on") || streq(v, "1"))
                return 1;
        if (streq(v, "no") || streq(v, "false") || streq(v, "off") || streq(v, "0"))
                return 0;
        return -EINVAL;
}

static bool word_in(const char *w, const char *const *words) {
        if (!words)
                return true;
        for (; *words; words++)
                if (streq(*words, w))
                        return true;
        return false;
}

/* Printable ASCII except quotes, '\\', '$' and '%' (no quoting, variable or
 * specifier expansion to think about), blanks already split off. */
static bool token_is_plain(const char *s) {
        for (; *s; s++)
                if (*s <= 0x20 || *s >= 0x7f || strchr("\"'\\$%`;", *s))
                        return false;
        return true;
}

/* Absolute, no "." or ".." component, no "//": what systemd calls a
 * normalized path. */
static bool path_is_normal(const char *p) {
        if (p[0] != '/' || !token_is_plain(p) || strlen(p) >= 1024 || strstr(p, "//"))
                return false;
        for (const char *c = p; (c = strchr(c, '/')); c++) {
                const char *e = c + 1 + strcspn(c + 1, "/");
                size_t n = (size_t) (e - c - 1);

                if ((n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
                        return false;
        }
        return true;
}

/* Splits v on blanks into a NULL-terminated array of n words. */
static int split(const char *v, char ***ret, size_t *ret_n) {
        char **l = calloc(EXEC_PROPERTY_ENTRIES_MAX + 1, sizeof(char *));
        size_t n = 0;

        if (!l)
                return -ENOMEM;
        for (const char *p = v;;) {
                size_t k;

                p += strspn(p, " \t");
                if (!*p)
                        break;
                if (n >= EXEC_PROPERTY_ENTRIES_MAX) {
                        strv_free_local(l, n);
                        return -E2BIG;
                }
                k = strcspn(p, " \t");
                l[n] = strndup(p, k);
                if (!l[n]) {
                        strv_free_local(l, n);
                        return -ENOMEM;
                }
                n++;
                p += k;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

static int parse_caps(const char *name, ExecProperty *p, char *error, size_t size) {
        for (size_t i = 0; i < p->n; i++) {
                size_t j;

                for (j = 0; j < ELEMENTSOF(caps); j++)
                        if (strcasecmp(caps[j].name, p->strv[i]) == 0)
                                break;
                if (j == ELEMENTSOF(caps))
                        return error_buf_invalid(error, size, "%s: unknown capability \"%.40s\"", name, p->strv[i]);
                p->t |= UINT64_C(1) << caps[j].cap;
        }
        return 0;
}

static int parse_name_list(const char *name, ExecProperty *p, char *error, size_t size) {
        size_t first = 0;

        p->b = true;
        if (p->n > 0 && p->strv[0][0] == '~') {
                p->b = false;
                if (p->strv[0][1] == 0) {
                        free(p->strv[0]);
                        memmove(p->strv, p->strv + 1, p->n * sizeof(char *));
                        p->n--;
                } else
                        memmove(p->strv[0], p->strv[0] + 1, strlen(p->strv[0]));
        }
        if (p->n == 0)
                return error_buf_invalid(error, size, "%s: no names", name);
        for (size_t i = first; i < p->n; i++)
                for (const char *c = p->strv[i]; *c; c++)
                        if (!isalnum((unsigned char) *c) && !strchr("_@:-", *c))
                                return error_buf_invalid(error, size, "%s: \"%.40s\" is not a name", name, p->strv[i]);
        return 0;
}

static int parse_bind_paths(const char *name, ExecProperty *p, char *error, size_t size) {
        p->dest = calloc(p->n + 1, sizeof(char *));
        p->ignore = calloc(p->n + 1, sizeof(bool));
        p->recursive = calloc(p->n + 1, sizeof(bool));
        if (!p->dest || !p->ignore || !p->recursive)
                return -ENOMEM;
        for (size_t i = 0; i < p->n; i++) {
                char *src = p->strv[i], *dst, *opts;

                if (src[0] == '-') {
                        p->ignore[i] = true;
                        memmove(src, src + 1, strlen(src));
                }
                p->recursive[i] = true;
                dst = strchr(src, ':');
                if (dst) {
                        *dst++ = 0;
                        opts = strchr(dst, ':');
                        if (opts) {
                                *opts++ = 0;
                                if (streq(opts, "norbind"))
                                        p->recursive[i] = false;
                                else if (!streq(opts, "rbind"))
                                        return error_buf_invalid(error, size, "%s: unknown option \"%.20s\"", name, opts);
                        }
                }
                p->dest[i] = strdup(dst ? dst : src);
                if (!p->dest[i])
                        return -ENOMEM;
                if (!path_is_normal(src) || !path_is_normal(p->dest[i]))
                        return error_buf_invalid(error, size, "%s: \"%.80s\" is not SOURCE[:DEST[:rbind|norbind]] of absolute paths",
                                    name, src);
        }
        return 0;
}

static int parse_value(const ExecPropertyInfo *info, const char *v, ExecProperty *p, char *error, size_t size) {
        const char *name = info->name;
        char *end;
        int r;

        switch (info->type) {
        case EXEC_PROPERTY_BOOL:
                r = parse_bool(v);
                if (r < 0)
                        return error_buf_invalid(error, size, "%s: \"%.40s\" is not a boolean", name, v);
                p->b = r;
                return 0;
        case EXEC_PROPERTY_WORD:
                if (!word_in(v, info->words))
                        return error_buf_invalid(error, size, "%s: \"%.40s\" is not one of its values", name, v);
                p->s = strdup(v);
                return p->s ? 0 : -ENOMEM;
        case EXEC_PROPERTY_NAMESPACES:
                r = parse_bool(v);
                if (r < 0)
                        return error_buf_invalid(error, size, "%s: only yes or no are supported, not \"%.40s\"", name, v);
                p->t = r ? 0 : (uint64_t) (CLONE_NEWCGROUP | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWNS |
                                           CLONE_NEWPID | CLONE_NEWUSER | CLONE_NEWUTS);
                return 0;
        case EXEC_PROPERTY_UMASK:
                if (!*v || strspn(v, "01234567") != strlen(v) || strtoul(v, NULL, 8) > 0777)
                        return error_buf_invalid(error, size, "%s: \"%.40s\" is not an octal mode up to 0777", name, v);
                p->u = (uint32_t) strtoul(v, NULL, 8);
                return 0;
        case EXEC_PROPERTY_UINT:
                if (info->infinity && streq(v, "infinity")) {
                        p->t = UINT64_MAX;
                        return 0;
                }
                errno = 0;
                p->t = strtoull(v, &end, 10);
                if (!isdigit((unsigned char) v[0]) || *end || errno || p->t < info->min || p->t > info->max)
                        return error_buf_invalid(error, size, "%s: \"%.40s\" is not a number in %" PRIu64 "…%" PRIu64 "%s", name, v,
                                    info->min, info->max, info->infinity ? " or infinity" : "");
                return 0;
        case EXEC_PROPERTY_DEVICE: {
                const char *sp = strchr(v, ' ');
                const char *perm = sp ? sp + strspn(sp, " ") : "rwm";

                p->s = sp ? strndup(v, (size_t) (sp - v)) : strdup(v);
                p->perm = strdup(perm);
                if (!p->s || !p->perm)
                        return -ENOMEM;
                if (!*perm || strspn(perm, "rwm") != strlen(perm) ||
                    !(path_is_normal(p->s) || (strncmp(p->s, "char-", 5) == 0 && token_is_plain(p->s)) ||
                      (strncmp(p->s, "block-", 6) == 0 && token_is_plain(p->s))))
                        return error_buf_invalid(error, size, "%s: \"%.80s\" is not \"PATH [rwm]\"", name, v);
                return 0;
        }
        default:
                break;
        }

        /* The list types. */
        r = split(v, &p->strv, &p->n);
        if (r == -E2BIG)
                return error_buf_invalid(error, size, "%s: more than %d entries", name, EXEC_PROPERTY_ENTRIES_MAX);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n; i++)
                if (!token_is_plain(p->strv[i]))
                        return error_buf_invalid(error, size, "%s: \"%.40s\" has quotes, '$', '%%' or control characters",
                                    name, p->strv[i]);
        switch (info->type) {
        case EXEC_PROPERTY_PATHS:
                for (size_t i = 0; i < p->n; i++) {
                        const char *q = p->strv[i] + (p->strv[i][0] == '-');

                        if (!path_is_normal(q))
                                return error_buf_invalid(error, size, "%s: \"%.80s\" is not an absolute, normalized path",
                                            name, p->strv[i]);
                }
                return 0;
        case EXEC_PROPERTY_WORDS:
                if (p->n == 0)
                        return error_buf_invalid(error, size, "%s: empty", name);
                for (size_t i = 0; i < p->n; i++)
                        if (!word_in(p->strv[i], info->words))
                                return error_buf_invalid(error, size, "%s: \"%.40s\" is not one of its values", name, p->strv[i]);
                return 0;
        case EXEC_PROPERTY_CAPS:
                return parse_caps(name, p, error, size);
        case EXEC_PROPERTY_NAME_LIST:
                return parse_name_list(name, p, error, size);
        case EXEC_PROPERTY_BIND_PATHS:
                return parse_bind_paths(name, p, error, size);
        default:
                return -EINVAL;
        }
}

int exec_property_parse(const char *assignment, ExecProperty *ret, char *error, size_t error_size) {
        _cleanup_free_ char *name = NULL;
        const ExecPropertyInfo *info;
        ExecProperty p = {};
        size_t len;
        int r;

        if (!assignment || !ret)
                return error_buf_invalid(error, error_size, "no property");
        len = exec_property_name_length(assignment);
        if (assignment[len] != '=' || len == 0)
                return error_buf_invalid(error, error_size, "\"%.64s\" is not Name=value", assignment);
        if (strlen(assignment) > EXEC_PROPERTY_VALUE_MAX)
                return error_buf_invalid(error, error_size, "%.*s: longer than %d bytes", (int) MIN(len, 64), assignment,
                            EXEC_PROPERTY_VALUE_MAX);
        if (exec_property_name_is_reserved(assignment, len))
                return error_buf_invalid(error, error_size, "%.*s: the worker sets it, it cannot be configured",
                            (int) MIN(len, 64), assignment);
        name = strndup(assignment, len);
        if (!name)
                return -ENOMEM;
        info = exec_property_info(name);
        if (!info)
                return error_buf_invalid(error, error_size, "%.64s: not a property the worker can set on an executor unit", name);
        p.info = info;
        r = parse_value(info, assignment + len + 1, &p, error, error_size);
        if (r < 0) {
                exec_property_done(&p);
                return r;
        }
        *ret = p;
        return 0;
}
