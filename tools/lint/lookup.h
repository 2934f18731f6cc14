/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_LOOKUP_H
#define SDLIVE_LINT_LOOKUP_H

#include <stddef.h>

#include "unit.h"

/*
 * Where the system manager (systemd 252) finds a unit by name, under root
 * ("" for the host): its search path, its unit file (the "fragment"), the
 * names of that file (aliases: symlinks to it in the search path) and the
 * drop-in directories of those names. Paths are inside root.
 */
extern const char *const lookup_search_path[];
extern const size_t lookup_search_path_n;

/*
 * The unit file of name: the first directory of the search path holding
 * name (a file or a symlink), else its template's. 0 with path set, or -1.
 */
int lookup_fragment(const char *root, const char *name, char *path, size_t size);

/*
 * Adds to names every other name of the unit whose unit file is
 * fragment_base (its basename): the top-level symlinks of the search path
 * whose chain, followed inside root, ends at a file of that name. For an
 * instance of a template, an alias "a@.service" of it adds "a@instance".
 * Returns 0, or -1 when out of memory or over UNIT_LIST_MAX names.
 */
int lookup_aliases(const char *root, const char *fragment_base, const char *instance, struct unit_list *names);

/*
 * The drop-in directories that exist for a unit, in the manager's order
 * (unit_file_find_dropin_paths): for its id, then for each alias, in each
 * directory of the search path, "<name>.d", its template's, then each dash
 * prefix's ("foo-bar-baz.service": "foo-bar-.service.d", "foo-.service.d");
 * then "service.d" in each. A drop-in file name seen in an earlier
 * directory masks the same name in a later one. Returns 0, or -1.
 */
int lookup_dropin_dirs(const char *root, const char *id, const struct unit_list *aliases, struct unit_list *dirs);

#endif
