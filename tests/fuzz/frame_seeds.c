/* SPDX-License-Identifier: MIT */
/* Writes the decoder fuzz target's seed corpus, produced by the encoder so
 * it follows the wire format as it is: each frame type, a multi-frame
 * stream, and the classic breakages (truncation, oversize, bad version,
 * unknown type, string past end). Each seed starts with the read-split
 * byte the fuzz target expects.
 * Usage: frame-seeds DIR */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frame.h"

static const char *out_dir;
static int written;

static int write_seed(const char *name, uint8_t split, const uint8_t *wire, size_t len) {
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", out_dir, name);
        f = fopen(path, "wb");
        if (!f || fwrite(&split, 1, 1, f) != 1 || fwrite(wire, 1, len, f) != len) {
                fprintf(stderr, "frame-seeds: %s: %s\n", path, strerror(errno));
                if (f)
                        fclose(f);
                return -1;
        }
        if (fclose(f) != 0)
                return -1;
        written++;
        return 0;
}

static size_t encode(const frame *f, uint8_t *buf, size_t size) {
        int n = frame_encode(f, buf, size);

        if (n < 0) {
                fprintf(stderr, "frame-seeds: encoding %s: %s\n", frame_type_name(f->type),
                        frame_strerror(n));
                exit(EXIT_FAILURE);
        }
        return (size_t) n;
}

int main(int argc, char **argv) {
        static const uint8_t job[] = "verify blob/00/0042";
        static uint8_t stream[4096];
        const frame frames[] = {
                { .type = FRAME_HELLO, .hello = { FRAME_PROTOCOL_VERSION, "worker-1@host" } },
                { .type = FRAME_ASSIGN, .assign = { 1, 42, 1, job, sizeof(job) - 1, { 0 } } },
                { .type = FRAME_RESULT, .result = { 1, 42, 1, 0, "ok", { 0 } } },
                { .type = FRAME_RESULT, .result = { 1, 43, 2, -74, "checksum mismatch", { 0 } } },
                { .type = FRAME_HEARTBEAT },
                { .type = FRAME_HEARTBEAT, .heartbeat = { true, 7 } },
        };
        const size_t count = sizeof(frames) / sizeof(frames[0]);
        uint8_t buf[512];
        size_t len = 0, n;
        char name[64];
        int r = 0;

        if (argc != 2) {
                fprintf(stderr, "usage: frame-seeds DIR\n");
                return EXIT_FAILURE;
        }
        out_dir = argv[1];
        if (mkdir(out_dir, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "frame-seeds: %s: %s\n", out_dir, strerror(errno));
                return EXIT_FAILURE;
        }

        for (size_t i = 0; i < count; i++) {
                n = encode(&frames[i], buf, sizeof(buf));
                snprintf(name, sizeof(name), "valid-%s-%zu", frame_type_name(frames[i].type), i);
                r |= write_seed(name, 0, buf, n);
                len += encode(&frames[i], stream + len, sizeof(stream) - len);
        }
        r |= write_seed("stream-whole", 0, stream, len);
        r |= write_seed("stream-bytewise", 1, stream, len);
        r |= write_seed("stream-chunked", 200, stream, len);
        r |= write_seed("stream-truncated", 3, stream, len - 5);

        /* Breakages, each derived from a valid HELLO. */
        n = encode(&frames[0], buf, sizeof(buf));
        buf[2] = FRAME_VERSION + 1;
        r |= write_seed("bad-version", 0, buf, n);
        buf[2] = FRAME_VERSION;
        buf[3] = 0x7f;
        r |= write_seed("unknown-type", 0, buf, n);
        buf[3] = FRAME_HELLO;
        buf[4] = 0x7f; /* length far above the limit */
        r |= write_seed("oversized", 0, buf, FRAME_HEADER_SIZE);
        buf[4] = 0;
        buf[FRAME_HEADER_SIZE + 3] += 10; /* identity length past the end */
        r |= write_seed("string-past-end", 0, buf, n);

        if (r < 0)
                return EXIT_FAILURE;
        printf("frame-seeds: %d seeds in %s\n", written, out_dir);
        return EXIT_SUCCESS;
}
