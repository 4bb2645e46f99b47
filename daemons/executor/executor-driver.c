/* See executor-driver.h. */
#include "executor-driver.h"
#include "nng-util.h"

static int aio_step(nng_aio *aio, uint64_t deadline_ms) {
        nng_aio_set_timeout(aio, MAX(nng_util_remaining_ms(deadline_ms), 1));
        nng_aio_wait(aio);
        return nng_errno(nng_aio_result(aio));
}

int executor_driver_call_sync(nng_socket sock, Envelope *req, int timeout_ms, size_t max_bytes, Envelope **ret) {
        uint64_t deadline = nng_util_now_ms() + (uint64_t) MAX(timeout_ms, 1);
        _cleanup_nng_msg_ nng_msg *m = NULL;
        Envelope *reply = NULL;
        nng_aio *aio = NULL;
        nng_ctx ctx;
        int r;

        *ret = NULL;
        r = nng_util_msg_from_envelope(req, &m);
        if (r < 0)
                return r;
        r = nng_errno(nng_aio_alloc(&aio, NULL, NULL));
        if (r < 0)
                return r;
        r = nng_errno(nng_ctx_open(&ctx, sock));
        if (r < 0) {
                nng_aio_free(aio);
                return r;
        }

        nng_aio_set_msg(aio, TAKE_PTR(m));
        nng_ctx_send(ctx, aio);
        r = aio_step(aio, deadline);
        if (r < 0) {
                m = nng_aio_get_msg(aio); /* still ours when the send failed */
                goto out;
        }
        nng_ctx_recv(ctx, aio);
        r = aio_step(aio, deadline);
        if (r < 0)
                goto out;
        m = nng_aio_get_msg(aio);
        r = envelope_decode(nng_msg_body(m), nng_msg_len(m), max_bytes, &reply);
        if (r < 0)
                goto out;
        if (reply->body_case == SPARK__ENVELOPE__BODY_ERROR) {
                r = reply->error->code < 0 ? reply->error->code : -EIO;
        }
        *ret = reply;
out:
        (void) nng_ctx_close(ctx);
        nng_aio_free(aio);
        return r;
}
