/* The framing of the master's journal entries (state_dir/apps.journal):
 *
 *   [u32 LE: length | RECORD_FRAME_CHECKED][u32 LE: CRC-32C][payload]
 *
 * The checksum covers the length word and the payload, so that a damaged
 * length is caught like a damaged payload.  Frames written before there was
 * a checksum are [u32 LE: length][payload] (the flag bit clear) and are read
 * as they are.  No I/O here: the caller reads the file and acts on what
 * record_frame_next() finds. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define RECORD_FRAME_CHECKED UINT32_C(0x80000000)
#define RECORD_FRAME_HEADER 8
/* The largest payload a frame may carry. */
#define RECORD_FRAME_MAX (UINT32_C(1) << 30)

typedef enum RecordFrameStatus {
        RECORD_FRAME_OK,       /* a whole frame, checksum right (or a frame without one) */
        RECORD_FRAME_TORN,     /* it runs past the end: an append cut short */
        RECORD_FRAME_CORRUPT,  /* checksum wrong, or an impossible length */
} RecordFrameStatus;

typedef struct RecordFrame {
        RecordFrameStatus status;
        const uint8_t *payload;  /* OK only */
        size_t payload_len;
        size_t next;             /* OK and CORRUPT: where the next frame would start, as its length says */
        int checked;             /* it carries a checksum */
} RecordFrame;

uint32_t crc32c(uint32_t crc, const void *data, size_t n);

/* Writes the header for a payload of len bytes into hdr (RECORD_FRAME_HEADER bytes). */
void record_frame_header(uint8_t hdr[static RECORD_FRAME_HEADER], const uint8_t *payload, size_t len);

/* The frame at buf[off..len); off < len. */
void record_frame_next(const uint8_t *buf, size_t len, size_t off, RecordFrame *ret);

/* The offset of the first whole checksummed frame that starts after off
 * (its checksum verifies it), or len if there is none: where reading can
 * go on after damage without guessing. */
size_t record_frame_resync(const uint8_t *buf, size_t len, size_t off);
