/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_CLEANER_PASS_STATE_H
#define SDLIVE_CLEANER_PASS_STATE_H

/* A pass's state, shared by pass.c (the entries) and tree.c (entering and
 * leaving directories); private to the cleaner. */

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pass.h"

typedef struct frame {
        DIR *dir;
        uint64_t kept;             /* entries that remain in this directory */
        bool incomplete;           /* reading failed: never treat as empty */
        char name[NAME_MAX + 1];   /* name in the parent directory */
} frame;

typedef struct pass {
        const pass_config *config;
        pass_stats stats;
        frame *stack;
        unsigned depth;
        dev_t root_dev;
        uint64_t now_wall_usec;    /* wall clock at the start: ages are measured against it */
        uint64_t start_usec;       /* CLOCK_MONOTONIC */
        uint64_t next_status_usec;
} pass;

/* Counts an entry that could not be examined or removed, and logs the
 * first few of a pass. */
void pass_entry_error(pass *p, const char *name, const char *action, int error);

/* Enters directory name of dir_fd (st: its lstat) as the innermost level,
 * unless it is on another file system, too deep or gone (then it counts
 * as kept by its parent). */
void tree_enter(pass *p, int dir_fd, const char *name, const struct stat *st);

/* Closes the innermost directory, removing it when it was found empty. */
void tree_leave(pass *p);

#endif
