/* SPDX-License-Identifier: MIT */
/*
 * sdlive-sentinel: a trivial daemon that other units order themselves
 * against. It sleeps with a bare nanosleep() and never pets the watchdog:
 * its unit must not arm WatchdogSec=, or systemd kills a healthy sentinel
 * after one WatchdogSec.
 */
#include <errno.h>
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
               "  --interval DUR   sleep between status updates (default 1s; up to 1d)\n",
               program_invocation_short_name);
        cli_usage_help_version(17);
        printf(CLI_USAGE_DURATIONS_AND_EXIT);
}

enum { OPT_INTERVAL = 0x100 };

static const struct cli_option options[] = {
        { "interval", true, OPT_INTERVAL },
};

/* --interval, the only option (id is OPT_INTERVAL): *userdata is the interval. */
static void set_option(int id, const char *option, const char *value, void *userdata) {
        *(uint64_t *) userdata = cli_duration_range(option, value, 1, INTERVAL_MAX_USEC);
}

static uint64_t parse_options(int argc, char **argv) {
        uint64_t interval = SDLIVE_USEC_PER_SEC;

        cli_parse(argc, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, &interval);
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
