/* See exit-guard.h. */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "exit-guard.h"
#include "log.h"
#include "macro.h"

#define EXIT_GRACE_SEC 5

/* The thread's argument: seconds << 8 | the exit status (0..255), so that
 * nothing is allocated for a thread that may never run. */
static void *exit_guard_thread(void *userdata) {
        uintptr_t arg = (uintptr_t) userdata;
        unsigned seconds = (unsigned) (arg >> 8);

        sleep(seconds);
        log_warning("Cleaning up took longer than %u s, exiting without finishing it", seconds);
        _exit((int) (arg & 0xff));
        return NULL;
}

void daemon_exit_guard_within(int status, unsigned seconds) {
        uintptr_t arg = (uintptr_t) MIN(MAX(seconds, 1u), 3600u) << 8 | ((unsigned) status & 0xff);
        pthread_attr_t attr;
        pthread_t t;

        if (pthread_attr_init(&attr) != 0)
                return;
        (void) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, exit_guard_thread, (void *) arg) != 0)
                log_debug("Failed to start the exit guard, ignoring");
        pthread_attr_destroy(&attr);
}

void daemon_exit_guard(int status) {
        daemon_exit_guard_within(status, EXIT_GRACE_SEC);
}

#ifdef SPARK_SANITIZE
/* The sanitizer build's leak checker reads this at exit (a weak symbol of
 * its runtime), in every process, also in executor units, which do not get
 * the LSAN_OPTIONS of whoever started the cluster.  nng 1.5.2 keeps for
 * good a request whose send was cancelled or whose connection dropped
 * (tests/lsan.supp says so for rpc_client_call): an executor that lost its
 * driver can exit holding a poll it gave nng_ctx_send().  Here because
 * every daemon and the executor link this file. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
        return "leak:rpc_client_call\n"
               "leak:slot_send\n";
}
#endif
