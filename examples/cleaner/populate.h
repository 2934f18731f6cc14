/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_CLEANER_POPULATE_H
#define SDLIVE_CLEANER_POPULATE_H

#include <stdint.h>

/*
 * Test helper behind --populate: creates count empty, fresh blob files under
 * root_fd in a fan-out like a content-addressed store, 256 files per leaf
 * directory: populated/<aaaa>/<bb>/<n>.blob. Existing files are kept (their
 * mtime is refreshed). Returns 0 or -errno (logged).
 */
int populate_tree(int root_fd, uint64_t count);

#endif
