/* The exit guard: a process whose cleanup hangs still ends, with the
 * status it meant to exit with.  On its own, apart from daemon.h's
 * start-up helpers, so that spark-executor links it without them (and
 * without the libsystemd calls they make: the executor links none). */
#pragma once

/* Called when the loop has ended, before the cleanup: if freeing takes
 * longer than a few seconds (nng 1.5's nng_close() can hang when a peer is
 * sending at that moment, nanomsg/nng#1543), the process exits with status
 * anyway instead of hanging until systemd kills it. */
void daemon_exit_guard(int status);
/* The same after seconds (at least 1): for a process whose cleanup is
 * short and whose end others wait for. */
void daemon_exit_guard_within(int status, unsigned seconds);
