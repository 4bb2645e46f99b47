/* Roles of the cluster's certificates (docs/security.md): the single OU of
 * a certificate's subject, set by spark-tls when it makes one.  A TLS
 * listener learns a peer's role from a signed nonce (peer-proof.h); on a
 * plaintext listener there is no role and every request is allowed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef enum PeerRole {
        PEER_ROLE_MASTER,
        PEER_ROLE_WORKER,
        PEER_ROLE_DRIVER,
        PEER_ROLE_CLIENT,
        PEER_ROLE_ADMIN,
        _PEER_ROLE_MAX,
        _PEER_ROLE_INVALID = -EINVAL,
} PeerRole;

/* Sets of roles, as the policies of the daemons state them. */
#define PEER_ROLE_BIT(r) (UINT32_C(1) << (r))
#define PEER_ROLES_NONE  UINT32_C(0) /* no role needed: no proof asked */
#define PEER_ROLES_ANY   ((UINT32_C(1) << _PEER_ROLE_MAX) - 1)

/* The longest subject kept ("O=spark-deploy, OU=client, CN=alice"). */
#define PEER_SUBJECT_MAX 256

/* Who sent a request.  tls false: a plaintext listener, no role (subject
 * empty); else the role and subject its proof established. */
typedef struct PeerIdentity {
        bool tls;
        PeerRole role;
        char subject[PEER_SUBJECT_MAX];
} PeerIdentity;

const char *peer_role_to_string(PeerRole r);
PeerRole peer_role_from_string(const char *s);
/* The roles in mask as "admin", "client or admin", …; buf of size >= 64. */
const char *peer_roles_to_string(uint32_t mask, char *buf, size_t size);
