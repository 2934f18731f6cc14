/* SPDX-License-Identifier: MIT */
/*
 * The rate-limited keepalive.
 *
 * State: next_due is the monotonic time at which the next keepalive is due
 * (SDLIVE_NOT_TRACKED when pets are not tracked at all). A pet that is not
 * due reads the clock and compares. A due pet moves next_due forward with a
 * compare-and-swap, so among racing threads exactly one sends.
 *
 * The not-due test may read CLOCK_MONOTONIC_COARSE (a few nanoseconds
 * cheaper than CLOCK_MONOTONIC) when the interval is at least
 * SDLIVE_COARSE_FACTOR times its resolution. The coarse clock is the
 * precise one as of the last tick: it lags by up to one resolution while
 * ticks arrive on time, more when a tick is late (measured on a loaded VM:
 * mostly 1-6 ms at a 4 ms resolution, rarely up to 15 ms). So
 * "coarse + SDLIVE_COARSE_SLACK resolutions < due" proves "not due" unless
 * a tick is that late, and the last SDLIVE_COARSE_SLACK resolutions before
 * each deadline fall through to the precise read. The due path always uses
 * CLOCK_MONOTONIC (or the injected clock).
 *
 * A forked child's copy of the handle is unsupervised: the due path checks
 * the process id (once per interval, never on the not-due path).
 *
 * The due path asks the progress check which loop, if any, is stalled, and
 * decides here what to withhold, report and send. The other messages the
 * manager takes as a keepalive (WATCHDOG_USEC=, EXTEND_TIMEOUT_USEC=) are
 * withheld by the same check. The timerfd and the
 * early "due now" of a recovering loop are schedule.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdlive_internal.h"

static uint64_t derived_interval(uint64_t watchdog_usec) {
        return watchdog_usec / 6;
}

/* The coarse clock's resolution, once per process (0: not usable). */
static uint64_t coarse_resolution(void) {
        static _Atomic uint64_t cached = UINT64_MAX;
        uint64_t res = atomic_load_explicit(&cached, memory_order_relaxed);
        struct timespec ts;

        if (res != UINT64_MAX)
                return res;
        res = 0;
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) == 0 && ts.tv_sec == 0)
                res = ((uint64_t) ts.tv_nsec + 999) / 1000;
        atomic_store_explicit(&cached, res, memory_order_relaxed);
        return res;
}

/* The slack of the coarse not-due test for this interval, or 0 to read the
 * precise clock on every pet (short interval, injected clock). */
static void update_coarse_slack(sdlive *d) {
        uint64_t interval = atomic_load(&d->pet_interval), res = coarse_resolution(), slack = 0;

        if (!d->clock_ops && res && interval / SDLIVE_COARSE_FACTOR >= res)
                slack = SDLIVE_COARSE_SLACK * res;
        atomic_store_explicit(&d->coarse_slack, slack, memory_order_relaxed);
}

int sdlive_watchdog_init(sdlive *d, uint64_t pet_interval_override) {
        const char *usec_env = getenv("WATCHDOG_USEC");
        const char *pid_env = getenv("WATCHDOG_PID");
        uint64_t usec = 0, interval = 0;
        int r;

        r = sdlive_watchdog_parse_env(usec_env, pid_env, getpid(), &usec);
        if (r < 0)
                d->watchdog_error = r;
        /* A watchdog without a socket to pet through is not armed. */
        bool armed = r == 0 && d->notify_addr.sa.sa_family != AF_UNSPEC;

        if (d->flags & SDLIVE_UNSET_WATCHDOG_ENV) {
                (void) unsetenv("WATCHDOG_USEC");
                (void) unsetenv("WATCHDOG_PID");
        }

        if (pet_interval_override) {
                if (pet_interval_override < SDLIVE_PET_INTERVAL_MIN_USEC ||
                    (armed && pet_interval_override >= usec))
                        return -ERANGE;
                interval = pet_interval_override;
                d->interval_overridden = true;
        } else if (armed) {
                interval = derived_interval(usec);
        }

        atomic_init(&d->armed, armed);
        atomic_init(&d->watchdog_usec, armed ? usec : 0);
        atomic_init(&d->pet_interval, interval);
        /* Tracked pets start due, so the first pet sends at once. */
        atomic_init(&d->next_due, interval ? 0 : SDLIVE_NOT_TRACKED);
        atomic_init(&d->last_pet, sdlive_now(d));
        atomic_init(&d->stall_reported, false);
        update_coarse_slack(d);
        return 0;
}

void sdlive_watchdog_clock_changed(sdlive *d) {
        update_coarse_slack(d);
}

/* Reports a stall once: STATUS= names the loop, and with
 * SDLIVE_TRIGGER_ON_STALL the manager is asked to act now. */
static void report_stall(sdlive *d, const sdlive_stall *stall) {
        char text[128], msg[SDLIVE_NOTIFY_MAX + 1];

        (void) snprintf(text, sizeof(text),
                        "Loop '%s' silent for %" PRIu64 ".%03" PRIu64 " s (limit %" PRIu64
                        ".%03" PRIu64 " s): keepalives withheld",
                        stall->name, stall->silence_usec / SDLIVE_USEC_PER_SEC,
                        stall->silence_usec % SDLIVE_USEC_PER_SEC / 1000,
                        stall->limit_usec / SDLIVE_USEC_PER_SEC,
                        stall->limit_usec % SDLIVE_USEC_PER_SEC / 1000);
        (void) sdlive_notify_send(d, msg, sdlive_status_message(msg, text));
        if (d->flags & SDLIVE_TRIGGER_ON_STALL)
                (void) sdlive_watchdog_trigger(d);
}

/* The part of a pet that runs once per interval: the progress check
 * answers, this decides and sends. While a loop stalls keepalives are
 * withheld; the first healthy pet after a stall sends the daemon's own
 * status again. */
__attribute__((noinline)) static int pet_due(sdlive *d, uint64_t due, uint64_t now) {
        uint64_t interval = atomic_load_explicit(&d->pet_interval, memory_order_relaxed);
        sdlive_stall stall;
        int r = 0;

        if (!atomic_compare_exchange_strong(&d->next_due, &due, sdlive_usec_add(now, interval)))
                return 0; /* another thread took this interval */
        if (!sdlive_owner(d))
                return 0; /* a forked child's copy speaks for nobody */
        sdlive_schedule_drain(d);

        if (sdlive_progress_check(d, now, &stall)) {
                if (!atomic_exchange(&d->stall_reported, true))
                        report_stall(d, &stall);
        } else {
                bool recovered = atomic_exchange(&d->stall_reported, false);

                atomic_store_explicit(&d->last_pet, now, memory_order_release);
                if (atomic_load_explicit(&d->armed, memory_order_relaxed))
                        r = sdlive_notify_send(d, "WATCHDOG=1", strlen("WATCHDOG=1"));
                if (recovered)
                        (void) sdlive_notify_resend_status(d);
        }
        sdlive_schedule_rearm(d);
        return r;
}

SDLIVE_EXPORT int sdlive_pet_watchdog(sdlive *d) {
        uint64_t due, now, slack;

        if (!d)
                return 0;
        due = atomic_load_explicit(&d->next_due, memory_order_relaxed);
        if (due == SDLIVE_NOT_TRACKED)
                return 0;
        slack = atomic_load_explicit(&d->coarse_slack, memory_order_relaxed);
        if (__builtin_expect(slack != 0, 1) && sdlive_clock_coarse_usec() + slack < due)
                return 0;
        now = sdlive_now(d);
        if (now < due)
                return 0;
        return pet_due(d, due, now);
}

bool sdlive_keepalive_withheld(sdlive *d) {
        sdlive_stall stall;

        return sdlive_progress_check(d, sdlive_now(d), &stall);
}

SDLIVE_EXPORT int sdlive_watchdog_enabled(const sdlive *d, uint64_t *ret_usec) {
        if (!d || !sdlive_owner(d))
                return 0;
        if (!atomic_load(&d->armed))
                return d->watchdog_error;
        if (ret_usec)
                *ret_usec = atomic_load(&d->watchdog_usec);
        return 1;
}

SDLIVE_EXPORT int sdlive_watchdog_trigger(sdlive *d) {
        return sdlive_notify_send(d, "WATCHDOG=trigger", strlen("WATCHDOG=trigger"));
}

SDLIVE_EXPORT int sdlive_watchdog_set_timeout(sdlive *d, uint64_t usec) {
        char msg[48];
        int r;

        if (usec == 0 || usec == UINT64_MAX)
                return -EINVAL;
        if (usec < SDLIVE_WATCHDOG_MIN_USEC)
                return -ERANGE;
        if (!sdlive_notify_usable(d))
                return 0;
        if (d->interval_overridden && atomic_load(&d->pet_interval) >= usec)
                return -ERANGE;
        /* The manager restarts its timer on WATCHDOG_USEC=: a keepalive. */
        if (sdlive_keepalive_withheld(d))
                return -EBUSY;

        (void) snprintf(msg, sizeof(msg), "WATCHDOG_USEC=%" PRIu64, usec);
        r = sdlive_notify_send(d, msg, strlen(msg));
        if (r < 0)
                return r;

        /* The manager restarts its timer on this message: so does the pet
         * schedule, on the new interval. */
        if (!d->interval_overridden)
                atomic_store(&d->pet_interval, derived_interval(usec));
        atomic_store(&d->watchdog_usec, usec);
        atomic_store(&d->armed, true);
        atomic_store(&d->next_due, sdlive_usec_add(sdlive_now(d), atomic_load(&d->pet_interval)));
        update_coarse_slack(d);
        sdlive_schedule_rearm(d);
        return r;
}

SDLIVE_EXPORT uint64_t sdlive_pet_interval(const sdlive *d) {
        return d ? atomic_load(&d->pet_interval) : 0;
}

SDLIVE_EXPORT uint64_t sdlive_watchdog_next_due(const sdlive *d) {
        return d ? atomic_load(&d->next_due) : SDLIVE_NOT_TRACKED;
}

SDLIVE_EXPORT int sdlive_last_pet_age(const sdlive *d, uint64_t *ret_usec) {
        if (!ret_usec)
                return -EINVAL;
        if (!d || atomic_load(&d->next_due) == SDLIVE_NOT_TRACKED)
                return -ENODATA;
        *ret_usec = sdlive_usec_sub(sdlive_now(d), atomic_load_explicit(&d->last_pet,
                                                                      memory_order_acquire));
        return 0;
}
