/* SPDX-License-Identifier: MIT */
/*
 * sdlive-sentinel: a trivial daemon that other units order themselves
 * against. It sleeps with a bare nanosleep() and never pets the watchdog:
 * its unit must not arm WatchdogSec=, or systemd kills a healthy sentinel
 * after one WatchdogSec.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sdlive.h>

#include "cli.h"
#include "duration.h"
#include "log.h"
#include "supervision.h"

#define INTERVAL_MAX_USEC (UINT64_C(24) * 3600 * SDLIVE_USEC_PER_SEC)

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Sleep in a loop, reporting readiness and status to systemd. Never pets the\n"
               "watchdog: do not arm WatchdogSec= for it.\n"
               "\n"
               "  --interval DUR   sleep between status updates (default 1s; up to 1d)\n"
               "  -h, --help       show this help and exit\n"
               "  -V, --version    show the version and exit\n"
               "\n"
               "DUR is a whole number with a unit: 500ms, 2s, 1min, 1h, 7d; bare numbers are\n"
               "seconds. Exit status: 0 success or stopped by SIGTERM/SIGINT, 1 failure,\n"
               "2 bad usage.\n",
               program_invocation_short_name);
}

static uint64_t parse_options(int argc, char **argv) {
        enum { OPT_INTERVAL = 0x100 };
        static const struct option options[] = {
                { "interval", required_argument, NULL, OPT_INTERVAL },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        uint64_t interval = SDLIVE_USEC_PER_SEC;
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hV", options, NULL)) >= 0) {
                switch (c) {
                case OPT_INTERVAL:
                        interval = cli_duration_range("--interval", optarg, 1, INTERVAL_MAX_USEC);
                        break;
                default:
                        cli_common_option(c, argc, argv, usage);
                }
        }
        cli_no_operands(argc, argv);
        return interval;
}

int main(int argc, char **argv) {
        char interval_text[DURATION_FORMAT_MAX];
        uint64_t interval = parse_options(argc, argv);
        struct timespec ts = {
                .tv_sec = (time_t) (interval / SDLIVE_USEC_PER_SEC),
                .tv_nsec = (long) (interval % SDLIVE_USEC_PER_SEC) * 1000,
        };
        unsigned long long ticks = 0;
        sdlive *d;

        /* The handlers only request the stop; they interrupt nanosleep(). */
        if (supervision_start(&d, SDLIVE_HANDLE_SIGNALS) < 0)
                return EXIT_FAILURE;
        if (sdlive_watchdog_enabled(d, NULL) > 0)
                log_warning("the watchdog is armed but this daemon never pets: systemd will kill it; "
                            "remove WatchdogSec= from its unit");

        duration_format(interval_text, sizeof(interval_text), interval);
        log_info("sentinel up, waking every %s", interval_text);
        sdlive_notify_status(d, "sentinel up");
        sdlive_notify_ready(d);

        while (sdlive_stopping(d) <= 0) {
                if (nanosleep(&ts, NULL) < 0 && errno != EINTR) {
                        log_error("nanosleep: %s", strerror(errno));
                        sdlive_free(d);
                        return EXIT_FAILURE;
                }
                if (sdlive_stopping(d) > 0)
                        break;
                sdlive_notify_status(d, "sentinel up, %llu wake-ups", ++ticks);
        }

        log_info("stop requested, exiting");
        sdlive_notify_stopping(d);
        sdlive_free(d);
        return EXIT_SUCCESS;
}
