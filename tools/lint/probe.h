/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_PROBE_H
#define SDLIVE_LINT_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unit.h"

/*
 * The probe: runs a unit's command as the manager would for notify
 * purposes, on a notify socket of the linter's own, and records what it
 * says. Times are microseconds since the command was started. Keepalives
 * are counted as the manager would count them under the unit's
 * NotifyAccess= (main: from the main pid only; all: from any process of the
 * command), so a gap is a gap the manager would see.
 */
#define PROBE_GAPS_MAX 4096   /* keepalive gaps kept for the median */
#define PROBE_MESSAGES_MAX 100000 /* datagrams read; more are ignored */

struct probe_result {
        pid_t main_pid;
        bool started;
        char error[512];          /* why it could not be started */
        uint64_t duration_usec;   /* how long it ran before being stopped */
        bool exited;              /* exited on its own before the end */
        int exit_status;          /* wait status, when exited */
        uint64_t messages;        /* datagrams received */

        bool ready;               /* READY=1 the manager would accept */
        uint64_t ready_usec;
        bool ready_foreign;       /* READY=1 from a pid the manager would ignore */
        pid_t ready_foreign_pid;

        uint64_t keepalives;      /* WATCHDOG=1 the manager would accept */
        uint64_t keepalives_child;/* of those, from a process other than the main pid */
        pid_t child_pid;          /* one such sender */
        uint64_t keepalives_ignored; /* from a pid NotifyAccess= excludes */
        uint64_t first_keepalive_usec, last_keepalive_usec;
        uint64_t max_gap_usec;    /* largest gap: start or READY=1 to the first, between, last to the end */
        uint64_t gaps[PROBE_GAPS_MAX];
        size_t n_gaps;            /* gaps between two keepalives, the first PROBE_GAPS_MAX */
        char status[256];         /* the last STATUS= */
        char watchdog_usec_sent[32]; /* a WATCHDOG_USEC= the command sent itself */
};

/*
 * Runs the unit's first ExecStart= command (words already split and
 * expanded into argv, path resolved into exec_path) for seconds, with
 * WATCHDOG_USEC=watchdog_usec (0: not armed) and WATCHDOG_PID, the unit's
 * Environment=, and fresh directories for its StateDirectory= and friends;
 * then SIGTERM to its process group and, after 2 s, SIGKILL. Returns 0, or
 * -1 when the probe could not run (r->error says why).
 */
int probe_run(const struct unit *u, const char *exec_path, char *const *argv, uint64_t watchdog_usec,
              double seconds, struct probe_result *r);

/* The median of the gaps between keepalives, 0 with fewer than one gap. */
uint64_t probe_median_gap(const struct probe_result *r);

#endif
