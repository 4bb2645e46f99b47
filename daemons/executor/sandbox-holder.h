/* A child that holds the executor's sandbox while the executor lives, so
 * that the executor's death is seen sooner (sandbox-holder.c). */
#pragma once

/* Forks the holder.  Call in main() before any thread or connection
 * exists: the holder must hold none of the executor's connections.
 * Returns 0 in the executor (also when no holder could be made: it only
 * makes a death quicker to see), and never returns in the holder. */
int sandbox_holder_start(void);
