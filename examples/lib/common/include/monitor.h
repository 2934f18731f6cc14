/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_MONITOR_H
#define SDLIVE_EXAMPLE_MONITOR_H

#include <sdlive.h>

/*
 * A background thread that watches the daemon's keepalives from outside the
 * main loop: it logs a warning when they stop (the main loop is wedged, or a
 * registered progress loop stalled and they are withheld) and a notice when
 * they resume. It never pets: a timer thread that pets would keep a wedged
 * daemon alive. Samples at the pet interval (at most once a second) while
 * pets are tracked; otherwise it only waits to be stopped.
 */
typedef struct monitor monitor;

/* Starts the thread. 0 or -errno (logged). */
int monitor_start(monitor **ret, sdlive *d);

/* Stops and joins the thread; accepts NULL. Returns NULL. */
monitor *monitor_stop(monitor *m);

#endif
