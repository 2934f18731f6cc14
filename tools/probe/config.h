/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_PROBE_CONFIG_H
#define SDLIVE_PROBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "address.h"

/*
 * What sdlive-probe was asked to do: the probes, each with the settings in
 * force when it was named (Kubernetes' periodSeconds, timeoutSeconds,
 * failureThreshold, successThreshold), the startup grace and the daemon's
 * command line.
 */

#define PROBES_MAX 16
/* Longest probe target (URL, address, command line, path) accepted. */
#define PROBE_TARGET_MAX 1024
/* Most words in a command probe's command line. */
#define PROBE_EXEC_ARGS_MAX 32

/* Ranges of the settings (docs/probe.md). */
#define PROBE_PERIOD_MIN_USEC UINT64_C(10000)             /* 10 ms */
#define PROBE_PERIOD_MAX_USEC (UINT64_C(3600) * 1000000)  /* 1 h */
#define PROBE_TIMEOUT_MIN_USEC UINT64_C(1000)             /* 1 ms */
#define PROBE_THRESHOLD_MAX 1000
#define PROBE_GRACE_MAX_USEC (UINT64_C(24) * 3600 * 1000000)

enum probe_kind {
        PROBE_HTTP,
        PROBE_TCP,
        PROBE_UNIX,
        PROBE_EXEC,
        PROBE_FILE_AGE,
};

struct probe_settings {
        uint64_t period_usec;
        uint64_t timeout_usec;
        unsigned failure_threshold;
        unsigned success_threshold;
        unsigned status_min, status_max; /* HTTP: the statuses that pass */
        uint64_t max_age_usec;           /* file age: the oldest that passes */
};

/* Kubernetes' defaults, except the period (1 s here, 10 s there). */
#define PROBE_SETTINGS_DEFAULT                                                                  \
        (struct probe_settings) {                                                               \
                .period_usec = 1000000, .timeout_usec = 1000000, .failure_threshold = 3,        \
                .success_threshold = 1, .status_min = 200, .status_max = 399,                   \
                .max_age_usec = UINT64_C(30) * 1000000,                                         \
        }

struct probe_spec {
        enum probe_kind kind;
        char name[PROBE_TARGET_MAX + 16]; /* "http http://...", for STATUS= and the log */
        const char *target;               /* as given */
        struct address address;           /* PROBE_TCP, PROBE_UNIX */
        char *argv[PROBE_EXEC_ARGS_MAX + 1]; /* PROBE_EXEC: malloc()ed words, NULL-terminated;
                                              * argv[0] resolved to a path */
        struct probe_settings s;
};

struct probe_config {
        struct probe_spec probes[PROBES_MAX];
        size_t n_probes;
        struct probe_settings next; /* applies to the probes named after it */
        uint64_t startup_grace_usec;
        const char *wedge_file;     /* fault injection: NULL off */
        char *command_path;         /* the daemon, resolved; malloc()ed */
        char **command;             /* its argv (points into the caller's argv) */
};

#define PROBE_STARTUP_GRACE_DEFAULT_USEC (UINT64_C(60) * 1000000)

/* The settings as they are, or a static phrase saying what is wrong: a
 * timeout longer than the period, a threshold of 0, an empty status range. */
const char *probe_settings_problem(const struct probe_settings *s);

/* NULL when url is an http:// or https:// URL with a host (1 to
 * PROBE_TARGET_MAX bytes, no control characters or spaces); otherwise a
 * static phrase. */
const char *probe_url_problem(const char *url);

/* Parses "LO-HI" or "N" (HTTP statuses, 100 to 599) into *lo, *hi; 0 or
 * -EINVAL. Both written only on success. */
int probe_parse_status_range(const char *text, unsigned *lo, unsigned *hi);

/* Finds an executable the way execvp() would (name with a '/': that file;
 * otherwise the first match in $PATH, or "/bin:/usr/bin") and copies its
 * path into out. 0, -ENOENT (not found), -EACCES (found, not executable
 * or not a regular file), -ENAMETOOLONG. */
int probe_find_command(const char *name, char *out, size_t size);

/* Splits a command probe's text into words at spaces (no quoting, no
 * shell) into argv (malloc()ed, NULL-terminated, at most
 * PROBE_EXEC_ARGS_MAX words). 0, -EINVAL (no words, too many), -ENOMEM. */
int probe_split_words(const char *text, char **argv);

/* Parses the whole command line into *c (every field written); exits 2
 * with one clear error on anything wrong, before any process starts. */
void probe_config_parse(int argc, char **argv, struct probe_config *c);

/* As probe_config_parse(), the same rules and defaults, but looks no
 * command up (COMMAND and each --exec's first word are left as given,
 * command_path NULL): what sdlive-lint checks a unit's options with,
 * whose commands live under its --root. */
void probe_config_check(int argc, char **argv, struct probe_config *c);

/* Frees what probe_config_parse() or probe_config_check() allocated. */
void probe_config_free(struct probe_config *c);

/* The latest a probe can declare failure after the daemon stops
 * answering: the longest period x failureThreshold + timeout over the
 * probes. */
uint64_t probe_config_detection_bound(const struct probe_config *c);

#endif
