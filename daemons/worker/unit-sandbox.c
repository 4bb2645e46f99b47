/* See unit-sandbox.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "sha256.h"
#include "unit-properties.h"
#include "unit-sandbox.h"

/* Hardening every executor gets (systemd.exec(5)).  DevicePolicy=closed
 * rather than PrivateDevices=, so that executor_properties can add a
 * DeviceAllow= for a device a job needs. */
static const char *const builtin[] = {
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "ProtectHome=read-only",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "ProtectClock=yes",
        "ProtectHostname=yes",
        "ProtectProc=invisible",
        "PrivateMounts=yes",
        "RestrictSUIDSGID=yes",
        "RestrictRealtime=yes",
        "RestrictNamespaces=yes",
        "LockPersonality=yes",
        "CapabilityBoundingSet=",
        ("SystemCallFilter=" EXECUTOR_SYSCALL_FILTER),
        "SystemCallArchitectures=native",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
        "DevicePolicy=closed",
        "UMask=0077",
        "CPUAccounting=yes",
};

bool executor_unit_user_is_dynamic(const ExecutorUnitSpec *spec, bool system_bus) {
        return system_bus && spec->user && streq(spec->user, EXECUTOR_USER_DYNAMIC);
}

int executor_unit_dynamic_user(const char *app_id, char *buf, size_t size) {
        char hex[SHA256_HEX_SIZE];
        int n;

        /* 32: what useradd and systemd accept everywhere. */
        if (strlen("spark-") + strlen(app_id) <= 32)
                n = snprintf(buf, size, "spark-%s", app_id);
        else
                n = snprintf(buf, size, "spark-%.26s", sha256_hex(app_id, strlen(app_id), hex));
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

int executor_unit_sandbox(const ExecutorUnitSpec *spec, bool system_bus, const char *work_dir, char ***ret) {
        _cleanup_(unit_strv_freep) char **l = NULL;
        size_t n = 0;

        l = calloc(ELEMENTSOF(builtin) + spec->n_hidden_paths + 3, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(builtin); i++)
                if (unit_strv_push_printf(l, &n, "%s", builtin[i]) < 0)
                        return -ENOMEM;
        if (unit_strv_push_printf(l, &n, "TasksMax=%d", EXECUTOR_TASKS_MAX) < 0)
                return -ENOMEM;
        /* ProtectSystem=strict: the work dir is the one place it writes. */
        if (!executor_unit_user_is_dynamic(spec, system_bus) &&
            unit_strv_push_printf(l, &n, "ReadWritePaths=%s", work_dir) < 0)
                return -ENOMEM;
        /* "-": a path that does not exist (yet) is no error. */
        for (size_t i = 0; i < spec->n_hidden_paths; i++)
                if (unit_strv_push_printf(l, &n, "InaccessiblePaths=-%s", spec->hidden_paths[i]) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

static int append_strv_variant(sd_bus_message *m, char **l, size_t n) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "s");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append_basic(m, 's', l[i]);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

static const char *const signatures[_EXEC_PROPERTY_TYPE_MAX] = {
        [EXEC_PROPERTY_BOOL] = "b",       [EXEC_PROPERTY_WORD] = "s",
        [EXEC_PROPERTY_PATHS] = "as",     [EXEC_PROPERTY_WORDS] = "as",
        [EXEC_PROPERTY_NAME_LIST] = "(bas)", [EXEC_PROPERTY_BIND_PATHS] = "a(ssbt)",
        [EXEC_PROPERTY_DEVICE] = "a(ss)", [EXEC_PROPERTY_CAPS] = "t",
        [EXEC_PROPERTY_NAMESPACES] = "t", [EXEC_PROPERTY_UINT] = "t",
        [EXEC_PROPERTY_UMASK] = "u",
};

static int append_value(sd_bus_message *m, const ExecProperty *p) {
        int r;

        switch (p->info->type) {
        case EXEC_PROPERTY_BOOL:
                return sd_bus_message_append(m, "b", (int) p->b);
        case EXEC_PROPERTY_WORD:
                return sd_bus_message_append(m, "s", p->s);
        case EXEC_PROPERTY_PATHS:
        case EXEC_PROPERTY_WORDS:
                return append_strv_variant(m, p->strv, p->n);
        case EXEC_PROPERTY_NAME_LIST:
                r = sd_bus_message_open_container(m, 'r', "bas");
                if (r >= 0)
                        r = sd_bus_message_append(m, "b", (int) p->b);
                if (r >= 0)
                        r = append_strv_variant(m, p->strv, p->n);
                return r < 0 ? r : sd_bus_message_close_container(m);
        case EXEC_PROPERTY_BIND_PATHS:
                r = sd_bus_message_open_container(m, 'a', "(ssbt)");
                for (size_t i = 0; r >= 0 && i < p->n; i++)
                        r = sd_bus_message_append(m, "(ssbt)", p->strv[i], p->dest[i], (int) p->ignore[i],
                                                  (uint64_t) (p->recursive[i] ? 16384 /* MS_REC */ : 0));
                return r < 0 ? r : sd_bus_message_close_container(m);
        case EXEC_PROPERTY_DEVICE:
                return sd_bus_message_append(m, "a(ss)", 1, p->s, p->perm);
        case EXEC_PROPERTY_CAPS:
        case EXEC_PROPERTY_NAMESPACES:
        case EXEC_PROPERTY_UINT:
                return sd_bus_message_append(m, "t", p->t);
        case EXEC_PROPERTY_UMASK:
                return sd_bus_message_append(m, "u", p->u);
        default:
                return -EINVAL;
        }
}

int exec_property_append(sd_bus_message *m, const ExecProperty *p) {
        int r;

        r = unit_property_open(m, p->info->name, signatures[p->info->type]);
        if (r < 0)
                return r;
        r = append_value(m, p);
        if (r < 0)
                return r;
        return unit_property_close(m);
}

static int append_assignment(sd_bus_message *m, const char *assignment) {
        ExecProperty p = {};
        int r;

        r = exec_property_parse(assignment, &p, NULL, 0);
        if (r < 0)
                return r;
        r = exec_property_append(m, &p);
        exec_property_done(&p);
        return r;
}

static bool configured(const ExecutorUnitSpec *spec, const char *assignment) {
        size_t len = exec_property_name_length(assignment);

        for (size_t i = 0; i < spec->n_properties; i++)
                if (exec_property_name_length(spec->properties[i]) == len &&
                    strncmp(spec->properties[i], assignment, len) == 0)
                        return true;
        return false;
}

int executor_unit_append_sandbox(sd_bus_message *m, const ExecutorUnitSpec *spec, bool system_bus,
                                 const char *work_dir) {
        _cleanup_(unit_strv_freep) char **l = NULL;
        int r;

        r = executor_unit_sandbox(spec, system_bus, work_dir, &l);
        if (r < 0)
                return r;
        for (char **a = l; *a; a++) {
                if (configured(spec, *a))
                        continue;
                r = append_assignment(m, *a);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < spec->n_properties; i++) {
                r = append_assignment(m, spec->properties[i]);
                if (r < 0)
                        return r;
        }
        /* after executor_properties, so that none of them can drop these:
         * the devices of its named resources, and nothing more, under the
         * sandbox's DevicePolicy= */
        for (size_t i = 0; i < spec->n_devices; i++) {
                r = sd_bus_message_append(m, "(sv)", "DeviceAllow", "a(ss)", 1, spec->devices[i], "rw");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* StateDirectory= is relative to /var/lib: WORK_DIR/<app>/<exec> without it. */
static int state_directory(const ExecutorUnitSpec *spec, char *buf, size_t size) {
        char dir[4096];
        size_t root = strlen(EXECUTOR_STATE_ROOT);
        int r;

        r = executor_unit_work_dir(spec, dir, sizeof(dir));
        if (r < 0)
                return r;
        if (strncmp(dir, EXECUTOR_STATE_ROOT, root) != 0)
                return -EINVAL;
        r = snprintf(buf, size, "%s", dir + root);
        return r < 0 || (size_t) r >= size ? -ENOBUFS : 0;
}

int executor_unit_append_user(sd_bus_message *m, const ExecutorUnitSpec *spec, bool system_bus) {
        char user[64], state[4096];
        int r;

        if (!system_bus)
                return 0;
        if (!executor_unit_user_is_dynamic(spec, system_bus))
                return sd_bus_message_append(m, "(sv)", "User", "s", spec->user);

        r = executor_unit_dynamic_user(spec->app_id, user, sizeof(user));
        if (r < 0)
                return r;
        r = state_directory(spec, state, sizeof(state));
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)", "User", "s", user);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)", "DynamicUser", "b", 1);
        if (r < 0)
                return r;
        /* systemd makes it, owned by the dynamic user, under
         * /var/lib/private, where no other app's user can reach it. */
        return sd_bus_message_append(m, "(sv)", "StateDirectory", "as", 1, state);
}
