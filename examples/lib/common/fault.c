/* SPDX-License-Identifier: MIT */
#include "fault.h"

#include <stdlib.h>
#include <unistd.h>

#include "log.h"

void fault_switch_init(fault_switch *f, const char *what, const char *option_path, const char *env) {
        *f = (fault_switch) {
                .what = what,
                .path = option_path && option_path[0] ? option_path : getenv(env),
        };
        if (f->path && !f->path[0])
                f->path = NULL;
        if (f->path)
                log_notice("fault injection armed: %s hangs once %s exists", what, f->path);
}

void fault_switch_check(const fault_switch *f) {
        if (!f->path || access(f->path, F_OK) < 0)
                return;
        log_warning("fault injected: %s found, %s hangs now without petting", f->path, f->what);
        /* A signal handler may run and return; the hang goes on. */
        for (;;)
                pause();
}
