/* The address peers should dial, derived from the address we listen on. */
#pragma once

/* "tcp://0.0.0.0:7081" + "node-1" → "tcp://node-1:7081"; a listen address
 * with a concrete host, and ipc:// paths, are returned as they are.  host
 * NULL or "" means this machine's host name. */
int endpoint_advertise(const char *listen, const char *host, char **ret);

/* The port of a tcp:// or tls+tcp:// endpoint, 0 for ipc://. */
unsigned endpoint_port(const char *url);

/* This machine's host name (advertise_host "" means this). */
int host_name(char *buf, size_t size);
