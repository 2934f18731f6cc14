/* SPDX-License-Identifier: MIT */
/* A daemon's view of libsdlive, built against the installed tree. Outside
 * systemd (NOTIFY_SOCKET unset) every call must succeed as a no-op. */
#include <sdlive.h>
#include <stdio.h>
#include <string.h>

int main(void) {
        sdlive_options opts = SDLIVE_OPTIONS_INIT;
        char version[32];
        sdlive *d = NULL;

        snprintf(version, sizeof(version), "%d.%d.%d", SDLIVE_VERSION_MAJOR, SDLIVE_VERSION_MINOR,
                 SDLIVE_VERSION_PATCH);
        if (strcmp(sdlive_version(), version) != 0)
                return fprintf(stderr, "header %s, library %s\n", version, sdlive_version()), 1;
        if (sdlive_new(&d, &opts) < 0)
                return fprintf(stderr, "sdlive_new failed\n"), 1;
        if (sdlive_notify_ready(d) != 0 || sdlive_pet_watchdog(d) != 0)
                return fprintf(stderr, "unsupervised calls must return 0\n"), 1;
        d = sdlive_free(d);
        printf("consumer ok: libsdlive %s\n", sdlive_version());
        return 0;
}
