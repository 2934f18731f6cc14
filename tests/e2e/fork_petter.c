/* SPDX-License-Identifier: MIT */
/*
 * sdlive-test-fork-petter: a daemon whose forked child keeps petting while
 * the parent wedges, for the fork rule under a real manager with
 * NotifyAccess=all (tests/e2e/fork-child-pets.sh).
 *
 *   sdlive-test-fork-petter            the child pets through the inherited
 *                                      handle (the library must send nothing)
 *   sdlive-test-fork-petter --raw-child the child sends WATCHDOG=1 itself
 *                                      (control: the manager accepts it)
 *
 * The parent pets for 1.5 s, forks, and then never pets again.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdlive.h"

/* The control's child: one WATCHDOG=1 on NOTIFY_SOCKET, without sdlive. */
static void raw_keepalive(void) {
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (!path || path[0] != '/' || strlen(path) >= sizeof(sa.sun_path))
                return;
        memcpy(sa.sun_path, path, strlen(path));
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return;
        (void) sendto(fd, "WATCHDOG=1", 10, MSG_NOSIGNAL, (struct sockaddr *) &sa, sizeof(sa));
        close(fd);
}

static void child(sdlive *d, int raw) {
        uint64_t usec = 0;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        fprintf(stderr, "<6>child %d: supervised=%d watchdog_enabled=%d, petting every 20 ms%s\n",
                (int) getpid(), sdlive_supervised(d), sdlive_watchdog_enabled(d, &usec),
                raw ? " (raw WATCHDOG=1)" : " through the inherited handle");
        for (;;) {
                if (raw) {
                        raw_keepalive();
                } else {
                        (void) sdlive_pet_watchdog(d);
                        (void) sdlive_notify_status(d, "child petting");
                }
                usleep(20 * 1000);
        }
}

int main(int argc, char **argv) {
        int raw = argc > 1 && strcmp(argv[1], "--raw-child") == 0;
        sdlive *d = NULL;
        pid_t pid;
        int r;

        r = sdlive_new(&d, NULL);
        if (r < 0) {
                fprintf(stderr, "<3>sdlive_new: %s\n", strerror(-r));
                return 1;
        }
        (void) sdlive_notify_ready(d);
        (void) sdlive_notify_status(d, "parent petting");
        (void) sdlive_idle(d, 1500 * SDLIVE_USEC_PER_MSEC);

        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "<3>fork: %s\n", strerror(errno));
                return 1;
        }
        if (pid == 0)
                child(d, raw);
        (void) sdlive_notify_status(d, "parent wedged");
        fprintf(stderr, "<6>parent %d: wedged, never petting again\n", (int) getpid());
        for (;;)
                pause();
}
