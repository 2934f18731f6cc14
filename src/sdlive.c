/* SPDX-License-Identifier: MIT */
/* Handle lifecycle and version. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sdlive-internal.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

SDLIVE_EXPORT const char *sdlive_version(void) {
        return STRINGIFY(SDLIVE_VERSION_MAJOR) "." STRINGIFY(SDLIVE_VERSION_MINOR) "."
                STRINGIFY(SDLIVE_VERSION_PATCH);
}

/* Copies the caller's options, whichever sdlive.h they were compiled with:
 * an older, shorter struct gets defaults for the fields it lacks; a newer,
 * longer one is accepted only while the fields unknown here are zero. */
static int copy_options(sdlive_options *out, const sdlive_options *in) {
        const size_t known = sizeof(*out);

        *out = (sdlive_options) SDLIVE_OPTIONS_INIT;
        if (!in)
                return 0;
        if (in->size < offsetof(sdlive_options, pet_interval_usec) + sizeof(uint64_t))
                return -EINVAL;
        if (in->size > known) {
                const unsigned char *tail = (const unsigned char *) in + known;
                for (size_t i = 0; i < in->size - known; i++)
                        if (tail[i])
                                return -EOPNOTSUPP;
        }
        memcpy(out, in, known);
        out->size = known;
        if (out->flags & ~(uint32_t) (SDLIVE_HANDLE_SIGNALS | SDLIVE_UNSET_WATCHDOG_ENV |
                                      SDLIVE_TRIGGER_ON_STALL))
                return -EINVAL;
        return 0;
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
        d->flags = o.flags;
        d->stop_fd = -1;
        (void) pthread_mutex_init(&d->status_lock, NULL);
        sdlive_progress_init(d);

        r = sdlive_notify_open(d, getenv("NOTIFY_SOCKET"));
        if (r >= 0)
                r = sdlive_watchdog_init(d, o.pet_interval_usec);
        if (r >= 0)
                r = sdlive_stop_init(d);
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
        sdlive_watchdog_done(d);
        sdlive_notify_close(d);
        sdlive_progress_done(d);
        (void) pthread_mutex_destroy(&d->status_lock);
        free(d);
        return NULL;
}
