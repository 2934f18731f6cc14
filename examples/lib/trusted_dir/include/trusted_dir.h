/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_TRUSTED_DIR_H
#define SDLIVE_EXAMPLE_TRUSTED_DIR_H

#include <stddef.h>

/*
 * Directories a daemon creates or changes files in while it may run as
 * root. A directory is trusted when it and every directory above it is
 * owned by root or by the effective user and is writable by group or
 * others only when it is sticky (like /tmp, where nobody can rename or
 * remove an entry they do not own). In a trusted directory no other user
 * can swap one of our entries for a link between two of our calls.
 */

/* Opens directory `path` (O_PATH, close-on-exec) if it is trusted. Links in
 * path are resolved first and the result is walked from / without following
 * any link, so a component swapped for a link meanwhile is refused. Returns
 * the descriptor or -errno: -EPERM (a directory others could change: `why`
 * names it), -ENOTDIR, -ENOENT ... */
int trusted_dir_open(const char *path, char *why, size_t size);

/* As trusted_dir_open(), and the directory itself is writable by its owner
 * only: not by group or others, sticky or not. For directories whose
 * entries are trusted by name (a store's side files, a lease record): in a
 * sticky directory another user could still create a name of ours first.
 * -EPERM with `why` when it is writable by others. */
int trusted_dir_open_private(const char *path, char *why, size_t size);

/* Splits path into its directory (copied into dir, "." when there is none)
 * and its last component (a pointer into path). -EINVAL when the last
 * component is empty, "." or "..", -ENAMETOOLONG when dir does not fit. */
int trusted_dir_split(const char *path, char *dir, size_t size, const char **name);

/* Whether `name` in directory dir_fd is a socket owned by the effective user
 * (never following a link): 1 yes, 0 absent, -EEXIST something else is there,
 * or -errno. */
int trusted_dir_our_socket(int dir_fd, const char *name);

#endif
