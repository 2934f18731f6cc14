/* SPDX-License-Identifier: MIT */
/*
 * lint-notifier: a tiny Type=notify daemon for sdlive-lint's corpus, right or
 * wrong on purpose. By default it sends READY=1 from the main process and
 * pets at a third of WATCHDOG_USEC (sd_watchdog_enabled), forever.
 *   --no-ready             never sends READY=1
 *   --ready-from-child     a forked child sends READY=1 (then exits)
 *   --pet-from-child       a forked child pets (the parent only sleeps)
 *   --pet-interval-ms N    pets every N ms whatever WATCHDOG_USEC says
 *   --status TEXT          sends STATUS=TEXT with READY=1 (default "lint-notifier up")
 *   --status-env NAME      appends "|" and the value of NAME to that status
 * Stops on SIGTERM (the default action).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

static void sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000), .tv_nsec = (long) (usec % 1000000) * 1000 };

        while (nanosleep(&ts, &ts) < 0) {
        }
}

static void pet_forever(uint64_t interval) {
        for (;;) {
                sd_notify(0, "WATCHDOG=1");
                sleep_usec(interval);
        }
}

int main(int argc, char **argv) {
        int no_ready = 0, ready_from_child = 0, pet_from_child = 0;
        uint64_t watchdog = 0, interval = 0;
        const char *status = "lint-notifier up", *status_env = NULL;

        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--no-ready"))
                        no_ready = 1;
                else if (!strcmp(argv[i], "--ready-from-child"))
                        ready_from_child = 1;
                else if (!strcmp(argv[i], "--pet-from-child"))
                        pet_from_child = 1;
                else if (!strcmp(argv[i], "--status") && i + 1 < argc)
                        status = argv[++i];
                else if (!strcmp(argv[i], "--status-env") && i + 1 < argc)
                        status_env = argv[++i];
                else if (!strcmp(argv[i], "--pet-interval-ms") && i + 1 < argc)
                        interval = strtoull(argv[++i], NULL, 10) * 1000;
                else {
                        fprintf(stderr, "lint-notifier: unknown argument %s\n", argv[i]);
                        return 2;
                }
        }
        if (sd_watchdog_enabled(0, &watchdog) > 0 && interval == 0)
                interval = watchdog / 3;
        if (interval == 0)
                interval = 60 * UINT64_C(1000000); /* not armed: nothing to pet for */
        if (ready_from_child) {
                pid_t child = fork();

                if (child == 0) {
                        sd_notify(0, "READY=1");
                        _exit(0);
                }
                waitpid(child, NULL, 0);
        } else if (!no_ready)
                sd_notifyf(0, "READY=1\nSTATUS=%s%s%s", status, status_env ? "|" : "",
                           status_env && getenv(status_env) ? getenv(status_env) : "");
        if (pet_from_child) {
                pid_t child = fork();

                if (child == 0)
                        pet_forever(interval);
                for (;;)
                        pause();
        }
        pet_forever(interval);
}
