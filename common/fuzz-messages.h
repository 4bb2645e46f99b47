/* Plausible, valid messages of every body type, built through protobuf-c's
 * descriptors, for the seed corpora of the fuzz targets.  Every field gets a
 * value that passes the daemons' checks (ids of the given forms, endpoints,
 * positive counts), repeated fields one element; a target then adjusts the
 * few fields its conversation needs. */
#pragma once

#include "codec.h"

typedef struct FuzzIds {
        const char *app_id;
        const char *worker_id;
        const char *job_id;
        const char *endpoint;   /* every endpoint and URL field */
} FuzzIds;

/* A filled envelope with the body of field number body (a
 * SPARK__ENVELOPE__BODY_* value); free with envelope_free(). NULL if body
 * is not a body field. */
Envelope *fuzz_envelope_new(int body, const FuzzIds *ids);

/* Every executor_key field of a seed holds EXECUTOR_KEY_SIZE bytes of this;
 * a target that checks executor secrets uses the same key. */
#define FUZZ_EXECUTOR_KEY_BYTE 0x5a
void fuzz_executor_key(uint8_t key[static 32]);

/* Sets the secret of a RegisterExecutor or Poll envelope to the one its app
 * and executor ids have under the fuzz key (nothing for other bodies). */
void fuzz_sign_executor(Envelope *env);

/* Empties the repeated field named field of m (freeing its elements). */
void fuzz_repeated_clear(ProtobufCMessage *m, const char *field);

/* Every body field number of the envelope, in schema order; returns how many. */
size_t fuzz_envelope_bodies(int *ret, size_t max);
