/* A list of endpoints, comma-separated, as cluster.master holds the masters
 * of a cluster (docs/ha.md): the daemons dial one of them at a time and move
 * to another when it does not lead. */
#pragma once

#include <stddef.h>

#define ENDPOINT_LIST_MAX 8
#define ENDPOINT_LIST_URL_MAX 512

typedef struct EndpointList {
        char *urls[ENDPOINT_LIST_MAX];
        size_t n;
} EndpointList;

/* Splits s (already checked by config_endpoint_list_check()); -EINVAL if it
 * is empty, holds an empty element or more than ENDPOINT_LIST_MAX. */
int endpoint_list_parse(const char *s, EndpointList *ret);
void endpoint_list_done(EndpointList *l);
/* The index of url in l, else -ENOENT. */
int endpoint_list_find(const EndpointList *l, const char *url);

/* A standby master's answer to every request: an Error with code -EREMCHG
 * and the message "standby, leader is URL" (or "standby, no leader elected
 * yet"). */
#define STANDBY_LEADER_PREFIX "standby, leader is "

/* For an Error answer (code, message): the leader's URL a standby named,
 * copied into buf; -EREMCHG if a standby answered without naming one;
 * -ENOENT if it is not a standby's answer at all. */
int standby_reply_leader(int code, const char *message, char *buf, size_t size);
