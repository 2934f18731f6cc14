/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_FILES_H
#define SDLIVE_LINT_FILES_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * Opening what a unit names without trusting it. A path is resolved under
 * root (NULL or "": the host) by the kernel (openat2 RESOLVE_IN_ROOT): an
 * absolute symlink inside the tree stays inside the tree, ".." stops at its
 * top. The file's type is read from an O_PATH descriptor before anything is
 * opened for reading, so a FIFO, a device or a socket is never opened (an
 * open of a FIFO blocks; an open of some devices acts), and reading is
 * non-blocking.
 */

/*
 * Opens path for reading if it is a regular file; st receives its status.
 * Returns the descriptor, or -1 with errno set and a reason in err (a FIFO,
 * a device, a directory ...: EINVAL, "not a regular file: a FIFO").
 */
int files_open_regular(const char *root, const char *path, struct stat *st, char *err, size_t err_size);

/* Opens a directory under root (O_DIRECTORY); -1 with errno if it is none. */
int files_open_dir(const char *root, const char *path);

/*
 * Status of path under root, symlinks followed inside it, without opening
 * it for reading (an O_PATH descriptor). 0, or -1 with errno set.
 */
int files_stat(const char *root, const char *path, struct stat *st);

/*
 * The path a symlink chain under root ends at, as seen inside root
 * ("/lib/systemd/system/foo.service"). 0, or -1 with errno set.
 */
int files_resolve(const char *root, const char *path, char *out, size_t size);

/*
 * Reads at most max bytes of fd into a NUL-terminated malloc'd buffer.
 * Returns the length, -1 with errno on a read error, or -2 when the file
 * holds more than max bytes (nothing allocated then).
 */
long files_read_bounded(int fd, size_t max, char **ret);

/*
 * The target of the symlink path names under root (its last component not
 * followed), NUL-terminated. 0, or -1 with errno (EINVAL: not a symlink).
 */
int files_readlink(const char *root, const char *path, char *out, size_t size);

/* "a FIFO", "a directory", "a character device" ... for st's type. */
const char *files_type_name(mode_t mode);

#endif
