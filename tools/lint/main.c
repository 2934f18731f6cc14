/* SPDX-License-Identifier: MIT */
/*
 * sdlive-lint: holds each unit's WatchdogSec=, Type=notify and NotifyAccess=
 * against what its binary really does: statically (the ELF's imports and
 * libraries) and, with --probe, by running the command on a notify socket
 * of its own. Findings are documented in sdlive-lint(8).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "report.h"
#include "unit.h"

#define ARGS_MAX 256
#define PROBE_SECONDS_MIN 1
#define PROBE_SECONDS_MAX 3600

struct options {
        const char *root;
        double probe_seconds; /* 0: no probe */
        uint64_t watchdog_usec; /* 0: the unit's own */
        bool json;
};

static void usage(void) {
        printf("Usage: sdlive-lint [option ...] UNIT...\n"
               "Checks each unit's WatchdogSec=, Type=notify, NotifyAccess= and Restart= against what its\n"
               "binary does. UNIT is a unit file (path) or an installed unit's name (drop-ins merged).\n\n"
               "  --probe SECONDS      also run the command for SECONDS on a notify socket of its own\n"
               "                       and record READY=1, WATCHDOG=1 and STATUS= (%d to %d)\n"
               "  --watchdog-usec USEC the WATCHDOG_USEC the probe gives an armed unit (default: its\n"
               "                       WatchdogSec=); gaps are held against this value\n"
               "  --root DIR           look units and binaries up under DIR\n"
               "  --json               one JSON array of the units, their evidence and findings\n"
               "  -h, --help           this help\n"
               "  -V, --version        version\n\n"
               "Exit status: 0 no findings, 1 findings (errors or warnings), 2 bad usage.\n",
               PROBE_SECONDS_MIN, PROBE_SECONDS_MAX);
}

static void usage_error(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *format, ...) {
        va_list ap;

        fprintf(stderr, "sdlive-lint: ");
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'sdlive-lint --help'.\n");
        exit(2);
}

/* The value of NAME (n bytes) in the unit's Environment=, the last
 * assignment winning; NULL when unset. */
static const char *environment_value(const struct unit *u, const char *name, size_t n) {
        for (size_t i = u->environment.n; i-- > 0;) {
                const char *item = u->environment.items[i];

                if (!strncmp(item, name, n) && item[n] == '=')
                        return item + n + 1;
        }
        return NULL;
}

/*
 * Appends word as the manager passes it (replace_env_argv): a whole word
 * $NAME is replaced by its value split into words (unset: no word); else
 * ${NAME} is replaced by its value (unset: nothing) and "$$" by "$".
 */
/* The copies are not leaked: the caller owns argv[0 .. *argc - 1]; gcc's
 * analyser loses them in the caller's array. */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static int expand_word(const struct unit *u, const char *word, char **argv, int *argc) {
        char out[4096];
        size_t len = 0;

        if (word[0] == '$' && word[1] != '{' && word[1] != '$') {
                const char *value = environment_value(u, word + 1, strlen(word + 1));
                int k;

                if (!value)
                        return 0;
                k = unit_split_words(NULL, value, argv + *argc, ARGS_MAX - 1 - *argc);
                if (k < 0)
                        return -1;
                *argc += k;
                return 0;
        }
        for (const char *p = word; *p;) {
                const char *end, *value = NULL;
                size_t n = 1;

                if (p[0] == '$' && p[1] == '$') {
                        value = "$";
                        p += 2;
                } else if (p[0] == '$' && p[1] == '{' && (end = strchr(p, '}'))) {
                        value = environment_value(u, p + 2, (size_t) (end - p - 2));
                        value = value ? value : "";
                        p = end + 1;
                }
                if (value)
                        n = strlen(value);
                if (len + n >= sizeof(out))
                        return -1;
                memcpy(out + len, value ? value : p++, n);
                len += n;
        }
        out[len] = '\0';
        if (*argc >= ARGS_MAX - 1 || !(argv[*argc] = strdup(out)))
                return -1;
        (*argc)++;
        return 0;
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

/* ExecStart= into the program's path and argv: prefixes @-:+! stripped, '@'
 * makes the next word argv[0], ':' turns off variable expansion. */
static int parse_exec(const struct unit *u, char **path, char **argv, int *argc) {
        char *words[ARGS_MAX];
        int n = unit_split_words(u, u->exec_start.items[0], words, ARGS_MAX), first = 1, r = 0;
        bool at = false, expand = true;
        const char *p;

        *argc = 0;
        *path = NULL;
        if (n <= 0)
                return -1;
        for (p = words[0]; *p && strchr("@-:+!", *p); p++) {
                at |= *p == '@';
                expand &= *p != ':';
        }
        if (!*p || (at && n < 2))
                r = -1;
        else if (!(*path = strdup(p)) || !(argv[(*argc)++] = strdup(at ? words[1] : p)))
                r = -1;
        first = at ? 2 : 1;
        for (int i = first; r == 0 && i < n; i++)
                r = expand ? expand_word(u, words[i], argv, argc)
                           : (argv[*argc] = strdup(words[i])) ? ((*argc)++, 0) : -1;
        for (int i = 0; i < n; i++)
                free(words[i]);
        argv[*argc] = NULL;
        return r;
}

/* Checks one unit; returns 1 with findings that count, else 0. */
static int lint_one(const char *spec, const struct options *o, struct json_object *json) {
        struct unit u;
        struct binary b = { .kind = BINARY_MISSING };
        struct probe_result *probe = NULL;
        struct probe_unit probe_unit;
        struct binary *probed = NULL; /* the daemon a unit's sdlive-probe runs */
        struct lint_subject s = { .unit = &u };
        char err[1024], *path = NULL, *argv[ARGS_MAX] = { NULL };
        int argc = 0, counted = 0;

        if (unit_load(spec, o->root, &u, err, sizeof(err)) < 0) {
                unit_free(&u);
                s.unit = NULL;
                lint_add(&s, "SDL012", SEVERITY_ERROR, "unit cannot be read", "name an existing unit file", "%s", err);
        } else if (u.exec_start.n == 0)
                lint_add(&s, "SDL012", SEVERITY_ERROR, "unit cannot be read", "add ExecStart=",
                         "no ExecStart= after merging %zu file(s)", u.n_files);
        else if (parse_exec(&u, &path, argv, &argc) < 0)
                lint_add(&s, "SDL012", SEVERITY_ERROR, "unit cannot be read", "correct ExecStart=",
                         "ExecStart=%s: bad quoting or an empty command", u.exec_start.items[0]);
        else {
                binary_inspect(path, o->root, &b);
                s.binary = &b;
                if (b.kind != BINARY_MISSING && b.kind != BINARY_UNRUNNABLE && probe_unit_is_probe(path)) {
                        probe_unit_read(argv, argc, &probe_unit);
                        s.probe_unit = &probe_unit;
                        if (probe_unit.state == PROBE_UNIT_OK && probe_unit.command_at > 0) {
                                if (!(probed = calloc(1, sizeof(*probed)))) {
                                        fprintf(stderr, "sdlive-lint: out of memory\n");
                                        exit(1);
                                }
                                binary_inspect(argv[probe_unit.command_at], o->root, probed);
                                s.probed_daemon = probed;
                        }
                }
                if (o->probe_seconds > 0 && b.kind != BINARY_MISSING && b.kind != BINARY_UNRUNNABLE) {
                        if (!(probe = calloc(1, sizeof(*probe)))) {
                                fprintf(stderr, "sdlive-lint: out of memory\n");
                                exit(1);
                        }
                        s.probe_watchdog_usec = u.watchdog_set ? (o->watchdog_usec ? o->watchdog_usec : u.watchdog_usec) : 0;
                        probe_run(&u, b.path, argv, s.probe_watchdog_usec, o->probe_seconds, probe);
                        s.probe = probe;
                }
                lint_check(&s);
        }
        if (!s.unit) {
                static struct unit named;

                named.name = (char *) spec;
                s.unit = &named;
        }
        if (json) {
                if (report_json_add(json, &s, spec) < 0) {
                        fprintf(stderr, "sdlive-lint: out of memory\n");
                        exit(1);
                }
        } else
                report_text(stdout, &s);
        for (int i = 0; i < s.n_findings; i++)
                counted |= s.findings[i].severity != SEVERITY_INFO;
        if (s.unit == &u)
                unit_free(&u);
        for (int i = 0; i < argc; i++)
                free(argv[i]);
        free(path);
        free(probe);
        free(probed);
        return counted;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "probe", required_argument, NULL, 'p' },
                { "watchdog-usec", required_argument, NULL, 'w' },
                { "root", required_argument, NULL, 'r' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        struct options o = { .root = "" };
        struct json_object *json = NULL;
        int c, status = 0;
        char *end;

        while ((c = getopt_long(argc, argv, "hV", options, NULL)) >= 0) {
                switch (c) {
                case 'p':
                        errno = 0;
                        o.probe_seconds = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(o.probe_seconds >= PROBE_SECONDS_MIN) ||
                            o.probe_seconds > PROBE_SECONDS_MAX)
                                usage_error("--probe: \"%s\" is not a number of seconds from %d to %d", optarg,
                                            PROBE_SECONDS_MIN, PROBE_SECONDS_MAX);
                        break;
                case 'w':
                        errno = 0;
                        o.watchdog_usec = strtoull(optarg, &end, 10);
                        if (errno || end == optarg || *end || optarg[0] == '-' || o.watchdog_usec < 1000 ||
                            o.watchdog_usec > UINT64_C(86400000000))
                                usage_error("--watchdog-usec: \"%s\" is not microseconds from 1000 to 86400000000", optarg);
                        break;
                case 'r':
                        if (!*optarg || optarg[0] != '/')
                                usage_error("--root: \"%s\" is not an absolute directory", optarg);
                        o.root = strcmp(optarg, "/") ? optarg : "";
                        break;
                case 'j': o.json = true; break;
                case 'h': usage(); return 0;
                case 'V': printf("sdlive-lint %s\n", SDLIVE_LINT_VERSION); return 0;
                default: fprintf(stderr, "Try 'sdlive-lint --help'.\n"); return 2;
                }
        }
        if (optind >= argc)
                usage_error("%s", "no UNIT given");
        if (o.json && !(json = report_json_begin())) {
                fprintf(stderr, "sdlive-lint: out of memory\n");
                return 1;
        }
        for (int i = optind; i < argc; i++)
                status |= lint_one(argv[i], &o, json);
        if (json && report_json_end(stdout, json) < 0)
                return 1;
        return fflush(stdout) == 0 ? status : 1;
}
