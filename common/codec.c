/* Envelope encode/decode with the checks protobuf-c leaves to us. */
#include <stdarg.h>

#include "macro.h"
#include "codec.h"

/* protobuf-c 1.4 takes a field number 0 (invalid in protobuf) for an unknown
 * field when its tag is written in more than one byte, and packs it again in
 * the one byte it refuses: such a message would not survive a resend.  Refuse
 * it anywhere in the tree, as it does the short form. */
static bool message_is_well_formed(const ProtobufCMessage *m, unsigned depth) {
        const ProtobufCMessageDescriptor *d = m->descriptor;

        if (depth > 32)
                return false;
        for (unsigned i = 0; i < m->n_unknown_fields; i++)
                if (m->unknown_fields[i].tag == 0)
                        return false;
        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                const uint8_t *base = (const uint8_t *) m;

                if (f->type != PROTOBUF_C_TYPE_MESSAGE)
                        continue;
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        size_t n = *(const size_t *) (base + f->quantifier_offset);
                        ProtobufCMessage *const *sub = *(ProtobufCMessage *const *const *) (base + f->offset);
                        for (size_t k = 0; k < n; k++)
                                if (!message_is_well_formed(sub[k], depth + 1))
                                        return false;
                } else {
                        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *) (base + f->offset);
                        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                            *(const uint32_t *) (base + f->quantifier_offset) != f->id)
                                continue;
                        if (sub && !message_is_well_formed(sub, depth + 1))
                                return false;
                }
        }
        return true;
}

int envelope_decode(const void *buf, size_t len, size_t max_bytes, Envelope **ret) {
        Envelope *env;

        if (!buf && len > 0)
                return -EINVAL;
        if (len > max_bytes)
                return -EMSGSIZE;

        /* protobuf-c bounds-checks every length prefix against len and
         * returns NULL on anything malformed or truncated. */
        env = spark__envelope__unpack(NULL, len, buf);
        if (!env)
                return -EBADMSG;
        if (!message_is_well_formed(&env->base, 0)) {
                spark__envelope__free_unpacked(env, NULL);
                return -EBADMSG;
        }

        if (env->version != SPARK_PROTOCOL_VERSION) {
                spark__envelope__free_unpacked(env, NULL);
                return -EPROTONOSUPPORT;
        }

        /* A body number from a newer peer is kept as an unknown field and
         * leaves body_case unset. */
        if (env->body_case == SPARK__ENVELOPE__BODY__NOT_SET) {
                spark__envelope__free_unpacked(env, NULL);
                return -ENOMSG;
        }

        *ret = env;
        return 0;
}

int envelope_encode(Envelope *env, void **ret_buf, size_t *ret_len) {
        size_t len;
        uint8_t *buf;

        if (!env || env->body_case == SPARK__ENVELOPE__BODY__NOT_SET)
                return -EINVAL;

        env->version = SPARK_PROTOCOL_VERSION;
        len = spark__envelope__get_packed_size(env);
        buf = malloc(len > 0 ? len : 1);
        if (!buf)
                return -ENOMEM;
        if (spark__envelope__pack(env, buf) != len) {
                free(buf);
                return -EIO;
        }

        *ret_buf = buf;
        *ret_len = len;
        return 0;
}

Envelope *envelope_free(Envelope *env) {
        if (env)
                spark__envelope__free_unpacked(env, NULL);
        return NULL;
}

const char *envelope_body_name(const Envelope *env) {
        const ProtobufCFieldDescriptor *f;

        if (!env)
                return "(null)";
        f = protobuf_c_message_descriptor_get_field(&spark__envelope__descriptor, env->body_case);
        return f ? f->name : "unknown";
}

void error_envelope_init(ErrorEnvelope *e, int code, const char *fmt, ...) {
        va_list ap;

        *e = (ErrorEnvelope) {
                .env = ENVELOPE_INIT,
                .error = SPARK__ERROR__INIT,
        };
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        e->error.code = code < 0 ? code : -code;
        e->error.message = e->message;
        ENVELOPE_SET(&e->env, ERROR, error, &e->error);
}

bool wire_name_is_valid(const char *s, bool allow_empty) {
        size_t n;

        if (!s)
                return allow_empty;
        n = strlen(s);
        if (n == 0)
                return allow_empty;
        if (n > SPARK_MAX_NAME_LEN)
                return false;
        if (strstr(s, ".."))
                return false;
        for (const char *p = s; *p; p++) {
                char c = *p;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == ':' || c == '-'))
                        return false;
        }
        return true;
}
