/* SPDX-License-Identifier: MIT */
/*
 * lint-ready: a tiny Type=notify daemon for sdlive-lint's corpus that sends
 * READY=1 and then never pets: it calls no watchdog function and holds no
 * keepalive string, which is what the static check reads. Stops on SIGTERM.
 */
#include <systemd/sd-daemon.h>
#include <unistd.h>

int main(void) {
        sd_notify(0, "READY=1");
        for (;;)
                pause();
}
