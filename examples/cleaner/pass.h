/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_CLEANER_PASS_H
#define SDLIVE_CLEANER_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include <sdlive.h>

#include "fault.h"
#include "tree.h"

/*
 * One cleaning pass over a blob directory: an iterative depth-first walk
 * (one open directory per level, nothing else kept per entry, so memory does
 * not grow with the number of entries) that
 *   - deletes regular files whose mtime is older than max_age,
 *   - deletes "*.partial" files (interrupted uploads) older than
 *     partial_max_age,
 *   - removes directories left empty (never the root),
 * and leaves everything else alone: symlinks are not followed, other file
 * systems are not entered, directories deeper than PASS_MAX_DEPTH are skipped.
 * Ages are measured against the wall clock at the start of the pass.
 *
 * Per entry it pets the watchdog (cheap when not due), checks for a stop and
 * for the wedge file, paces itself to max_rate entries per second by idling
 * (which pets) and refreshes STATUS= about once a second.
 */
#define PASS_MAX_DEPTH TREE_MAX_DEPTH

typedef struct pass_config {
        int root_fd;                   /* the blob directory, O_DIRECTORY */
        uint64_t max_age_usec;
        uint64_t partial_max_age_usec;
        uint64_t max_rate;             /* entries per second; 0 = unlimited */
        uint64_t number;               /* pass number, for STATUS= */
        sdlive *d;
        const fault_switch *wedge;
} pass_config;

typedef struct pass_stats {
        uint64_t scanned;              /* entries seen, any type */
        uint64_t blobs_deleted;
        uint64_t partials_deleted;
        uint64_t dirs_removed;
        uint64_t errors;               /* entries that could not be examined or removed */
        uint64_t too_deep;             /* directories skipped below PASS_MAX_DEPTH */
        uint64_t duration_usec;
} pass_stats;

/* Runs one pass. Returns 0 when the pass completed, SDLIVE_WAKE_STOP when a
 * stop was requested (the pass is abandoned), -errno when the root cannot be
 * read (logged). Problems with single entries are logged and counted. Every
 * field of *ret_stats is written: what the pass counted (so far, with
 * SDLIVE_WAKE_STOP), zero with -errno. */
int pass_run(const pass_config *c, pass_stats *ret_stats);

/* The daemon's loop: passes until a stop (or one pass with once), each
 * logged, then STATUS= and sdlive_idle() (which pets) for interval_usec
 * between passes; the wedge switch is checked before each. Counts passes
 * in c->number. Returns the exit status. */
int pass_loop(pass_config *c, uint64_t interval_usec, bool once);

#endif
