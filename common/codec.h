/* The one codec: every message on every socket is a Spark__Envelope
 * (proto/spark.proto), packed by protobuf-c.  This layer adds what protobuf
 * does not check for us: a size limit, the protocol version, a body that we
 * know, and bounds on the strings and counts that the daemons index by. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "spark.pb-c.h"

#define SPARK_PROTOCOL_VERSION 1u

/* Default receive limit for control-plane sockets; the driver raises it for
 * job submission (shared objects, inputs) up to max_result_mb. */
#define SPARK_MAX_MESSAGE_BYTES (16u * 1024u * 1024u)

/* Longest id, host or unit name we accept from the network. */
#define SPARK_MAX_NAME_LEN 255u

typedef Spark__Envelope Envelope;

/* Decodes one message.  Returns 0 and the envelope (free with
 * envelope_free()), or:
 *   -EMSGSIZE         len > max_bytes
 *   -EBADMSG          not a well-formed envelope
 *   -EPROTONOSUPPORT  a protocol version we do not speak
 *   -ENOMSG           no body, or a body type this build does not know
 * The caller answers each of these with an Error and changes nothing. */
int envelope_decode(const void *buf, size_t len, size_t max_bytes, Envelope **ret);

/* Packs env (its version is set to SPARK_PROTOCOL_VERSION) into a new
 * malloc()ed buffer. */
int envelope_encode(Envelope *env, void **ret_buf, size_t *ret_len);

Envelope *envelope_free(Envelope *env);

/* Name of the envelope's body type, e.g. "register_worker", for logs. */
const char *envelope_body_name(const Envelope *env);

/* Builds a stack envelope around one body.  Usage:
 *     Spark__Heartbeat hb = SPARK__HEARTBEAT__INIT;
 *     Envelope env = ENVELOPE_INIT;
 *     ENVELOPE_SET(&env, HEARTBEAT, heartbeat, &hb);            */
#define ENVELOPE_INIT SPARK__ENVELOPE__INIT
#define ENVELOPE_SET(env, CASE, field, ptr)                         \
        do {                                                        \
                (env)->version = SPARK_PROTOCOL_VERSION;            \
                (env)->body_case = SPARK__ENVELOPE__BODY_##CASE;    \
                (env)->field = (ptr);                               \
        } while (0)

/* Builds an Error envelope (code is a negative errno). The message is copied
 * into the caller-provided storage so the envelope needs no freeing. */
typedef struct ErrorEnvelope {
        Envelope env;
        Spark__Error error;
        char message[512];
} ErrorEnvelope;

void error_envelope_init(ErrorEnvelope *e, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Validates a name taken from the network: non-empty (unless allow_empty),
 * at most SPARK_MAX_NAME_LEN bytes, only [A-Za-z0-9._:-] — no '/', no
 * spaces, no "..", nothing that could escape a unit name or a path. */
bool wire_name_is_valid(const char *s, bool allow_empty);

static inline void envelope_freep(Envelope **e) {
        envelope_free(*e);
}
#define _cleanup_envelope_ __attribute__((cleanup(envelope_freep)))
