/* Seed messages from the schema's descriptors; see fuzz-messages.h. */
#include "executor-secret.h"
#include "fuzz-messages.h"
#include "fuzz-util.h"
#include "macro.h"

static const char *string_for(const char *field, const FuzzIds *ids) {
        static const struct {
                const char *field, *value;
        } table[] = {
                { "host", "host-1" },
                { "name", "fuzz" },
                { "master_id", "master-1" },
                { "symbol", "square" },
                { "command", "echo {}" },
                { "hash", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
                { "library_hash", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
                { "request_id", "req-1" },
                { "key", "FOO" },
                { "value", "bar" },
                { "preferred_hosts", "host-1" },
                { "errors", "boom" },
                { "error", "boom" },
        };

        if (streq(field, "app_id"))
                return ids->app_id;
        if (streq(field, "worker_id"))
                return ids->worker_id;
        if (streq(field, "job_id"))
                return ids->job_id;
        if (strstr(field, "endpoint") || strstr(field, "url") || strstr(field, "events"))
                return ids->endpoint;
        if (streq(field, "unit"))
                return "spark-executor-fuzz.service";
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(field, table[i].field))
                        return table[i].value;
        return "fuzz";
}

static int64_t int_for(const char *field) {
        static const struct {
                const char *field;
                int64_t value;
        } table[] = {
                { "cores", 2 },         { "cores_per_executor", 1 }, { "max_cores", 4 },
                { "memory_mb", 512 },   { "executor_memory_mb", 256 }, { "executor_id", 1 },
                { "total", 2 },         { "index", 0 },               { "attempt", 1 },
                { "count", 3 },         { "from_index", 0 },          { "max", 10 },
                { "free_slots", 2 },    { "heartbeat_ms", 1000 },     { "pid", 4242 },
                { "exit_code", 0 },     { "seq", 1 },                 { "epoch", 1 },
                { "code", -22 },        { "tasks", 3 },               { "prefetch", 1 },
                { "max_result_bytes", 1 << 20 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(field, table[i].field))
                        return table[i].value;
        return 1;
}

static void *message_new(const ProtobufCMessageDescriptor *d, const FuzzIds *ids, unsigned depth);

static size_t element_size(ProtobufCType t) {
        switch (t) {
        case PROTOBUF_C_TYPE_INT32:
        case PROTOBUF_C_TYPE_SINT32:
        case PROTOBUF_C_TYPE_SFIXED32:
        case PROTOBUF_C_TYPE_UINT32:
        case PROTOBUF_C_TYPE_FIXED32:
        case PROTOBUF_C_TYPE_ENUM:
                return 4;
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
                return 8;
        case PROTOBUF_C_TYPE_BOOL:
                return sizeof(protobuf_c_boolean);
        case PROTOBUF_C_TYPE_FLOAT:
                return sizeof(float);
        case PROTOBUF_C_TYPE_DOUBLE:
                return sizeof(double);
        case PROTOBUF_C_TYPE_STRING:
        case PROTOBUF_C_TYPE_MESSAGE:
                return sizeof(void *);
        case PROTOBUF_C_TYPE_BYTES:
                return sizeof(ProtobufCBinaryData);
        }
        return 8;
}

/* Stores the value of field f at p (one element). */
static void value_set(const ProtobufCFieldDescriptor *f, void *p, const FuzzIds *ids, unsigned depth) {
        int64_t v = int_for(f->name);

        switch (f->type) {
        case PROTOBUF_C_TYPE_INT32:
        case PROTOBUF_C_TYPE_SINT32:
        case PROTOBUF_C_TYPE_SFIXED32:
        case PROTOBUF_C_TYPE_UINT32:
        case PROTOBUF_C_TYPE_FIXED32:
                *(int32_t *) p = (int32_t) v;
                break;
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
                *(int64_t *) p = v;
                break;
        case PROTOBUF_C_TYPE_BOOL:
                *(protobuf_c_boolean *) p = 0;
                break;
        case PROTOBUF_C_TYPE_ENUM: {
                /* the first value after *_UNKNOWN; a state: RUNNING where there is one */
                const ProtobufCEnumDescriptor *ed = f->descriptor;
                const ProtobufCEnumValue *run = protobuf_c_enum_descriptor_get_value_by_name(ed, "EXECUTOR_RUNNING");
                *(int *) p = run ? run->value : (ed->n_values > 1 ? ed->values[1].value : 0);
                break;
        }
        case PROTOBUF_C_TYPE_FLOAT:
                *(float *) p = 1;
                break;
        case PROTOBUF_C_TYPE_DOUBLE:
                *(double *) p = 1;
                break;
        case PROTOBUF_C_TYPE_STRING:
                *(char **) p = strdup(string_for(f->name, ids));
                if (!*(char **) p)
                        fuzz_fail("out of memory");
                break;
        case PROTOBUF_C_TYPE_BYTES: {
                ProtobufCBinaryData *b = p;
                if (streq(f->name, "executor_key")) {
                        b->data = malloc(EXECUTOR_KEY_SIZE);
                        if (b->data)
                                fuzz_executor_key(b->data);
                        b->len = EXECUTOR_KEY_SIZE;
                } else {
                        b->data = (uint8_t *) strdup("4");
                        b->len = 1;
                }
                if (!b->data)
                        fuzz_fail("out of memory");
                break;
        }
        case PROTOBUF_C_TYPE_MESSAGE:
                *(void **) p = message_new(f->descriptor, ids, depth + 1);
                break;
        }
}

static void *message_new(const ProtobufCMessageDescriptor *d, const FuzzIds *ids, unsigned depth) {
        ProtobufCMessage *m = calloc(1, d->sizeof_message);

        if (!m)
                fuzz_fail("out of memory");
        d->message_init(m);
        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                uint8_t *base = (uint8_t *) m;

                if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
                        continue; /* the envelope's body: set by the caller */
                if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth > 4)
                        continue;
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        void *arr = calloc(1, element_size(f->type));
                        if (!arr)
                                fuzz_fail("out of memory");
                        value_set(f, arr, ids, depth);
                        *(size_t *) (base + f->quantifier_offset) = 1;
                        *(void **) (base + f->offset) = arr;
                } else {
                        value_set(f, base + f->offset, ids, depth);
                        if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
                                *(protobuf_c_boolean *) (base + f->quantifier_offset) = 1;
                }
        }
        return m;
}

void fuzz_executor_key(uint8_t key[static 32]) {
        memset(key, FUZZ_EXECUTOR_KEY_BYTE, EXECUTOR_KEY_SIZE);
}

static void sign(ProtobufCBinaryData *secret, const char *app_id, int executor_id) {
        uint8_t key[EXECUTOR_KEY_SIZE];

        fuzz_executor_key(key);
        free(secret->data);
        secret->data = malloc(EXECUTOR_SECRET_SIZE);
        if (!secret->data)
                fuzz_fail("out of memory");
        secret->len = EXECUTOR_SECRET_SIZE;
        if (executor_secret_compute(key, app_id, executor_id, secret->data) < 0)
                memset(secret->data, 0, EXECUTOR_SECRET_SIZE);
}

void fuzz_sign_executor(Envelope *env) {
        if (env->body_case == SPARK__ENVELOPE__BODY_REGISTER_EXECUTOR)
                sign(&env->register_executor->secret, env->register_executor->app_id,
                     env->register_executor->executor_id);
        else if (env->body_case == SPARK__ENVELOPE__BODY_POLL)
                sign(&env->poll->secret, env->poll->app_id, env->poll->executor_id);
}

Envelope *fuzz_envelope_new(int body, const FuzzIds *ids) {
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(&spark__envelope__descriptor,
                                                                                    (unsigned) body);
        Envelope *env;

        if (!f || !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) || f->type != PROTOBUF_C_TYPE_MESSAGE)
                return NULL;
        env = calloc(1, sizeof(*env));
        if (!env)
                fuzz_fail("out of memory");
        spark__envelope__init(env);
        env->version = SPARK_PROTOCOL_VERSION;
        *(uint32_t *) ((uint8_t *) env + f->quantifier_offset) = f->id;
        *(void **) ((uint8_t *) env + f->offset) = message_new(f->descriptor, ids, 1);
        return env;
}

size_t fuzz_envelope_bodies(int *ret, size_t max) {
        const ProtobufCMessageDescriptor *d = &spark__envelope__descriptor;
        size_t n = 0;

        for (unsigned i = 0; i < d->n_fields && n < max; i++)
                if (d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
                        ret[n++] = (int) d->fields[i].id;
        return n;
}

void fuzz_repeated_clear(ProtobufCMessage *m, const char *field) {
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor, field);
        uint8_t *base = (uint8_t *) m;
        size_t *n;
        void **arr;

        FUZZ_ASSERT(f && f->label == PROTOBUF_C_LABEL_REPEATED);
        n = (size_t *) (base + f->quantifier_offset);
        arr = (void **) (base + f->offset);
        for (size_t i = 0; i < *n; i++) {
                if (f->type == PROTOBUF_C_TYPE_MESSAGE)
                        protobuf_c_message_free_unpacked(((ProtobufCMessage **) *arr)[i], NULL);
                else if (f->type == PROTOBUF_C_TYPE_STRING)
                        free(((char **) *arr)[i]);
                else if (f->type == PROTOBUF_C_TYPE_BYTES)
                        free(((ProtobufCBinaryData *) *arr)[i].data);
        }
        free(*arr);
        *arr = NULL;
        *n = 0;
}

Envelope *fuzz_seed_message(int body, const FuzzIds *ids) {
        Envelope *env = fuzz_envelope_new(body, ids);

        FUZZ_ASSERT(env);
        return env;
}

void fuzz_seed_conversation(const char *dir, const char *name, Envelope **msgs, size_t n) {
        for (size_t i = 0; i < n; i++)
                fuzz_sign_executor(msgs[i]);
        fuzz_write_seed(dir, name, msgs, n);
        for (size_t i = 0; i < n; i++)
                envelope_free(msgs[i]);
}

void fuzz_seed_each_body(const char *dir, const int *bodies, size_t n_bodies, const FuzzIds *ids) {
        for (size_t i = 0; i < n_bodies; i++) {
                Envelope *env = fuzz_seed_message(bodies[i], ids);
                char name[64];

                snprintf(name, sizeof(name), "one-%s", envelope_body_name(env));
                fuzz_seed_conversation(dir, name, &env, 1);
        }
}
