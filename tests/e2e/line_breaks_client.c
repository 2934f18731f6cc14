/* SPDX-License-Identifier: MIT */
/*
 * sdlive-test-line-breaks: hands the library caller strings with line
 * breaks, as a daemon might pass on text it did not write, against a real
 * manager (tests/e2e/notify-line-breaks.sh):
 *
 *   1. sdlive_notify_status() with a text whose CR and LF would each start
 *      an assignment (READY=1, STATUS=, ERRNO=, MAINPID=) were it sent as
 *      given;
 *   2. sdlive_notify_raw() with a value holding CR, then LF, then neither;
 *   3. a barrier, so the manager has read all of it; "<6>sent" with the
 *      return values;
 *   4. waits (not ready) until the file named by the first argument
 *      exists, then READY=1 and idles until SIGTERM (exit 0).
 *
 * The script reads what the manager made of it from the unit's properties.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "sdlive.h"

/* What the status text carries: were CR and LF left in, each would end
 * an assignment, and the manager would take the rest as fields. */
#define HOSTILE_STATUS "first\nREADY=1\rSTATUS=injected\nERRNO=42\r\nMAINPID=1\tend"

int main(int argc, char **argv) {
        sdlive *d = NULL;
        int status, raw_cr, raw_lf, raw_plain, barrier;

        if (argc != 2) {
                fprintf(stderr, "usage: %s GO-FILE\n", argv[0]);
                return 2;
        }
        sdlive_options o = SDLIVE_OPTIONS_INIT;

        o.flags = SDLIVE_HANDLE_SIGNALS; /* SIGTERM: a clean exit */
        if (sdlive_new(&d, &o) < 0 || sdlive_supervised(d) <= 0) {
                fprintf(stderr, "<3>not supervised\n");
                return 1;
        }
        status = sdlive_notify_status(d, "%s", HOSTILE_STATUS);
        raw_cr = sdlive_notify_raw(d, "X_PROBE", "a\rREADY=1");
        raw_lf = sdlive_notify_raw(d, "X_PROBE", "a\nREADY=1");
        raw_plain = sdlive_notify_raw(d, "X_PROBE", "a READY=1");
        barrier = sdlive_notify_barrier(d, 5 * SDLIVE_USEC_PER_SEC);
        printf("<6>sent: status %d raw-cr %d raw-lf %d raw-plain %d barrier %d\n", status, raw_cr,
               raw_lf, raw_plain, barrier);
        fflush(stdout);

        while (access(argv[1], F_OK) < 0)
                if (sdlive_idle(d, 50 * SDLIVE_USEC_PER_MSEC) != SDLIVE_WAKE_TIMEOUT)
                        return 1;
        if (sdlive_notify_ready(d) <= 0)
                return 1;
        status = sdlive_idle(d, UINT64_MAX);
        sdlive_free(d);
        return status == SDLIVE_WAKE_STOP ? 0 : 1;
}
