/* SPDX-License-Identifier: MIT */
/* The progress tests' fixture and datagram counting (progress_test.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "progress_test.h"

static sent pending;

int progress_setup(void **state) {
        memset(&pending, 0, sizeof(pending));
        return harness_fixture_setup(state);
}

sdlive *armed(fixture *f, uint32_t flags) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;

        o.flags = flags;
        harness_env_watchdog(60 * SEC);
        assert_int_equal(harness_new_fake(&f->d, &o, &f->c), 0);
        return f->d;
}

sdlive_progress *registered_loop(fixture *f, const char *name, uint64_t limit_usec) {
        sdlive_progress *p = NULL;

        assert_int_equal(sdlive_progress_register(f->d, name, limit_usec, &p), 0);
        return p;
}

sdlive_progress *armed_loop(fixture *f, uint32_t flags, const char *name, uint64_t limit_usec) {
        armed(f, flags);
        return registered_loop(f, name, limit_usec);
}

void pump(fixture *f) {
        while (harness_recv(&f->m, f->buf, sizeof(f->buf)) >= 0) {
                pending.total++;
                if (strcmp(f->buf, "WATCHDOG=1") == 0)
                        pending.keepalives++;
                else if (strcmp(f->buf, "WATCHDOG=trigger") == 0)
                        pending.triggers++;
                else if (strncmp(f->buf, "STATUS=", 7) == 0) {
                        pending.statuses++;
                        snprintf(pending.status, sizeof(pending.status), "%s", f->buf + 7);
                }
        }
}

sent collect(fixture *f) {
        sent s;

        pump(f);
        s = pending;
        memset(&pending, 0, sizeof(pending));
        return s;
}

int pet(fixture *f) {
        int r = sdlive_pet_watchdog(f->d);

        pump(f);
        return r;
}

int pet_after(fixture *f, uint64_t usec) {
        harness_clock_advance(&f->c, usec);
        return pet(f);
}

int next_pet(fixture *f) {
        return pet_after(f, 10 * SEC);
}

