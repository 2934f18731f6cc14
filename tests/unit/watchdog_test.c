/* SPDX-License-Identifier: MIT */
/* The watchdog tests' armed handle (watchdog_test.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "watchdog_test.h"

sdlive *armed(fixture *f, uint64_t watchdog_usec, uint64_t interval_override) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;

        o.pet_interval_usec = interval_override;
        harness_env_watchdog(watchdog_usec);
        assert_int_equal(harness_new_fake(&f->d, &o, &f->c), 0);
        return f->d;
}
