/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_REPORT_H
#define SDLIVE_LINT_REPORT_H

#include <stdio.h>

#include "findings.h"

/*
 * Output. Text: one line per finding, "UNIT: CODE severity: title: evidence
 * (fix: ...)", and one "UNIT: ok: ..." line for a unit without findings.
 * JSON (json-c): one array of unit objects for the whole run, written by
 * report_json_end.
 */
void report_text(FILE *out, const struct lint_subject *s);

struct json_object;
struct json_object *report_json_begin(void);
/* Adds one unit; an unloadable unit is added with only its name and the
 * findings. Returns -1 when out of memory. */
int report_json_add(struct json_object *all, const struct lint_subject *s, const char *name);
int report_json_end(FILE *out, struct json_object *all);

#endif
