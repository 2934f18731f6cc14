/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_CLEANER_TREE_H
#define SDLIVE_CLEANER_TREE_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * The directory stack of the cleaner's walk: one open directory per level,
 * nothing kept per entry, so memory does not grow with the tree. A
 * directory is entered only on the root's file system and within
 * TREE_MAX_DEPTH levels; one found empty when it is left is removed (never
 * the root). What the pass does with the entries is pass.c's.
 */
#define TREE_MAX_DEPTH 64

typedef struct tree_level {
        DIR *dir;
        uint64_t kept;             /* entries that remain in this directory */
        bool incomplete;           /* reading failed: never treat as empty */
        char name[NAME_MAX + 1];   /* name in the parent directory */
} tree_level;

typedef struct tree {
        tree_level *stack;         /* TREE_MAX_DEPTH levels; stack[0] the root */
        unsigned depth;            /* levels open */
        dev_t root_dev;
        uint64_t dirs_removed;
        uint64_t too_deep;         /* directories skipped below TREE_MAX_DEPTH */
        /* An entry that could not be opened or removed. */
        void (*error)(void *userdata, const char *name, const char *action, int error);
        void *userdata;
} tree;

/* Enters directory name of dir_fd (st: its lstat) as the innermost level,
 * unless it is on another file system, too deep or gone (then its parent
 * keeps it). */
void tree_enter(tree *t, int dir_fd, const char *name, const struct stat *st);

/* Closes the innermost directory, removing it when it was found empty. */
void tree_leave(tree *t);

#endif
