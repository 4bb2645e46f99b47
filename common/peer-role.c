/* See peer-role.h. */
#include <stdio.h>
#include <string.h>

#include "peer-role.h"

static const char *const role_names[_PEER_ROLE_MAX] = {
        [PEER_ROLE_MASTER] = "master",
        [PEER_ROLE_WORKER] = "worker",
        [PEER_ROLE_DRIVER] = "driver",
        [PEER_ROLE_CLIENT] = "client",
        [PEER_ROLE_ADMIN] = "admin",
};

const char *peer_role_to_string(PeerRole r) {
        if (r < 0 || r >= _PEER_ROLE_MAX)
                return NULL;
        return role_names[r];
}

PeerRole peer_role_from_string(const char *s) {
        if (!s)
                return _PEER_ROLE_INVALID;
        for (int i = 0; i < _PEER_ROLE_MAX; i++)
                if (strcmp(role_names[i], s) == 0)
                        return (PeerRole) i;
        return _PEER_ROLE_INVALID;
}

const char *peer_roles_to_string(uint32_t mask, char *buf, size_t size) {
        unsigned n = 0, total = 0, seen = 0;
        size_t o = 0;

        if (!buf || size == 0)
                return NULL;
        buf[0] = '\0';
        for (int i = 0; i < _PEER_ROLE_MAX; i++)
                if (mask & PEER_ROLE_BIT(i))
                        total++;
        for (int i = 0; i < _PEER_ROLE_MAX && o < size; i++) {
                if (!(mask & PEER_ROLE_BIT(i)))
                        continue;
                seen++;
                o += (size_t) snprintf(buf + o, size - o, "%s%s", n == 0 ? "" : seen == total ? " or " : ", ",
                                       role_names[i]);
                n++;
        }
        if (n == 0)
                snprintf(buf, size, "(none)");
        return buf;
}
