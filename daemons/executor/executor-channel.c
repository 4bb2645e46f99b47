/* The executor's end of the task channel (docs/DESIGN.md §4): a TCP
 * connection to the port the driver named — on its command line
 * (--driver-channel-port, from the driver's registration with the master),
 * or in the answer to a registration over nng — on the host of its
 * endpoint: plain for tcp://, TLS for tls+tcp:// (the driver's certificate
 * verified against the CA credential and the host dialled, as nng's dialer
 * does; the executor shows none).  The registration and the polls go there
 * as frames tagged with their slot, and the loop reads the answers itself;
 * until the connection is up (TLS: its handshake done), and after it
 * failed, they go over nng.  A connection that fails takes the requests
 * out on it along (as a dropped nng connection would):
 * executor_slot_finish() decides what that means.  One that fails before
 * the registration could go on it sends the registration over nng. */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nng/nng.h>

#include "executor.h"
#include "nng-util.h"
#include "rpc-channel-call.h"

bool executor_channel_up(const Executor *e) {
        return e->channel_fd >= 0 && e->channel_state == CHANNEL_UP;
}

/* The registration that waited for the channel, if one did: on it if it
 * came up, over nng if it did not. */
static void send_awaited_register(Executor *e) {
        int r;

        if (!e->register_awaits_channel)
                return;
        e->register_awaits_channel = false;
        if (e->state != EXECUTOR_REGISTERING || e->slots[0].busy)
                return;
        /* no need of the fallback's timer (executor_run()) any more */
        (void) sd_event_source_set_enabled(e->retry_source, SD_EVENT_OFF);
        r = executor_send_register(e);
        if (r < 0)
                executor_exit(e, EXIT_FAILURE, LOG_ERR, "Failed to send the registration: %s", strerror(-r));
}

void executor_channel_close(Executor *e, int error) {
        if (e->channel_fd < 0)
                return;
        if (error != 0)
                log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e),
                           "Lost the task channel to driver %s: %s; polling over nng.", e->args.driver_url,
                           strerror(-error));
        e->channel_io = sd_event_source_disable_unref(e->channel_io);
        e->channel_tls = tls_session_free(e->channel_tls);
        close(e->channel_fd);
        e->channel_fd = -1;
        e->channel_state = CHANNEL_CONNECTING;
        stream_reader_done(&e->channel_reader);
        stream_writer_done(&e->channel_writer);
        /* the polls out on it end as on a dropped connection */
        for (unsigned i = 0; i < EXECUTOR_POLL_SLOTS; i++) {
                PollSlot *s = &e->slots[i];

                if (s->busy && s->on_channel)
                        executor_slot_finish(s, error != 0 ? error : -ECONNRESET, NULL, 0);
        }
        send_awaited_register(e);
}

static int channel_update_events(Executor *e) {
        uint32_t events;

        if (e->channel_state == CHANNEL_HANDSHAKE)
                events = tls_session_wants_write(e->channel_tls) ? EPOLLOUT : EPOLLIN;
        else
                events = EPOLLIN | (stream_writer_pending(&e->channel_writer) ? EPOLLOUT : 0);
        return sd_event_source_set_io_events(e->channel_io, events);
}

static int channel_flush(Executor *e) {
        int r = e->channel_tls ? stream_writer_flush_tls(&e->channel_writer, e->channel_tls)
                               : stream_writer_flush(&e->channel_writer, e->channel_fd);

        if (r < 0)
                return r;
        return channel_update_events(e);
}

/* Answers that came: each to its slot. */
static int channel_take_answers(Executor *e) {
        for (;;) {
                const uint8_t *body;
                uint32_t tag;
                size_t len;
                PollSlot *s;
                int r = stream_reader_next(&e->channel_reader, &tag, &body, &len);

                if (r <= 0)
                        return r;
                if (tag >= EXECUTOR_POLL_SLOTS || !e->slots[tag].busy || !e->slots[tag].on_channel)
                        return -EPROTO; /* an answer to nothing we asked */
                s = &e->slots[tag];
                executor_slot_finish(s, 0, body, len);
                /* what the answer led to may have closed the channel */
                if (!executor_channel_up(e))
                        return 0;
        }
}

static void channel_read(Executor *e) {
        int r = e->channel_tls ? stream_reader_fill_tls(&e->channel_reader, e->channel_tls)
                               : stream_reader_fill(&e->channel_reader, e->channel_fd);

        if (r == 0)
                r = -ECONNRESET;
        if (r == -EAGAIN)
                return;
        if (r > 0)
                r = channel_take_answers(e);
        if (r < 0)
                executor_channel_close(e, r);
}

static void channel_up(Executor *e) {
        int r;

        e->channel_state = CHANNEL_UP;
        log_struct(LOG_DEBUG, EXECUTOR_LOG_FIELDS(e), "Task channel to driver %s up%s.", e->args.driver_url,
                   !e->channel_tls                         ? ""
                   : tls_session_resumed(e->channel_tls) ? " (TLS, the session of the nng connection resumed)"
                                                           : " (TLS)");
        r = channel_update_events(e);
        if (r < 0) {
                executor_channel_close(e, r);
                return;
        }
        send_awaited_register(e);
}

/* The channel is no use: polls stay on nng. */
static void channel_give_up(Executor *e, const char *what, const char *why) {
        log_struct(LOG_NOTICE, EXECUTOR_LOG_FIELDS(e), "%s the task channel of driver %s: %s; polling over nng.",
                   what, e->args.driver_url, why);
        executor_channel_close(e, 0);
}

static void channel_handshake(Executor *e) {
        int r = tls_session_handshake(e->channel_tls);
        char why[256];

        if (r == -EAGAIN) {
                r = channel_update_events(e);
                if (r < 0)
                        executor_channel_close(e, r);
                return;
        }
        if (r < 0) {
                tls_session_strerror(e->channel_tls, why, sizeof(why));
                channel_give_up(e, r == -EKEYREJECTED ? "Cannot verify" : "No TLS handshake with", why);
                return;
        }
        channel_up(e);
}

/* The connection is made: TLS begins, or the channel is up. */
static void channel_connected(Executor *e) {
        if (!e->channel_tls) {
                channel_up(e);
                return;
        }
        e->channel_state = CHANNEL_HANDSHAKE;
        channel_handshake(e);
}

static int on_channel_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        Executor *e = userdata;
        int r = 0;
        (void) source;

        switch (e->channel_state) {
        case CHANNEL_CONNECTING: {
                socklen_t len = sizeof(r);

                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &r, &len) < 0)
                        r = errno;
                if (r != 0)
                        channel_give_up(e, "Cannot reach", strerror(r));
                else
                        channel_connected(e);
                return 0;
        }
        case CHANNEL_HANDSHAKE:
                channel_handshake(e);
                return 0;
        default:
                break;
        }
        if (revents & EPOLLOUT) {
                r = channel_flush(e);
                if (r < 0) {
                        executor_channel_close(e, r);
                        return 0;
                }
        }
        if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))
                channel_read(e);
        return 0;
}

int executor_channel_open(Executor *e, uint16_t port) {
        nng_url *u = NULL;
        int fd = -1, connected, r;

        if (e->channel_fd >= 0 && e->channel_port == port)
                return 0; /* the registration came on it */
        executor_channel_close(e, 0);
        if (port == 0 || (strncmp(e->args.driver_url, "tcp://", 6) != 0 && !tls_url(e->args.driver_url)))
                return 0;
        if (tls_url(e->args.driver_url) && !e->channel_tls_context) {
                if (isempty(e->ca_file))
                        return -ENOKEY;
                r = tls_context_new_client(e->ca_file, &e->channel_tls_context);
                if (r < 0)
                        return r;
        }
        connected = channel_connect_start(e->args.driver_url, port, &fd);
        if (connected < 0)
                return connected;
        r = 0;
        /* the driver's certificate must carry the host dialled */
        if (e->channel_tls_context) {
                r = nng_errno(nng_url_parse(&u, e->args.driver_url));
                if (r >= 0)
                        r = tls_session_new(e->channel_tls_context, fd, u->u_hostname, &e->channel_tls);
                nng_url_free(u);
        }
        /* connecting until it is writable */
        if (r >= 0)
                r = sd_event_add_io(e->event, &e->channel_io, fd, EPOLLOUT, on_channel_io, e);
        if (r < 0) {
                e->channel_tls = tls_session_free(e->channel_tls);
                close(fd);
                return r;
        }
        e->channel_fd = fd;
        e->channel_port = port;
        e->channel_state = CHANNEL_CONNECTING;
        stream_reader_init(&e->channel_reader, EXECUTOR_MAX_MESSAGE_BYTES);
        if (connected > 0)
                channel_connected(e);
        return 0;
}

int executor_channel_send(Executor *e, PollSlot *s, Envelope *env) {
        void *buf = NULL;
        size_t len;
        int r;

        r = envelope_encode(env, &buf, &len);
        if (r < 0)
                return r;
        r = stream_writer_append(&e->channel_writer, (uint32_t) (s - e->slots), buf, len);
        free(buf);
        if (r < 0)
                return r;
        s->busy = true;
        s->on_channel = true;
        s->phase = POLL_SLOT_RECEIVING;
        s->error = 0;
        r = channel_flush(e);
        if (r < 0)
                executor_channel_close(e, r); /* ends s as a dropped connection would */
        return 0;
}
