/* SPDX-License-Identifier: MIT */
/* Handle lifecycle and version. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdlive_internal.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

SDLIVE_EXPORT const char *sdlive_version(void) {
        return STRINGIFY(SDLIVE_VERSION_MAJOR) "." STRINGIFY(SDLIVE_VERSION_MINOR) "."
                STRINGIFY(SDLIVE_VERSION_PATCH);
}

/* Copies the caller's options, whichever sdlive.h they were compiled with.
 * A field is taken only when it lies wholly inside in->size, so an older,
 * shorter struct is never read past its end and gets defaults for the
 * fields it lacks; a newer, longer one is accepted while every byte unknown
 * here is zero. */
#define OPTIONS_HAS(size, field) \
        ((size) >= offsetof(sdlive_options, field) + sizeof(((sdlive_options *) 0)->field))

static int copy_options(sdlive_options *out, const sdlive_options *in) {
        const size_t known = sizeof(*out);

        *out = (sdlive_options) SDLIVE_OPTIONS_INIT;
        if (!in)
                return 0;
        if (!OPTIONS_HAS(in->size, size))
                return -EINVAL;
        if (in->size > known) {
                const unsigned char *tail = (const unsigned char *) in + known;
                for (size_t i = 0; i < in->size - known; i++)
                        if (tail[i])
                                return -EOPNOTSUPP;
        }
        if (OPTIONS_HAS(in->size, flags))
                out->flags = in->flags;
        if (OPTIONS_HAS(in->size, pet_interval_usec))
                out->pet_interval_usec = in->pet_interval_usec;
        if (out->flags & ~(uint32_t) (SDLIVE_HANDLE_SIGNALS | SDLIVE_UNSET_WATCHDOG_ENV |
                                      SDLIVE_TRIGGER_ON_STALL))
                return -EINVAL;
        return 0;
}

/* Everything sdlive_free() touches, in a state it can release: runs before
 * the first step that can fail. */
static void handle_init(sdlive *d, uint32_t flags) {
        d->flags = flags;
        d->pid = getpid();
        d->notify_fd = -1;
        d->stop_fd = -1;
        d->wake_fd = -1;
        atomic_init(&d->timer_fd, -1);
        atomic_init(&d->next_due, SDLIVE_NOT_TRACKED);
        (void) pthread_mutex_init(&d->timer_lock, NULL);
        (void) pthread_mutex_init(&d->status_lock, NULL);
        sdlive_progress_init(d);
}

bool sdlive_owner(const sdlive *d) {
        return getpid() == d->pid;
}

SDLIVE_EXPORT int sdlive_new(sdlive **ret, const sdlive_options *opts) {
        sdlive_options o;
        sdlive *d;
        int r;

        if (!ret)
                return -EINVAL;
        r = copy_options(&o, opts);
        if (r < 0)
                return r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        handle_init(d, o.flags);

        r = sdlive_notify_open(d, getenv("NOTIFY_SOCKET"));
        if (r >= 0)
                r = sdlive_watchdog_init(d, o.pet_interval_usec);
        if (r >= 0)
                r = sdlive_stop_init(d);
        if (r >= 0)
                r = sdlive_schedule_init(d);
        if (r < 0) {
                sdlive_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

SDLIVE_EXPORT sdlive *sdlive_free(sdlive *d) {
        if (!d)
                return NULL;
        sdlive_stop_done(d);
        sdlive_schedule_done(d);
        sdlive_notify_close(d);
        sdlive_progress_done(d);
        (void) pthread_mutex_destroy(&d->status_lock);
        free(d);
        return NULL;
}
