/* SPDX-License-Identifier: MIT */
/*
 * Progress loops: a keepalive proves only that some code reached a pet. The
 * loops a daemon registers must each beat within their limit, or keepalives
 * are withheld and the manager restarts the daemon.
 *
 * Beats touch one atomic in the loop's slot. The check runs on the due-pet
 * path only (once per pet interval) and only answers: which loop stalls,
 * for how long; the watchdog decides what to send. It holds progress_lock,
 * as do register and unregister, so a loop is seen either registered or
 * gone, never half.
 * Slots live inside the handle: no allocation, and a stale pointer after
 * unregister cannot touch freed memory.
 */
#include <errno.h>
#include <stdio.h>

#include "sdlive_internal.h"

void sdlive_progress_init(sdlive *d) {
        (void) pthread_mutex_init(&d->progress_lock, NULL);
        atomic_init(&d->stalled_loop, NULL);
        for (size_t i = 0; i < SDLIVE_PROGRESS_MAX; i++)
                atomic_init(&d->loops[i].last_beat, 0);
}

void sdlive_progress_done(sdlive *d) {
        (void) pthread_mutex_destroy(&d->progress_lock);
}

/* The stalled loop with the longest overrun, or NULL. Under progress_lock. */
static const struct sdlive_progress *find_stalled(const sdlive *d, uint64_t now,
                                                  uint64_t *ret_silence) {
        const struct sdlive_progress *worst = NULL;
        uint64_t worst_overrun = 0;

        for (size_t i = 0; i < SDLIVE_PROGRESS_MAX; i++) {
                const struct sdlive_progress *p = &d->loops[i];
                uint64_t beat, silence;

                if (!p->in_use)
                        continue;
                beat = atomic_load_explicit(&p->last_beat, memory_order_acquire);
                if (beat & SDLIVE_PARKED)
                        continue;
                silence = sdlive_usec_sub(now, beat);
                if (silence > p->max_silence_usec &&
                    (!worst || silence - p->max_silence_usec > worst_overrun)) {
                        worst = p;
                        worst_overrun = silence - p->max_silence_usec;
                        *ret_silence = silence;
                }
        }
        return worst;
}

bool sdlive_progress_check(sdlive *d, uint64_t now, sdlive_stall *ret) {
        const struct sdlive_progress *stalled;
        uint64_t silence = 0;

        (void) pthread_mutex_lock(&d->progress_lock);
        stalled = find_stalled(d, now, &silence);
        atomic_store(&d->stalled_loop, (struct sdlive_progress *) stalled);
        if (stalled) {
                (void) snprintf(ret->name, sizeof(ret->name), "%s", stalled->name);
                ret->silence_usec = silence;
                ret->limit_usec = stalled->max_silence_usec;
        }
        (void) pthread_mutex_unlock(&d->progress_lock);
        return stalled != NULL;
}

SDLIVE_EXPORT int sdlive_progress_register(sdlive *d, const char *name,
                                           uint64_t max_silence_usec, sdlive_progress **ret) {
        struct sdlive_progress *p = NULL;

        if (!d || !name || !*name || !ret || max_silence_usec == 0 ||
            max_silence_usec == UINT64_MAX)
                return -EINVAL;

        (void) pthread_mutex_lock(&d->progress_lock);
        for (size_t i = 0; i < SDLIVE_PROGRESS_MAX && !p; i++)
                if (!d->loops[i].in_use)
                        p = &d->loops[i];
        if (p) {
                p->owner = d;
                p->max_silence_usec = max_silence_usec;
                (void) snprintf(p->name, sizeof(p->name), "%s", name);
                atomic_store(&p->last_beat, sdlive_now(d));
                p->in_use = true;
        }
        (void) pthread_mutex_unlock(&d->progress_lock);

        if (!p)
                return -ENOSPC;
        *ret = p;
        return 0;
}

SDLIVE_EXPORT void sdlive_progress_beat(sdlive_progress *p) {
        sdlive *d;

        if (!p)
                return;
        d = p->owner;
        atomic_store_explicit(&p->last_beat, sdlive_now(d), memory_order_release);
        /* A beat of the loop that keeps keepalives withheld makes the next
         * pet due at once, waking sleepers and the timerfd: a recovered
         * daemon must not wait out another interval with the manager's
         * timer already running low. Beats of healthy loops leave the
         * schedule alone (one relaxed load). */
        if (__builtin_expect(atomic_load_explicit(&d->stalled_loop, memory_order_relaxed) == p, 0) &&
            atomic_exchange(&d->stalled_loop, NULL) == p)
                sdlive_schedule_hasten(d);
}

SDLIVE_EXPORT void sdlive_progress_park(sdlive_progress *p) {
        if (p)
                atomic_fetch_or_explicit(&p->last_beat, SDLIVE_PARKED, memory_order_release);
}

SDLIVE_EXPORT sdlive_progress *sdlive_progress_unregister(sdlive_progress *p) {
        if (!p)
                return NULL;
        (void) pthread_mutex_lock(&p->owner->progress_lock);
        p->in_use = false;
        /* A stalled loop that goes away no longer withholds anything. */
        if (atomic_load(&p->owner->stalled_loop) == p) {
                atomic_store(&p->owner->stalled_loop, NULL);
                sdlive_schedule_hasten(p->owner);
        }
        (void) pthread_mutex_unlock(&p->owner->progress_lock);
        return NULL;
}

SDLIVE_EXPORT int sdlive_progress_age(const sdlive_progress *p, uint64_t *ret_usec) {
        uint64_t beat;

        if (!p || !ret_usec)
                return -EINVAL;
        beat = atomic_load_explicit(&p->last_beat, memory_order_acquire);
        *ret_usec = sdlive_usec_sub(sdlive_now(p->owner), beat & ~SDLIVE_PARKED);
        return (beat & SDLIVE_PARKED) ? 1 : 0;
}

SDLIVE_EXPORT int sdlive_progress_stalled(sdlive *d, char *name, size_t size) {
        const struct sdlive_progress *p;
        uint64_t silence = 0;

        if (!d)
                return 0;
        (void) pthread_mutex_lock(&d->progress_lock);
        p = find_stalled(d, sdlive_now(d), &silence);
        if (p && name && size)
                (void) snprintf(name, size, "%s", p->name);
        (void) pthread_mutex_unlock(&d->progress_lock);
        return p != NULL;
}
