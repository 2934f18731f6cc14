/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_CLI_H
#define SDLIVE_EXAMPLE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "address.h"

/*
 * Command-line conventions shared by the reference daemons.
 * Exit statuses: 0 success (also after SIGTERM), 1 runtime failure (missing
 * directory, socket in use, ...), 2 bad usage (unknown option, bad value).
 */
#define EXIT_USAGE 2

/* Logs "<program>: <message> (see --help)" as one line at error level
 * (control characters in it are blanked) and exits 2. */
noreturn void cli_usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The longest duration any option takes unless it says less: a year. */
#define CLI_DURATION_MAX (UINT64_C(365) * 24 * 3600 * 1000000)
/* The largest count any option takes unless it says less. */
#define CLI_COUNT_MAX ((uint64_t) INT64_MAX)

/* The value of a duration option (see duration_parse()) within
 * [min_usec, max_usec]; otherwise exits 2 naming the option, the value and
 * the range. */
uint64_t cli_duration_range(const char *option, const char *arg, uint64_t min_usec, uint64_t max_usec);
/* cli_duration_range(option, arg, 0, CLI_DURATION_MAX). */
uint64_t cli_duration(const char *option, const char *arg);

/* A whole decimal number (digits only: no sign, no spaces) within
 * [min, max]; otherwise exits 2 naming the option, the value and the range. */
uint64_t cli_number(const char *option, const char *arg, uint64_t min, uint64_t max);
/* cli_number(option, arg, 0, CLI_COUNT_MAX). */
uint64_t cli_count(const char *option, const char *arg);

/* NULL when text has 1 to max_len bytes and no control character (bytes
 * below 0x20 and 0x7f); otherwise a static phrase saying what is wrong. */
const char *cli_text_problem(const char *text, size_t max_len);
/* arg when cli_text_problem() finds nothing; otherwise exits 2. */
const char *cli_text(const char *option, const char *arg, size_t max_len);
/* A path: 1 to PATH_MAX - 1 bytes, no control character; exits 2 otherwise. */
const char *cli_path(const char *option, const char *arg);

/* Parses a socket address option (address_parse() with flags) into *ret;
 * exits 2 with the reason when it is not acceptable. */
void cli_address(const char *option, const char *arg, unsigned flags, struct address *ret);

/* The options of a TCP job link as a daemon names them ("--tls-cert" ...;
 * address: the option that gives the addresses). */
struct cli_transport_names {
        const char *cert, *key, *ca, *insecure, *handshake_timeout, *address;
};

/* A daemon's transport options after parsing: the TLS files given (NULL:
 * not given), the explicit clear-text choice, and the addresses given
 * (parsed again with address_flags; only TCP ones count). */
struct cli_transport {
        struct cli_transport_names names;
        const char *cert, *key, *ca;
        bool insecure;
        uint64_t handshake_timeout_usec; /* 0: not given */
        const char *const *addresses;
        size_t n_addresses;
        unsigned address_flags;
};

/* TCP is TLS (all three files) or, chosen explicitly, in the clear with
 * every TCP address on loopback; TLS or clear-text options without a TCP
 * address, or both at once, are refused, and so is a handshake timeout
 * without TLS. Exits 2 with the reason. */
void cli_check_transport(const struct cli_transport *t);

/* The five transport options of a TCP job link in a daemon's option table
 * (struct cli_option, below): <prefix>tls-cert, <prefix>tls-key and
 * <prefix>tls-ca, each with a value, <prefix>tcp-insecure, a flag, and
 * <prefix>tls-handshake-timeout, a duration, with the ids first_id to
 * first_id + CLI_TLS_OPTIONS_COUNT - 1. */
#define CLI_TLS_OPTIONS_COUNT 5
#define CLI_TLS_OPTIONS(prefix, first_id)                                                       \
        { prefix "tls-cert", true, (first_id) }, { prefix "tls-key", true, (first_id) + 1 },     \
                { prefix "tls-ca", true, (first_id) + 2 }, { prefix "tcp-insecure", false, (first_id) + 3 }, \
                { prefix "tls-handshake-timeout", true, (first_id) + 4 }

/* The names of those options for cli_check_transport() (struct
 * cli_transport_names); address: the option that gives the addresses. */
#define CLI_TLS_OPTION_NAMES(prefix, address)                                                          \
        { "--" prefix "tls-cert", "--" prefix "tls-key", "--" prefix "tls-ca", "--" prefix "tcp-insecure", \
          "--" prefix "tls-handshake-timeout", address }

/* The bounds of a TLS handshake timeout (both ends of a job link): from
 * 100 ms, and at most a minute, so that a peer that never finishes its
 * handshake holds a place for no longer than that. (The default, in the
 * coordinator's and the worker's link, is 6 s: see coordinator.h.) */
#define CLI_TLS_HANDSHAKE_MIN_USEC UINT64_C(100000)
#define CLI_TLS_HANDSHAKE_MAX_USEC UINT64_C(60000000)

/* Where a daemon keeps what those options say: the three paths (NULL
 * until given), the clear-text choice and the handshake timeout (left as
 * it is until given). */
struct cli_tls_values {
        const char **cert, **key, **ca;
        bool *insecure;
        uint64_t *handshake_timeout_usec;
};

/* For a daemon's option handler: true when id is one of
 * CLI_TLS_OPTIONS(..., first_id), with its value stored through v (a
 * path checked by cli_path(), a duration within CLI_TLS_HANDSHAKE_MIN_USEC
 * and CLI_TLS_HANDSHAKE_MAX_USEC, exiting 2 when it is not one); false,
 * and nothing done, for any other id. */
bool cli_tls_option(int id, int first_id, const char *option, const char *value, const struct cli_tls_values *v);

/* Prints "<program> (sdlive <library version>)" to stdout. */
void cli_print_version(void);

/* One option a daemon takes besides --help and --version. */
struct cli_option {
        const char *name; /* without the leading "--" */
        bool has_value;
        int id;           /* handed to the handler; 0x100 and above */
};

/* Receives one option: option is "--" and its table name (also for an
 * abbreviation on the command line), valid only during the call; value its
 * argument from argv, or NULL. */
typedef void (*cli_handler)(int id, const char *option, const char *value, void *userdata);

/*
 * Parses the command line the way every daemon does: each of the n options
 * goes to handle() in the order given, as
 * --NAME VALUE or --NAME=VALUE or any unambiguous prefix of NAME;
 * -h/--help prints usage() and exits 0, -V/--version prints the version and
 * exits 0; a missing value, an unknown option or an operand exits 2.
 */
void cli_parse(int argc, char **argv, const struct cli_option *options, size_t n, void (*usage)(void),
               cli_handler handle, void *userdata);

/* Prints the -h and -V lines of --help, their text from column 3 + width. */
void cli_usage_help_version(int width);

/* The end of --help of the daemons whose options take durations. */
#define CLI_USAGE_DURATIONS_AND_EXIT                                                     \
        "\n"                                                                              \
        "DUR is a whole number with a unit: 500ms, 2s, 1min, 1h, 7d; bare numbers are\n"  \
        "seconds. Exit status: 0 success or stopped by SIGTERM/SIGINT, 1 failure,\n"      \
        "2 bad usage.\n"

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
