/* SPDX-License-Identifier: MIT */
/* Fuzz target for the frame decoder.
 *
 * Input: one byte choosing how the rest is split into reads (as a
 * non-blocking socket would deliver it), then the byte stream itself.
 * Beyond "no crash, no out-of-bounds access", it checks the codec's
 * contract: every decoded frame re-encodes to exactly the bytes it came
 * from, errors are known codes with a reason and are sticky, the payload
 * buffer never exceeds the limit, and end of stream is judged correctly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz_target.h"

static bool known_error(int r) {
        return r == -ENOMEM || (r <= FRAME_ETRUNCATED && r >= FRAME_ETRAILING);
}

/* Read sizes: 0 = all at once, otherwise cycling through small sizes. */
static size_t chunk_size(uint8_t mode, size_t step) {
        if (mode == 0)
                return SIZE_MAX;
        return 1 + (size_t) (mode * (step + 1) * 7u) % (mode < 128 ? 16u : 4096u);
}

static void check_reencodes(const frame *f, const uint8_t *wire, size_t len) {
        static uint8_t buf[FRAME_MAX_SIZE];
        int n = frame_encode(f, buf, sizeof(buf));

        CHECK(n >= 0 && (size_t) n == len);
        CHECK(memcmp(buf, wire, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        frame_decoder *dec = NULL;
        size_t off = 1, frame_start = 1, step = 0, used, n;
        uint8_t mode;
        frame f;
        int r = 0;

        if (size < 1)
                return 0;
        mode = data[0];
        CHECK(frame_decoder_new(&dec) == 0);

        while (off < size) {
                n = chunk_size(mode, step++);
                n = n < size - off ? n : size - off;
                r = frame_decoder_feed(dec, data + off, n, &used, &f);
                CHECK(used <= n);
                CHECK(frame_decoder_allocated(dec) <= FRAME_MAX_PAYLOAD);
                off += used;
                if (r < 0)
                        break;
                if (r == 1) {
                        check_reencodes(&f, data + frame_start, off - frame_start);
                        frame_start = off;
                } else {
                        CHECK(used == n);
                }
        }

        if (r < 0) {
                CHECK(known_error(r));
                CHECK(frame_decoder_error(dec) == r);
                CHECK(frame_decoder_reason(dec)[0] != '\0');
                CHECK(frame_decoder_feed(dec, data, size, &used, &f) == r && used == 0);
                CHECK(frame_decoder_finish(dec) == r);
        } else if (frame_start == off) {
                CHECK(frame_decoder_finish(dec) == 0);
                CHECK(frame_decoder_wanted(dec) == FRAME_HEADER_SIZE);
        } else {
                CHECK(frame_decoder_finish(dec) == FRAME_ETRUNCATED);
        }
        frame_decoder_free(dec);
        return 0;
}
