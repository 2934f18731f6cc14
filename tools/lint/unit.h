/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_UNIT_H
#define SDLIVE_LINT_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A service unit as the manager sees it after merging its drop-ins: only the
 * [Service] settings the liveness checks read. Every string is owned by the
 * unit (unit_free). Times are in microseconds; UNIT_INFINITY means
 * "infinity" (or 0, which the manager also reads as disabled).
 */
#define UNIT_INFINITY UINT64_MAX
#define UNIT_LIST_MAX 256   /* entries kept per list setting (more: error) */
#define UNIT_LINE_MAX 65536 /* one logical line, continuations joined */
#define UNIT_FILES_MAX 64   /* the unit file and its drop-ins */
#define UNIT_FILE_SIZE_MAX 4194304 /* bytes read of one file (more: error) */

struct unit_list {
        char **items;
        size_t n;
};

struct unit {
        char *name;                     /* e.g. sdlive-cluster@node1.service */
        char *instance;                 /* the part after '@', or NULL */
        char *root;                     /* "" or the tree the files are in */
        char *files[UNIT_FILES_MAX];    /* the unit file, then each drop-in applied, inside root */
        size_t n_files;

        char *type;                     /* as written, NULL: not set */
        bool has_bus_name;             /* BusName= set: activated by its bus name */
        bool has_sockets;              /* Sockets= set: activated by its sockets */
        char *notify_access;            /* as written, NULL: not set */
        bool watchdog_set;              /* WatchdogSec= set to a nonzero time */
        uint64_t watchdog_usec;
        char *watchdog_signal;          /* NULL: SIGABRT */
        char *restart;                  /* NULL: "no" */
        bool timeout_start_set;
        uint64_t timeout_start_usec;    /* UNIT_INFINITY: none */
        struct unit_list exec_start;    /* each ExecStart= line, raw */
        struct unit_list restart_prevent; /* RestartPreventExitStatus= words */
        struct unit_list environment;   /* Environment= assignments, unquoted */
        struct unit_list state_dirs;    /* StateDirectory= and friends, "KIND=dir" */
        struct unit_list notes;         /* what was ignored, as the manager ignores it */
};

/*
 * Loads a unit. spec is a path (contains '/'; drop-ins from "<path>.d/"
 * beside it) or a unit name looked up under root (NULL or "" for /) as the
 * system manager looks it up (lookup.h): its file, then the drop-ins of its
 * names' directories applied in file-name order, later ones overriding.
 * What the manager ignores (a line without '=', a drop-in that is not a
 * file) goes to u->notes. Files are opened under root (files.h). On error
 * returns -1 with a message in err.
 */
int unit_load(const char *spec, const char *root, struct unit *u, char *err, size_t err_size);
void unit_free(struct unit *u);

/* A list of the unit's: add a copy (-1: out of memory or UNIT_LIST_MAX
 * reached), or free all. */
int unit_list_add(struct unit_list *l, const char *item);
void unit_list_reset(struct unit_list *l);

/* The effective values, defaults applied as the manager applies them. */
const char *unit_type(const struct unit *u);          /* simple, notify, dbus, ... */
const char *unit_notify_access(const struct unit *u); /* none, main, exec, all */
const char *unit_restart(const struct unit *u);       /* no, on-failure, ... */
uint64_t unit_timeout_start(const struct unit *u);    /* default 90 s */

/*
 * systemd time span ("3min", "10s", "1min 30s", "500ms", a bare number in
 * seconds, "infinity"). 0 or -1 on a malformed span.
 */
int unit_parse_timespan(const char *text, uint64_t *ret_usec);

/*
 * Splits a command line into words the way the manager does (double and
 * single quotes, C escapes), then expanding each word's specifiers
 * (words_split); u NULL: no specifiers.
 * Returns the number of words (at most max) or -1 on bad quoting.
 */
int unit_split_words(const struct unit *u, const char *line, char **words, int max);

#endif
