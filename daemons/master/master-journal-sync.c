/* A new application is answered once its journal entry is on disk
 * (docs/DESIGN.md §9), but the loop does not wait for the disk: the
 * fdatasync() of apps.journal runs on a thread of its own (file-syncer.h)
 * and the RegisterApplication reply is parked, already encoded, until the
 * sync that covers its entry is reported.  Requests that arrive meanwhile
 * (the next application, a worker's registration) are served at once;
 * applications registered while a sync runs share the next one.
 *
 * In ZooKeeper mode the entry is a znode, created the same way: the reply
 * waits for the create's completion, not the loop
 * (master_zk_journal_sync_then_reply()).  Where neither can be used (a
 * journal that could not be written or opened, no entry to create) the
 * old way stands: master_state_sync() on the loop, then the reply. */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "fifo.h"
#include "file-syncer.h"
#include "log.h"
#include "master.h"

struct ParkedReply {
        ParkedReply *next;
        RpcRequest *req;
        uint64_t ticket;
        size_t len;
        uint8_t buf[];
};

/* Sends the parked replies whose entries the sync of ticket covers. */
static void reply_parked(Master *m, uint64_t ticket) {
        while (m->parked_replies && m->parked_replies->ticket <= ticket) {
                ParkedReply *p = FIFO_POP(m->parked_replies, m->parked_replies_tail, next);
                (void) rpc_request_reply(p->req, p->buf, p->len);
                free(p);
        }
}

static void on_journal_synced(FileSyncer *s, uint64_t ticket, int error, void *userdata) {
        Master *m = userdata;
        (void) s;

        if (error < 0) {
                /* as master_state_sync() does: all of it, on the loop */
                log_warning_errno(error, "Failed to sync the state journal, saving all: %m");
                (void) master_state_save(m);
        }
        reply_parked(m, ticket);
}

int master_state_sync_then_reply(Master *m, RpcRequest *req, Envelope *env) {
        _cleanup_free_ void *buf = NULL;
        ParkedReply *p;
        size_t len;
        uint64_t ticket;

        if (m->ha) {
                /* the entry's znode, created without the loop waiting */
                if (envelope_encode(env, &buf, &len) >= 0 &&
                    master_zk_journal_sync_then_reply(m, req, buf, len) >= 0) {
                        buf = NULL;
                        return 0;
                }
                goto on_the_loop;
        }
        if (m->journal_fd < 0 || m->journal_error < 0 || !m->journal_unsynced)
                goto on_the_loop;
        if (!m->journal_syncer && file_syncer_new(m->event, on_journal_synced, m, &m->journal_syncer) < 0)
                goto on_the_loop;
        if (envelope_encode(env, &buf, &len) < 0)
                goto on_the_loop;
        p = malloc(sizeof(*p) + len);
        if (!p)
                goto on_the_loop;
        if (file_syncer_request(m->journal_syncer, m->journal_fd, &ticket) < 0) {
                free(p);
                goto on_the_loop;
        }
        *p = (ParkedReply) { .req = req, .ticket = ticket, .len = len };
        memcpy(p->buf, buf, len);
        FIFO_PUSH(m->parked_replies, m->parked_replies_tail, next, p);
        return 0;

on_the_loop:
        (void) master_state_sync(m);
        return rpc_request_reply_envelope(req, env);
}

void master_journal_sync_done(Master *m) {
        /* waits for the sync under way, which answers what it covers */
        m->journal_syncer = file_syncer_free(m->journal_syncer);
        /* none should be left; if one is, it is answered rather than lost */
        reply_parked(m, UINT64_MAX);
}
