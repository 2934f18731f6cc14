/* SPDX-License-Identifier: MIT */
#include "supervision.h"

#include <signal.h>
#include <string.h>

#include "duration.h"
#include "log.h"

int supervision_start(sdlive **ret, uint32_t flags) {
        sdlive_options opts = SDLIVE_OPTIONS_INIT;
        char timeout_text[DURATION_FORMAT_MAX], interval_text[DURATION_FORMAT_MAX];
        uint64_t timeout;
        sdlive *d;
        int r;

        /* A peer that closes while we write must cost an EPIPE, never the
         * daemon: OpenSSL's socket BIO writes with write(2). systemd starts
         * services with SIGPIPE ignored (IgnoreSIGPIPE=yes); the daemons
         * ignore it themselves so that they behave the same outside it. */
        (void) signal(SIGPIPE, SIG_IGN);
        opts.flags = flags;
        r = sdlive_new(&d, &opts);
        if (r < 0) {
                log_error("cannot set up supervision: %s", strerror(-r));
                return r;
        }

        r = sdlive_supervised(d);
        if (r < 0)
                log_warning("NOTIFY_SOCKET is unusable (%s): running unsupervised", strerror(-r));
        else if (r == 0)
                log_info("not supervised by systemd (no NOTIFY_SOCKET)");

        r = sdlive_watchdog_enabled(d, &timeout);
        if (r < 0)
                log_warning("watchdog environment is malformed (%s): watchdog not armed", strerror(-r));
        else if (r > 0)
                log_info("watchdog armed: WatchdogSec=%s, keepalive every %s",
                         duration_format(timeout_text, sizeof(timeout_text), timeout),
                         duration_format(interval_text, sizeof(interval_text), sdlive_pet_interval(d)));
        else if (sdlive_supervised(d) > 0)
                log_info("supervised by systemd, watchdog not armed");
        *ret = d;
        return 0;
}
