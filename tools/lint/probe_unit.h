/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_PROBE_UNIT_H
#define SDLIVE_LINT_PROBE_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A unit whose ExecStart= runs sdlive-probe (docs/probe.md): the probe pets
 * for the daemon it runs while its health probes pass. Its command line is
 * read by sdlive-probe's own option parser (tools/probe/config.c), in a
 * child process, since the parser ends its process on a refusal; nothing
 * is looked up and nothing is started.
 */

enum probe_unit_state {
        PROBE_UNIT_NOT,       /* the program is not sdlive-probe */
        PROBE_UNIT_OK,        /* the options are what sdlive-probe accepts */
        PROBE_UNIT_REFUSED,   /* sdlive-probe would refuse them: exit 2, message */
        PROBE_UNIT_UNCHECKED, /* not checked: message says why */
};

struct probe_unit {
        enum probe_unit_state state;
        char message[512];         /* REFUSED, UNCHECKED: one line, as printed */
        uint64_t bound_usec;       /* OK: period x failureThreshold + timeout, the longest */
        uint64_t startup_grace_usec; /* OK */
        unsigned n_probes;         /* OK */
        int command_at;            /* OK: argv[command_at] is the daemon's program */
};

/* Whether path names sdlive-probe (its file name). */
bool probe_unit_is_probe(const char *path);

/* Fills *out (all of it) for the command line argv (argv[0] the program,
 * argc words). */
void probe_unit_read(char *const *argv, int argc, struct probe_unit *out);

#endif
