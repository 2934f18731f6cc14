/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_FINDINGS_H
#define SDLIVE_LINT_FINDINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "binary.h"
#include "probe.h"
#include "probe_unit.h"
#include "unit.h"

/*
 * The findings. Codes are stable (documented in sdlive-lint(8) and
 * docs/lint.md; a code is never reused for another meaning). Errors and
 * warnings make the exit status 1; notes (info) do not.
 */
enum severity { SEVERITY_ERROR, SEVERITY_WARNING, SEVERITY_INFO };

#define FINDINGS_MAX 16

struct finding {
        const char *code;  /* "SDL001" */
        enum severity severity;
        const char *title; /* "armed but never pets" */
        char evidence[768];
        char fix[384];
};

/* What the checks of one unit take and give. */
struct lint_subject {
        const struct unit *unit;
        const struct binary *binary;
        const struct probe_result *probe; /* NULL: not probed */
        const struct probe_unit *probe_unit; /* NULL: the program is not sdlive-probe */
        const struct binary *probed_daemon;  /* the daemon sdlive-probe runs (NULL: none read) */
        uint64_t probe_watchdog_usec;     /* the WATCHDOG_USEC the probe gave (0: none) */
        struct finding findings[FINDINGS_MAX];
        int n_findings;
};

/* Runs every check that applies; fills s->findings. */
void lint_check(struct lint_subject *s);

/* A finding of its own, for what stops the checks (no unit, no ExecStart=). */
void lint_add(struct lint_subject *s, const char *code, enum severity sev, const char *title,
              const char *fix, const char *format, ...) __attribute__((format(printf, 6, 7)));

const char *severity_name(enum severity sev);

/* Does the restart policy restart a unit the watchdog killed? Why not goes
 * to why. */
bool lint_restarts_after_watchdog(const struct unit *u, char *why, size_t size);

#endif
