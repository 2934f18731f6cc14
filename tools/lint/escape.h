/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_ESCAPE_H
#define SDLIVE_LINT_ESCAPE_H

#include <stddef.h>

/*
 * What the linter prints comes from files it does not trust (unit text,
 * paths, a program's STATUS=). Both functions write a NUL-terminated copy of
 * in into out (size > 0), cut at a character boundary when out is short.
 */

/* Valid UTF-8 for JSON: each invalid byte becomes U+FFFD (json-c then
 * escapes the control characters). */
void escape_utf8(const char *in, char *out, size_t size);

/* For a terminal: control bytes (C0, DEL, C1) and invalid UTF-8 become
 * "\xNN"; a backslash becomes "\\". */
void escape_terminal(const char *in, char *out, size_t size);

#endif
