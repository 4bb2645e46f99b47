/* The task channel's framing over a real socketpair: frames whole, split
 * across reads, many in one read, too long, and a writer that the socket
 * makes wait. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check-run.h"
#include "stream-frame.h"

static int fds[2];

static void setup(void) {
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
}

static void teardown(void) {
        close(fds[0]);
        close(fds[1]);
}

/* Reads until a whole frame is there; the body as a string. */
static int next_frame(StreamReader *r, uint32_t *tag, char *out, size_t size) {
        for (;;) {
                const uint8_t *body;
                size_t len;
                int k = stream_reader_next(r, tag, &body, &len);

                if (k < 0)
                        return k;
                if (k > 0) {
                        ck_assert_uint_lt(len, size);
                        memcpy(out, body, len);
                        out[len] = '\0';
                        return 1;
                }
                k = stream_reader_fill(r, fds[1]);
                if (k == -EAGAIN)
                        return 0;
                if (k <= 0)
                        return k == 0 ? -ECONNRESET : k;
        }
}

START_TEST(test_frames_in_order) {
        StreamWriter w = {};
        StreamReader r;
        char body[64];
        uint32_t tag;

        stream_reader_init(&r, 1024);
        ck_assert_int_eq(stream_writer_append(&w, 7, "first", 5), 0);
        ck_assert_int_eq(stream_writer_append(&w, 0xfffffffe, "", 0), 0);
        ck_assert_int_eq(stream_writer_append(&w, 9, "third", 5), 0);
        ck_assert_int_eq(stream_writer_flush(&w, fds[0]), 1);
        ck_assert(!stream_writer_pending(&w));

        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), 1);
        ck_assert_uint_eq(tag, 7);
        ck_assert_str_eq(body, "first");
        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), 1);
        ck_assert_uint_eq(tag, 0xfffffffe);
        ck_assert_str_eq(body, "");
        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), 1);
        ck_assert_uint_eq(tag, 9);
        ck_assert_str_eq(body, "third");
        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), 0); /* nothing more yet */

        close(fds[0]);
        fds[0] = -1;
        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), -ECONNRESET);
        stream_writer_done(&w);
        stream_reader_done(&r);
}
END_TEST

START_TEST(test_frame_split_across_reads) {
        const uint8_t frame[] = { 0, 0, 0, 5, 0, 0, 1, 2, 'h', 'e', 'l', 'l', 'o' };
        StreamReader r;
        char body[64];
        uint32_t tag;

        stream_reader_init(&r, 1024);
        /* byte by byte: no frame until the last one is there */
        for (size_t i = 0; i < sizeof(frame) - 1; i++) {
                ck_assert_int_eq(write(fds[0], frame + i, 1), 1);
                ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), 0);
        }
        ck_assert_int_eq(write(fds[0], frame + sizeof(frame) - 1, 1), 1);
        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), 1);
        ck_assert_uint_eq(tag, 0x102);
        ck_assert_str_eq(body, "hello");
        stream_reader_done(&r);
}
END_TEST

START_TEST(test_frame_too_long) {
        const uint8_t header[] = { 0, 0, 4, 1, 0, 0, 0, 1 }; /* 1025 bytes, one more than allowed */
        StreamReader r;
        char body[64];
        uint32_t tag;

        stream_reader_init(&r, 1024);
        ck_assert_int_eq(write(fds[0], header, sizeof(header)), (ssize_t) sizeof(header));
        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), -EMSGSIZE);
        /* and it stays refused: the stream has lost its frame boundaries */
        ck_assert_int_eq(next_frame(&r, &tag, body, sizeof(body)), -EMSGSIZE);
        stream_reader_done(&r);
}
END_TEST

START_TEST(test_large_frames_and_a_full_socket) {
        size_t big = 3u * 1024 * 1024;
        char *data = malloc(big);
        StreamWriter w = {};
        StreamReader r;
        const uint8_t *body;
        size_t len, got = 0;
        uint32_t tag;
        int k;

        ck_assert_ptr_nonnull(data);
        for (size_t i = 0; i < big; i++)
                data[i] = (char) (i * 7);
        stream_reader_init(&r, big);
        ck_assert_int_eq(stream_writer_append(&w, 1, data, big), 0);
        ck_assert_int_eq(stream_writer_append(&w, 2, data, 10), 0);
        /* the socket's buffer is far smaller: the rest waits */
        ck_assert_int_eq(stream_writer_flush(&w, fds[0]), 0);
        ck_assert(stream_writer_pending(&w));

        while (got < 2) {
                k = stream_reader_next(&r, &tag, &body, &len);
                ck_assert_int_ge(k, 0);
                if (k == 1) {
                        got++;
                        ck_assert_uint_eq(tag, got);
                        ck_assert_uint_eq(len, got == 1 ? big : 10);
                        ck_assert(memcmp(body, data, len) == 0);
                        continue;
                }
                k = stream_reader_fill(&r, fds[1]);
                ck_assert(k > 0 || k == -EAGAIN);
                k = stream_writer_flush(&w, fds[0]);
                ck_assert_int_ge(k, 0);
        }
        ck_assert(!stream_writer_pending(&w));
        stream_writer_done(&w);
        stream_reader_done(&r);
        free(data);
}
END_TEST

START_TEST(test_writer_error) {
        StreamWriter w = {};

        close(fds[1]);
        fds[1] = -1;
        ck_assert_int_eq(stream_writer_append(&w, 1, "x", 1), 0);
        ck_assert_int_eq(stream_writer_flush(&w, fds[0]), -EPIPE);
        stream_writer_done(&w);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_frames_in_order,
                test_frame_split_across_reads,
                test_frame_too_long,
                test_large_frames_and_a_full_socket,
                test_writer_error,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown };

        return check_run_tests("stream-frame", &options, tests);
}
