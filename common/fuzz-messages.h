/* Plausible, valid messages of every body type, built through protobuf-c's
 * descriptors, for the seed corpora of the fuzz targets.  Every field gets a
 * value that passes the daemons' checks (ids of the given forms, endpoints,
 * positive counts), repeated fields one element; a target then adjusts the
 * few fields its conversation needs. */
#pragma once

#include "codec.h"

/* The ids in the daemon targets' seeds.  The driver target runs as
 * application FUZZ_APP_ID and the worker target as worker FUZZ_WORKER_ID,
 * so that their seeds get past the checks of whose request it is. */
#define FUZZ_APP_ID "app-20261129172233-0001"
#define FUZZ_WORKER_ID "worker-20261129172233-host-1-7078"
#define FUZZ_JOB_ID "job-0001"
/* The FuzzIds of those, with url for every endpoint and URL field. */
#define FUZZ_SEED_IDS(url) { .app_id = FUZZ_APP_ID, .worker_id = FUZZ_WORKER_ID, .job_id = FUZZ_JOB_ID, .endpoint = (url) }

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

/* The seeds of a daemon target (`make fuzz-seeds`).  fuzz_seed_message() is
 * fuzz_envelope_new() that aborts on a body that is not one;
 * fuzz_seed_conversation() writes DIR/NAME, the messages joined by
 * FUZZ_SEPARATOR with their executors' secrets set (fuzz_sign_executor()),
 * and frees them; fuzz_seed_each_body() writes a seed of one message for
 * each of bodies, named "one-<BODY NAME>". */
Envelope *fuzz_seed_message(int body, const FuzzIds *ids);
void fuzz_seed_conversation(const char *dir, const char *name, Envelope **msgs, size_t n);
void fuzz_seed_each_body(const char *dir, const int *bodies, size_t n_bodies, const FuzzIds *ids);
