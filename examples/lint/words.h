/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_WORDS_H
#define SDLIVE_LINT_WORDS_H

#include <stdbool.h>

#include "unit.h"

/*
 * Splits text into at most max words (each malloc'd) as the manager splits
 * a command line or a list setting: whitespace separates, double and single
 * quotes group, a backslash escapes the next character. With specifiers,
 * %i %I (the instance), %n (the unit name), %N (the name without suffix),
 * %p (the prefix before '@' or the suffix) and %% are expanded first.
 * Returns the number of words, or -1 on bad quoting, too many words or no
 * memory (nothing is left allocated then).
 */
int words_split(const struct unit *u, const char *text, char **words, int max, bool specifiers);

#endif
