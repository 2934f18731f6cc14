/* SPDX-License-Identifier: MIT */
/*
 * The manager's file descriptor store: FDSTORE=1 passes descriptors with
 * SCM_RIGHTS, FDSTOREREMOVE=1 drops them by name. Names are checked as the
 * manager checks them (it ignores an invalid FDNAME= and files the
 * descriptors as "stored"), so a bad name is an error here, not a surprise
 * after a restart.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sdlive_internal.h"

bool sdlive_fdname_valid(const char *name) {
        size_t len = 0;

        if (!name)
                return false;
        for (; name[len]; len++) {
                unsigned char c = (unsigned char) name[len];

                if (c < 0x20 || c > 0x7e || c == ':')
                        return false;
                if (len >= SDLIVE_FDNAME_MAX)
                        return false;
        }
        return len > 0;
}

SDLIVE_EXPORT int sdlive_notify_fdstore(sdlive *d, const int *fds, size_t n_fds,
                                        const char *name, unsigned flags) {
        char msg[sizeof("FDSTORE=1\nFDNAME=\nFDPOLL=0") + SDLIVE_FDNAME_MAX];
        int len;

        if (!fds || n_fds == 0 || n_fds > SDLIVE_NOTIFY_FDS_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n_fds; i++)
                if (fds[i] < 0)
                        return -EINVAL;
        if (name && !sdlive_fdname_valid(name))
                return -EINVAL;
        if (flags & ~(unsigned) SDLIVE_FDSTORE_NO_POLL)
                return -EINVAL;
        if (!sdlive_notify_usable(d))
                return 0;

        len = snprintf(msg, sizeof(msg), "FDSTORE=1%s%s%s", name ? "\nFDNAME=" : "",
                       name ? name : "", (flags & SDLIVE_FDSTORE_NO_POLL) ? "\nFDPOLL=0" : "");
        return sdlive_notify_send_fds(d, msg, (size_t) len, fds, n_fds);
}

SDLIVE_EXPORT int sdlive_notify_fdstore_remove(sdlive *d, const char *name) {
        char msg[sizeof("FDSTOREREMOVE=1\nFDNAME=") + SDLIVE_FDNAME_MAX];
        int len;

        if (!sdlive_fdname_valid(name))
                return -EINVAL;
        if (!sdlive_notify_usable(d))
                return 0;
        len = snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
        return sdlive_notify_send(d, msg, (size_t) len);
}
