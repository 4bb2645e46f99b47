/* spark-executor: one per executor unit.  It registers with its driver,
 * then pulls tasks with Poll requests, runs them on `cores` task threads
 * and returns their results in later polls; it exits when the driver says
 * so, when the driver stops answering, or on SIGTERM.
 *
 * Threads: the sd-event loop owns the Executor; nng's aio callbacks only
 * hand finished requests to it (a LoopQueue); nng itself is opened only
 * when needed (executor-nng.c), by the loop or by a task thread fetching a
 * library; the task threads
 * (task-runner.c) run tasks and tell the loop when results are waiting.
 * The loop runs on the main thread, except while the main thread runs a
 * short function task itself (executor_run_here()) that lasts: then a
 * standby thread runs it (loop-standby.h), and hands it back when that task
 * has ended — one thread at a time, so the Executor keeps one owner
 * (docs/DESIGN.md §4). */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>
#include <systemd/sd-event.h>

#include "daemon.h"
#include "executor-args.h"
#include "executor-secret.h"
#include "ids.h"
#include "library-cache.h"
#include "log.h"
#include "loop-standby.h"
#include "loop-queue.h"
#include "stream-frame.h"
#include "tls-session.h"
#include "task-runner.h"
#include "time-util.h"

/* Largest message we take from the driver: a task batch or a library. */
#define EXECUTOR_MAX_MESSAGE_BYTES (256u * 1024u * 1024u)
/* How long we try to register while the driver cannot be reached. */
#define EXECUTOR_REGISTER_TIMEOUT_USEC (30u * USEC_PER_SEC)
/* Retry after the driver answered a registration with -EAGAIN. */
#define EXECUTOR_REGISTER_RETRY_USEC (250u * USEC_PER_MSEC)
/* A registration waits this long at most for the task channel to be up
 * (connected, TLS handshake done), then goes over nng: a handshake takes
 * milliseconds, a port that drops packets the kernel's connect timeout. */
#define EXECUTOR_CHANNEL_WAIT_USEC (500u * USEC_PER_MSEC)
/* Without a heartbeat from the driver: the driver's default
 * executor_heartbeat_timeout_ms. */
#define EXECUTOR_DEFAULT_TIMEOUT_MS 10000
/* When heartbeat_ms is given, no reply for this many heartbeats ends us. */
#define EXECUTOR_MISSED_HEARTBEATS 3
/* ... but never less than this, whatever heartbeat_ms says. */
#define EXECUTOR_MIN_TIMEOUT_MS 100
/* How long an executor of a driver with a state_dir waits for it to come
 * back (a restart) before it exits. */
#define EXECUTOR_DURABLE_DRIVER_TIMEOUT_MS 15000
/* After the connection to a durable driver dropped, a request that has no
 * answer this long is sent again: the restarted driver answers an unknown
 * executor at once, so silence means the request went down with the old
 * connection (nng 1.5 can lose one sent just as its pipe closes). */
#define EXECUTOR_RESEND_AFTER_USEC (2u * USEC_PER_SEC)
/* ... and every this many resends without an answer, the connection
 * itself is dialed afresh: a connection that takes requests and never
 * answers them, or a dialer that stopped trying, is not fixed by sending
 * again on it (seen with nng 1.5: one executor of four heard nothing for
 * 15 s while the others were answered 0.1 s after their driver's restart). */
#define EXECUTOR_REDIAL_EVERY_RESENDS 2u
#define EXECUTOR_FETCH_TIMEOUT_MS 60000
/* A Poll carries at most this many results, of at most this many bytes in
 * all (but always at least one result, however big). */
#define EXECUTOR_MAX_POLL_RESULTS 16384u
#define EXECUTOR_MAX_POLL_RESULT_BYTES ((size_t) 64u * 1024u * 1024u)
/* The largest result when the driver gave no max_result_bytes. */
#define EXECUTOR_DEFAULT_MAX_RESULT_BYTES ((int64_t) SPARK_MAX_MESSAGE_BYTES)
#define EXECUTOR_PREFETCH_MAX 1000000
/* How long a stopping executor waits for its task threads. */
#define EXECUTOR_STOP_WAIT_USEC (200u * USEC_PER_MSEC)
/* How long its whole cleanup may take (daemon_exit_guard_within()): the
 * socket's close, the wait above and the usage file.  A drain, a release
 * and a driver's stop wait for the unit to end, and nng 1.5's nng_close()
 * can hang while the driver is sending (nanomsg/nng#1543): the daemons'
 * 5 s would then be a drain's 5 s. */
#define EXECUTOR_EXIT_GRACE_SEC 1u

/* After a reply that brought tasks, the next poll for work waits this
 * long: see executor_pump_soon(). */
#define EXECUTOR_REPOLL_DELAY_USEC 200u

/* A result may wait for the next ones to share its poll (fewer messages
 * per task when tasks take about a millisecond, as commands do) for about
 * one task's run time, at most this long, and only while the queued tasks
 * keep every core busy for twice that: executor_result_hold_usec(). */
#define EXECUTOR_RESULT_HOLD_MAX_USEC (5u * USEC_PER_MSEC)

/* An idle executor runs a function task on its main thread, between two
 * turns of its loop, when its tasks have taken less than this on average
 * (executor_run_here()); should one last, the loop goes on on a standby
 * thread after the second figure. */
#define EXECUTOR_RUN_HERE_MAX_USEC 100u
#define EXECUTOR_RUN_HERE_STANDBY_USEC (1u * USEC_PER_MSEC)

/* Two polls at most: one that may wait (parked) at the driver for work, and
 * one that carries results while the first is parked. */
#define EXECUTOR_POLL_SLOTS 2u

typedef struct Executor Executor;

typedef enum ExecutorState {
        EXECUTOR_REGISTERING,
        EXECUTOR_POLLING,
        EXECUTOR_STOPPING,
        _EXECUTOR_STATE_MAX,
        _EXECUTOR_STATE_INVALID = -EINVAL,
} ExecutorState;

const char *executor_state_to_string(ExecutorState s);

typedef enum PollSlotPhase {
        POLL_SLOT_IDLE,
        POLL_SLOT_SENDING,
        POLL_SLOT_RECEIVING,
        POLL_SLOT_DONE,
        _POLL_SLOT_PHASE_MAX,
        _POLL_SLOT_PHASE_INVALID = -EINVAL,
} PollSlotPhase;

/* The task channel's way up (while channel_fd >= 0). */
typedef enum ChannelState {
        CHANNEL_CONNECTING,
        CHANNEL_HANDSHAKE, /* TLS */
        CHANNEL_UP,
        _CHANNEL_STATE_MAX,
        _CHANNEL_STATE_INVALID = -EINVAL,
} ChannelState;

/* One request context to the driver.  The loop owns it while idle; from the
 * send until its item is queued, only the aio callback touches phase, error
 * and reply. */
typedef struct PollSlot {
        Executor *executor;
        nng_ctx ctx;
        bool ctx_open;
        nng_aio *aio;
        LoopQueueItem item;
        bool busy;            /* loop: a request is out */
        bool on_channel;      /* loop: ... on the task channel, not nng */
        size_t n_results;     /* loop: results it carries */
        uint64_t seq;
        PollSlotPhase phase;
        int error;
        nng_msg *reply;
} PollSlot;

struct Executor {
        ExecutorArgs args;
        /* From the unit's credentials (executor-credentials.c): the secret
         * every RegisterExecutor and Poll carries, and the CA that
         * verifies a tls+tcp:// driver. */
        uint8_t secret[EXECUTOR_SECRET_SIZE];
        size_t secret_len;           /* 0: none was given */
        char *ca_file;               /* NULL: none */
        char host[256];
        char unit[UNIT_NAME_MAX];

        sd_event *event;
        sd_event_source *sigterm_source, *sigint_source;
        sd_event_source *deadline_source;  /* registration deadline, then heartbeat timeout */
        sd_event_source *retry_source;     /* registration retry */
        sd_event_source *repoll_source;    /* the delayed poll after tasks came */
        sd_event_source *hold_source;      /* the end of a result's hold */
        sd_event_source *resend_source;    /* while the driver is away: requests sent again */
        LoopQueue *queue;

        /* nng: opened on first need, by the loop or a task thread, under
         * nng_lock (executor-nng.c); never again once nng_closed. */
        pthread_mutex_t nng_lock;
        nng_socket sock;
        bool sock_open;
        bool nng_closed;
        nng_dialer dialer;
        PollSlot slots[EXECUTOR_POLL_SLOTS];

        /* The task channel (executor-channel.c); -1: none. */
        int channel_fd;
        uint16_t channel_port;
        ChannelState channel_state;
        /* The registration goes once the channel is up (or over nng, if
         * it fails first): --driver-channel-port was given. */
        bool register_awaits_channel;
        TlsContext *channel_tls_context; /* tls+tcp://: made once, from the CA */
        TlsSession *channel_tls;         /* ... the session on channel_fd */
        sd_event_source *channel_io;
        StreamReader channel_reader;
        StreamWriter channel_writer;

        /* Task threads → loop: "results are waiting".  queued keeps the
         * item from being pushed twice. */
        LoopQueueItem results_item;
        atomic_bool results_item_queued;

        TaskRunner *runner;
        LibraryCache *libs;
        pthread_t main_thread;
        Task *run_here;        /* handed to the main thread, after this turn of the loop */
        LoopStandby *standby;  /* runs the loop while the main thread runs a task */

        ExecutorState state;
        int exit_status;

        /* From RegisterExecutorReply. */
        int heartbeat_ms;
        int prefetch;
        size_t max_result_bytes;
        bool durable_driver;   /* its driver comes back after a restart: wait for it */
        int timeout_ms;

        usec_t register_deadline;
        usec_t last_reply;
        bool reconnecting;     /* the connection to a durable driver dropped, no answer since */
        unsigned resends;      /* while reconnecting: rounds of requests sent again */
        uint64_t seq;
        usec_t avg_run_usec;   /* of the tasks whose results went out (a moving average) */
        usec_t results_held_since; /* 0: no result is being held back */

        /* A reused array for the TaskResults of one Poll. */
        Spark__TaskResult *result_buf;
        Spark__TaskResult **result_ptrs;
        size_t result_buf_allocated, result_ptrs_allocated;

        uint64_t n_tasks_received, n_results_sent, n_polls, n_kills;
};

/* Takes args.  Blocks SIGTERM and SIGINT (handled by the loop): call it
 * before anything starts a thread. */
int executor_new(ExecutorArgs *args, Executor **ret);
Executor *executor_free(Executor *e);

/* executor-credentials.c: reads $CREDENTIALS_DIRECTORY/spark-executor-secret
 * and notes $CREDENTIALS_DIRECTORY/spark-ca, the credentials the worker
 * gives the unit (LoadCredential=).  Without $CREDENTIALS_DIRECTORY (run
 * by hand) there is no secret and the driver will refuse us; a credential
 * that is there but unreadable is an error. */
int executor_load_credentials(Executor *e);

/* executor-nng.c.  Opens the nng socket and its request contexts and dials
 * the driver, unless done already: 0, or < 0 (-ESHUTDOWN once the
 * executor stops).  Any thread may call it. */
int executor_nng_open(Executor *e);
/* Closes the socket for good (a library fetch waiting on it ends). */
void executor_nng_close(Executor *e);

/* Connects, registers and serves until the end; returns the exit status
 * (0: shutdown or SIGTERM; 1: refused, or the driver is unreachable).  If a
 * task thread is stuck in a function that does not return, it does not wait
 * for it: it exits the process with that status. */
int executor_run(Executor *e);

/* Closes the connection to the driver, and its dialer, and dials again
 * (the requests out are sent again on the new connection). */
int executor_redial(Executor *e);

/* Ends the loop with this status, logging why (once). */
void executor_exit(Executor *e, int status, int level, const char *fmt, ...) _printf_(4, 5);

/* The structured fields every log line of this executor carries. */
#define EXECUTOR_LOG_FIELDS(e, ...)                                                         \
        LOG_FIELDS(.app_id = (e)->args.app_id, .executor_id = (e)->args.executor_id,        \
                   .worker_id = isempty((e)->args.worker_id) ? NULL : (e)->args.worker_id,  \
                   .unit = (e)->unit, __VA_ARGS__)

/* executor-poll.c */
/* How long a finished task's result may wait for others to share its poll,
 * given the run time of recent tasks, the tasks queued behind the running
 * ones and the cores: 0 when it goes at once. */
usec_t executor_result_hold_usec(usec_t avg_run_usec, size_t queued, unsigned cores);
/* The slots' nng request contexts (executor_nng_open()). */
int executor_slots_open(Executor *e);
void executor_slots_close(Executor *e);
/* Sends RegisterExecutor on the first slot: on the task channel if it is
 * up, else over nng. */
int executor_send_register(Executor *e);
/* Sends the polls that are due: one if none is out, a second one if one is
 * out and results are waiting. */
void executor_pump(Executor *e);
/* Loop callbacks. */
void executor_slot_done(void *userdata, bool discard);
/* A request of slot s ended: error < 0 (no answer), or its answer. */
void executor_slot_finish(PollSlot *s, int error, const void *data, size_t len);

/* Between two turns of the loop, on the main thread: runs the task
 * handle_poll_reply() kept for it (see task_runner_run_here()). */
void executor_run_here(Executor *e);

/* executor-channel.c: the task channel (docs/DESIGN.md §4). */
/* Connects (without blocking) to port on the host of the driver's tcp://
 * or tls+tcp:// URL (then over TLS, verifying the driver's certificate
 * against the CA credential), closing any channel to another port before;
 * nothing (and 0) for port 0 or another URL, or when a channel to this
 * port is up or on its way. */
int executor_channel_open(Executor *e, uint16_t port);
bool executor_channel_up(const Executor *e);
/* Sends env as s's request on the channel (which must be up). */
int executor_channel_send(Executor *e, PollSlot *s, Envelope *env);
/* Closes it; the polls out on it end with error (0: -ECONNRESET), and
 * error != 0 is logged. */
void executor_channel_close(Executor *e, int error);
void executor_results_ready(void *userdata, bool discard);

/* executor-tasks.c */
void executor_run_task(TaskRunner *r, Task *t, void *userdata);
void executor_notify_results(void *userdata);
int executor_fetch_library(const char *hash, void **ret_data, size_t *ret_len, char *error, size_t error_size,
                           void *userdata);

DEFINE_TRIVIAL_CLEANUP_FUNC(Executor *, executor_free);

/* executor.c, for executor-poll.c */
int executor_schedule_register_retry(Executor *e);
/* The same, after delay. */
int executor_schedule_register_in(Executor *e, usec_t delay);
/* (Re)arms the deadline timer for the current state. */
void executor_arm_deadline(Executor *e);
