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

/* Empties the repeated field named field of m (freeing its elements). */
void fuzz_repeated_clear(ProtobufCMessage *m, const char *field);

/* Every body field number of the envelope, in schema order; returns how many. */
size_t fuzz_envelope_bodies(int *ret, size_t max);
