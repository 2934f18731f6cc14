/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_WORDS_H
#define SDLIVE_LINT_WORDS_H

#include <stdbool.h>

#include "unit.h"

/* Where the manager expands a setting's specifiers. */
enum words_specifiers {
        WORDS_PLAIN,        /* none (RestartPreventExitStatus=) */
        WORDS_EXPAND_WORDS, /* in each word once split (ExecStart=, StateDirectory=) */
        WORDS_EXPAND_TEXT,  /* in the whole value, then split (Environment=) */
};

/*
 * Splits text into at most max words (each malloc'd) as the manager splits
 * a command line or a list setting: whitespace separates, double and single
 * quotes group, a backslash outside single quotes starts a C escape (\n,
 * \t, \s, \xNN ...). Specifiers are expanded where mode says, with the
 * system manager's values: %i %I (the instance, raw and unescaped), %n %N
 * (the name, without its suffix), %p %P (the prefix), %j %J (its last
 * dash-separated part), %f, %t %S %C %L %E %T %V (the system directories),
 * %h %u %U %g %G %s (root's) and %%; others are left as written. Returns
 * the number of words, or -1 on bad quoting, too many words or no memory
 * (nothing is left allocated then).
 */
int words_split(const struct unit *u, const char *text, char **words, int max, enum words_specifiers mode);

#endif
