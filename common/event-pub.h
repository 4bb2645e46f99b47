/* Event endpoint, publishing side: an nng pub0 socket bound to a URL.
 *
 * Every event carries the publisher's epoch — chosen at creation from the
 * realtime clock in microseconds, so a restarted publisher has a new, larger
 * one — and a sequence number that grows by one per event (the first event
 * is 1).  A snapshot reply includes event_pub_epoch() and event_pub_seq(),
 * so that a subscriber can line its stream up with the snapshot
 * (event_sub_set_position()).
 *
 * pub never blocks: a subscriber that cannot keep up loses events and sees
 * a gap.  Threading: loop thread only (no callbacks, no loop needed). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "macro.h"
#include "tls.h"

typedef struct EventPub EventPub;

#define EVENT_PUB_DEFAULT_BACKLOG 1024

/* Listens on url.  max_subscriber_backlog: messages queued per subscriber
 * before pub drops for it (NNG_OPT_SENDBUF, at most 8192); 0 means
 * EVENT_PUB_DEFAULT_BACKLOG (nng's own default, 16, loses events in any
 * burst).  tls: for a tls+tcp:// URL, as RpcServerConfig's (subscribers
 * must present a certificate signed by the CA); may be NULL otherwise. */
int event_pub_new(const char *url, int max_subscriber_backlog, const TlsSettings *tls, EventPub **ret);
EventPub *event_pub_free(EventPub *p);

/* Stamps env->epoch and env->seq (the next number), encodes and sends.  If
 * encoding fails nothing is consumed; if sending fails the number is used
 * up anyway (subscribers see a gap and resynchronise). */
int event_pub_send(EventPub *p, Envelope *env);

uint64_t event_pub_epoch(const EventPub *p);
/* The seq of the last event sent; 0 before the first. */
uint64_t event_pub_seq(const EventPub *p);
/* Connected subscribers right now (maintained from nng's pipe callbacks). */
unsigned event_pub_subscribers(const EventPub *p);

DEFINE_TRIVIAL_CLEANUP_FUNC(EventPub *, event_pub_free);
