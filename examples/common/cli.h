/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLES_CLI_H
#define SDLIVE_EXAMPLES_CLI_H

#include <stdint.h>
#include <stdnoreturn.h>

/*
 * Command-line conventions shared by the reference daemons.
 * Exit statuses: 0 success (also after SIGTERM), 1 runtime failure (missing
 * directory, socket in use, ...), 2 bad usage (unknown option, bad value).
 */
#define EXIT_USAGE 2

/* Logs "<option>: <message>" at error level and a hint to --help, exits 2. */
noreturn void cli_usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The value of a duration option (see duration_parse()); exits 2 when bad. */
uint64_t cli_duration(const char *option, const char *arg);

/* The value of a count option: a whole decimal number; exits 2 when bad. */
uint64_t cli_count(const char *option, const char *arg);

/* Prints "<program> (sdlive <library version>)" to stdout. */
void cli_print_version(void);

/* The getopt_long() results every daemon treats alike, for the default case
 * of its switch (optstring ":hV"): 'h' prints usage and exits 0, 'V' the
 * version and exits 0, a missing value or an unknown option exits 2. */
noreturn void cli_common_option(int c, int argc, char **argv, void (*usage)(void));

/* Exits 2 when operands follow the options: the daemons take none. */
void cli_no_operands(int argc, char **argv);

/*
 * First directory listed in a systemd directory variable ($STATE_DIRECTORY,
 * $RUNTIME_DIRECTORY; several are separated by ':'). NULL when unset or
 * empty. The result is malloc()ed; exits 1 when out of memory.
 */
char *cli_systemd_dir(const char *variable);

/* 0 when path is an existing directory; otherwise logs "<what> <path>: ..."
 * at error level and returns -errno (-ENOTDIR for a non-directory). */
int cli_require_dir(const char *what, const char *path);

#endif
