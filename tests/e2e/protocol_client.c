/* SPDX-License-Identifier: MIT */
/*
 * sdlive-test-protocol: exercises BARRIER=1 and the FD store against a real
 * manager (tests/e2e/notify-protocol.sh). Each start logs what it got back
 * (LISTEN_FDS, LISTEN_FDNAMES and the text read from each descriptor).
 * The first word of the file named by the first argument says what to do:
 *
 *   store    a start without descriptors puts a pipe holding
 *            "kept-by-the-manager" in the store as "kept", waits on a
 *            barrier and exits 3 (Restart=on-failure brings it back)
 *   remove   the running daemon removes "kept", waits on a barrier and
 *            exits 3
 *
 * Otherwise it is READY=1 and idle, re-reading the file every 100 ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdlive.h"

#define LISTEN_FDS_START 3

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SDLIVE_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static void report_inherited(void) {
        const char *fds = getenv("LISTEN_FDS"), *names = getenv("LISTEN_FDNAMES");
        int n = fds ? atoi(fds) : 0;

        printf("<6>start: LISTEN_FDS=%s LISTEN_FDNAMES=%s\n", fds ? fds : "-", names ? names : "-");
        for (int i = 0; i < n; i++) {
                char buf[64] = "";
                ssize_t r = read(LISTEN_FDS_START + i, buf, sizeof(buf) - 1);

                buf[r > 0 ? r : 0] = '\0';
                printf("<6>start: fd %d reads \"%s\"\n", LISTEN_FDS_START + i, buf);
                /* Back into the store for the next start. */
        }
        fflush(stdout);
}

static int barrier(sdlive *d) {
        uint64_t t0 = now_usec();
        int r = sdlive_notify_barrier(d, 5 * SDLIVE_USEC_PER_SEC);

        printf("<6>barrier: %d after %" PRIu64 " us\n", r, now_usec() - t0);
        fflush(stdout);
        return r;
}

static void read_mode(const char *path, char *mode, size_t size) {
        FILE *f = path ? fopen(path, "r") : NULL;
        char word[32] = "";

        if (f) {
                if (fscanf(f, "%31s", word) != 1)
                        word[0] = '\0';
                fclose(f);
        }
        snprintf(mode, size, "%s", word);
}

int main(int argc, char **argv) {
        const char *mode_file = argc > 1 ? argv[1] : NULL;
        char mode[32];
        sdlive *d = NULL;
        int r;

        r = sdlive_new(&d, NULL);
        if (r < 0)
                return 1;
        report_inherited();
        (void) sdlive_notify_ready(d);

        read_mode(mode_file, mode, sizeof(mode));
        if (strcmp(mode, "store") == 0 && !getenv("LISTEN_FDS")) {
                int p[2];

                if (pipe2(p, O_CLOEXEC) < 0 || write(p[1], "kept-by-the-manager", 19) != 19)
                        return 1;
                close(p[1]);
                r = sdlive_notify_fdstore(d, &p[0], 1, "kept", SDLIVE_FDSTORE_NO_POLL);
                printf("<6>store: %d\n", r);
                close(p[0]);
                r = barrier(d);
                return r > 0 ? 3 : 1;
        }
        for (;;) {
                if (sdlive_idle(d, 100 * SDLIVE_USEC_PER_MSEC) == SDLIVE_WAKE_STOP)
                        return 0;
                read_mode(mode_file, mode, sizeof(mode));
                if (strcmp(mode, "remove") == 0 && getenv("LISTEN_FDS")) {
                        r = sdlive_notify_fdstore_remove(d, "kept");
                        printf("<6>remove: %d\n", r);
                        r = barrier(d);
                        return r > 0 ? 3 : 1;
                }
        }
}
