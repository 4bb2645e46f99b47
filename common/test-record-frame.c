/* The journal's framing: checksums, torn tails, damage anywhere else, and
 * frames written before there were checksums. */
#include <check.h>
#include <string.h>

#include "check-run.h"
#include "record-frame.h"

/* Appends a checked frame of payload p to buf at *off. */
static void put_frame(uint8_t *buf, size_t *off, const char *p) {
        size_t n = strlen(p);

        memcpy(buf + *off + RECORD_FRAME_HEADER, p, n);
        record_frame_header(buf + *off, buf + *off + RECORD_FRAME_HEADER, n);
        *off += RECORD_FRAME_HEADER + n;
}

START_TEST(test_crc32c) {
        /* the standard check value of CRC-32C */
        ck_assert_uint_eq(crc32c(0, "123456789", 9), 0xE3069283);
        ck_assert_uint_eq(crc32c(crc32c(0, "1234", 4), "56789", 5), 0xE3069283);
}
END_TEST

START_TEST(test_frames) {
        uint8_t buf[256];
        size_t len = 0, off = 0, second, third;
        RecordFrame f;

        put_frame(buf, &len, "first");
        second = len;
        put_frame(buf, &len, "second entry");
        third = len;
        put_frame(buf, &len, "third");

        record_frame_next(buf, len, off, &f);
        ck_assert_int_eq(f.status, RECORD_FRAME_OK);
        ck_assert(f.checked);
        ck_assert_uint_eq(f.payload_len, 5);
        ck_assert(memcmp(f.payload, "first", 5) == 0);
        ck_assert_uint_eq(f.next, second);
        record_frame_next(buf, len, f.next, &f);
        ck_assert_int_eq(f.status, RECORD_FRAME_OK);
        ck_assert_uint_eq(f.next, third);

        /* a torn tail: every cut of the last frame */
        for (size_t cut = third + 1; cut < len; cut++) {
                record_frame_next(buf, cut, third, &f);
                ck_assert_int_eq(f.status, RECORD_FRAME_TORN);
                ck_assert_uint_eq(record_frame_resync(buf, cut, third), cut);
        }

        /* any byte flipped in the middle entry: damage, found, and reading
         * goes on at the third */
        for (size_t i = second; i < third; i++) {
                uint8_t copy[256];

                memcpy(copy, buf, len);
                copy[i] ^= 0x10;
                record_frame_next(copy, len, second, &f);
                ck_assert_int_ne(f.status, RECORD_FRAME_OK);
                ck_assert_uint_eq(record_frame_resync(copy, len, second), third);
        }
        /* the high bit of the length: no longer a checked frame, and its
         * length points far away; the first frame still reads */
        buf[second + 3] ^= 0x40;
        record_frame_next(buf, len, 0, &f);
        ck_assert_int_eq(f.status, RECORD_FRAME_OK);
        record_frame_next(buf, len, second, &f);
        ck_assert_int_ne(f.status, RECORD_FRAME_OK);
        ck_assert_uint_eq(record_frame_resync(buf, len, second), third);
}
END_TEST

START_TEST(test_unchecked_frames) {
        /* [u32 length][payload], as written before checksums */
        uint8_t buf[] = { 3, 0, 0, 0, 'a', 'b', 'c', 2, 0, 0, 0, 'd' };
        RecordFrame f;

        record_frame_next(buf, sizeof(buf), 0, &f);
        ck_assert_int_eq(f.status, RECORD_FRAME_OK);
        ck_assert(!f.checked);
        ck_assert_uint_eq(f.payload_len, 3);
        ck_assert_uint_eq(f.next, 7);
        record_frame_next(buf, sizeof(buf), 7, &f);
        ck_assert_int_eq(f.status, RECORD_FRAME_TORN);
        record_frame_next(buf, 9, 7, &f);  /* less than a length word */
        ck_assert_int_eq(f.status, RECORD_FRAME_TORN);
}
END_TEST

START_TEST(test_impossible_length) {
        uint8_t buf[16] = { 0xff, 0xff, 0xff, 0xff };
        RecordFrame f;

        record_frame_next(buf, sizeof(buf), 0, &f);
        ck_assert_int_eq(f.status, RECORD_FRAME_CORRUPT);
        ck_assert_uint_eq(record_frame_resync(buf, sizeof(buf), 0), sizeof(buf));
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_crc32c,
                test_frames,
                test_unchecked_frames,
                test_impossible_length,
                NULL,
        };

        return check_run_tests("record-frame", NULL, tests);
}
