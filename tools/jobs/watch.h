/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_JOBS_WATCH_H
#define SDLIVE_JOBS_WATCH_H

#include <stddef.h>

#include "store.h"

/*
 * sdlive-jobs --watch: redraws the newest runs once a second (counts by
 * state, jobs done per second since the last frame, a progress bar for a
 * run not yet complete), the oldest in-flight job and the lease. On a
 * terminal each frame replaces the last (cursor home, clear); otherwise
 * frames follow each other. Stops on SIGINT or SIGTERM, or after count
 * frames (0: never). Returns 0, or 1 when the store could not be read.
 */
int watch_runs(struct store *s, size_t max_runs, const char *lease, unsigned count);

#endif
