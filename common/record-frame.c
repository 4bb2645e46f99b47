/* See record-frame.h. */
#include <stdbool.h>

#include "record-frame.h"

/* CRC-32C (Castagnoli), reflected, bit at a time over a table of 256. */
static uint32_t crc_table[256];
static bool crc_table_ready;

static void crc_table_init(void) {
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? (c >> 1) ^ UINT32_C(0x82F63B78) : c >> 1;
                crc_table[i] = c;
        }
        crc_table_ready = true;
}

uint32_t crc32c(uint32_t crc, const void *data, size_t n) {
        const uint8_t *p = data;

        if (!crc_table_ready)
                crc_table_init();
        crc = ~crc;
        while (n-- > 0)
                crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
        return ~crc;
}

static uint32_t get_le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
        p[2] = (uint8_t) (v >> 16);
        p[3] = (uint8_t) (v >> 24);
}

static uint32_t frame_crc(const uint8_t *len_word, const uint8_t *payload, size_t len) {
        return crc32c(crc32c(0, len_word, 4), payload, len);
}

void record_frame_header(uint8_t hdr[static RECORD_FRAME_HEADER], const uint8_t *payload, size_t len) {
        put_le32(hdr, (uint32_t) len | RECORD_FRAME_CHECKED);
        put_le32(hdr + 4, frame_crc(hdr, payload, len));
}

void record_frame_next(const uint8_t *buf, size_t len, size_t off, RecordFrame *ret) {
        size_t left = len - off;
        uint32_t word;
        size_t n;

        *ret = (RecordFrame) { .status = RECORD_FRAME_TORN };
        if (left < 4)
                return;
        word = get_le32(buf + off);
        n = word & ~RECORD_FRAME_CHECKED;
        if (!(word & RECORD_FRAME_CHECKED)) {
                /* written before checksums: its length is all there is */
                if (n > left - 4)
                        return;
                *ret = (RecordFrame) { .status = RECORD_FRAME_OK, .payload = buf + off + 4, .payload_len = n,
                                       .next = off + 4 + n };
                return;
        }
        ret->checked = 1;
        if (n > RECORD_FRAME_MAX) {
                ret->status = RECORD_FRAME_CORRUPT;
                ret->next = len;
                return;
        }
        if (left < RECORD_FRAME_HEADER || n > left - RECORD_FRAME_HEADER)
                return;
        ret->next = off + RECORD_FRAME_HEADER + n;
        if (frame_crc(buf + off, buf + off + RECORD_FRAME_HEADER, n) != get_le32(buf + off + 4)) {
                ret->status = RECORD_FRAME_CORRUPT;
                return;
        }
        ret->status = RECORD_FRAME_OK;
        ret->payload = buf + off + RECORD_FRAME_HEADER;
        ret->payload_len = n;
}

size_t record_frame_resync(const uint8_t *buf, size_t len, size_t off) {
        for (size_t p = off + 1; p + RECORD_FRAME_HEADER <= len; p++) {
                RecordFrame f;

                if (!(buf[p + 3] & 0x80))
                        continue;  /* no checked frame starts here */
                record_frame_next(buf, len, p, &f);
                if (f.status == RECORD_FRAME_OK && f.checked)
                        return p;
        }
        return len;
}
