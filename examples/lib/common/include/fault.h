/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_FAULT_H
#define SDLIVE_EXAMPLE_FAULT_H

#include <stdbool.h>

/*
 * Fault injection for the end-to-end tests and for demonstrations: a file
 * whose appearance makes the loop that checks for it hang forever, without
 * petting, while the daemon's other threads keep running — the failure the
 * watchdog exists for. Off unless a path is configured.
 */
typedef struct fault_switch {
        const char *path; /* NULL: off */
        const char *what; /* "main loop", "executor", ... for the log */
} fault_switch;

/* Configures the switch (every field) from the option value, else from
 * the environment variable env; neither set leaves it off. Logs a notice
 * when it is on. */
void fault_switch_init(fault_switch *f, const char *what, const char *option_path, const char *env);

/* When the switch is on and its file exists: logs a warning and blocks the
 * calling thread forever; never returns. Otherwise returns at once (one
 * access() call when on, nothing when off). Signals do not end the hang. */
void fault_switch_check(const fault_switch *f);

#endif
