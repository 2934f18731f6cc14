/* SPDX-License-Identifier: MIT */
/*
 * sdlive-adapter-sd-event: sdlive in a daemon built on sd-event
 * (libsystemd).
 *
 * One thread, one sd_event loop: a 100 ms work tick, SIGTERM and SIGINT as
 * signal sources, and the watchdog on the loop's own timer: a
 * CLOCK_MONOTONIC time source set to sdlive_watchdog_next_due(), which pets
 * and re-arms itself for the next deadline. Keepalives go out only while the
 * loop dispatches.
 *
 * sd_event_set_watchdog() is not used: it sends WATCHDOG=1 from the loop by
 * itself, around sdlive, whose progress loops could then no longer withhold
 * a keepalive. The time sources ask for 1 us accuracy: sd-event's default
 * (0: 250 ms) would let it coalesce a pet that late.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-event.h>

#include "adapter.h"
#include "log.h"

typedef struct daemon_state {
        adapter a;
        unsigned long long ticks;
} daemon_state;

/* Re-arms a one-shot time source: at usec (CLOCK_MONOTONIC), or usec from
 * now when relative. */
static int rearm(sd_event_source *source, uint64_t usec, bool relative) {
        int r = relative ? sd_event_source_set_time_relative(source, usec)
                         : sd_event_source_set_time(source, usec);

        if (r >= 0)
                r = sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
        return r;
}

/* A keepalive is due: pet, then wait for the next deadline. When the pet is
 * withheld (a stalled progress loop) or fails, the deadline still moves on
 * by one interval, so this never spins. */
static int on_watchdog(sd_event_source *source, uint64_t usec, void *userdata) {
        daemon_state *s = userdata;

        (void) sdlive_pet_watchdog(s->a.sd);
        return rearm(source, sdlive_watchdog_next_due(s->a.sd), false);
}

/* The daemon's work. The wedge switch hangs it here, in the loop thread. */
static int on_tick(sd_event_source *source, uint64_t usec, void *userdata) {
        daemon_state *s = userdata;

        fault_switch_check(&s->a.wedge);
        if (++s->ticks % ADAPTER_TICKS_PER_STATUS == 0)
                (void) sdlive_notify_status(s->a.sd, "sd-event loop: %llu ticks", s->ticks);
        return rearm(source, ADAPTER_TICK_USEC, true);
}

/* STOPPING=1, then the loop ends with exit code 0. */
static int on_signal(sd_event_source *source, const struct signalfd_siginfo *info, void *userdata) {
        daemon_state *s = userdata;

        log_info("%s received, stopping", strsignal((int) info->ssi_signo));
        (void) sdlive_notify_stopping(s->a.sd);
        return sd_event_exit(sd_event_source_get_event(source), 0);
}

/* Adds the sources, all floating (owned by the loop); 0 or -errno. */
static int add_sources(sd_event *e, daemon_state *s) {
        uint64_t due = sdlive_watchdog_next_due(s->a.sd);
        int r;

        r = sd_event_add_signal(e, NULL, SIGTERM, on_signal, s);
        if (r >= 0)
                r = sd_event_add_signal(e, NULL, SIGINT, on_signal, s);
        if (r >= 0)
                r = sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, ADAPTER_TICK_USEC, 1, on_tick, s);
        /* UINT64_MAX: pets are not tracked (no watchdog armed). */
        if (r >= 0 && due != UINT64_MAX)
                r = sd_event_add_time(e, NULL, CLOCK_MONOTONIC, due, 1, on_watchdog, s);
        return r < 0 ? r : 0;
}

int main(int argc, char **argv) {
        daemon_state s = { 0 };
        sd_event *e = NULL;
        sigset_t mask;
        int r, status = EXIT_FAILURE;

        if (adapter_start(&s.a, argc, argv, "sd-event", "") < 0)
                return EXIT_FAILURE;

        /* sd-event receives signals through a signalfd: they must be blocked
         * first, before any thread exists that could take them instead. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        r = -pthread_sigmask(SIG_BLOCK, &mask, NULL);
        if (r >= 0)
                r = sd_event_new(&e);
        if (r >= 0)
                r = add_sources(e, &s);
        if (r < 0) {
                log_error("cannot set up the sd-event loop: %s", strerror(-r));
                goto out;
        }

        log_info("sd-event loop up");
        (void) sdlive_notify_status(s.a.sd, "sd-event loop up");
        (void) sdlive_notify_ready(s.a.sd);
        r = sd_event_loop(e);
        if (r < 0)
                log_error("sd_event_loop: %s", strerror(-r));
        else
                status = EXIT_SUCCESS;

out:
        sd_event_unref(e);
        adapter_finish(&s.a);
        return status;
}
