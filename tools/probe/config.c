/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cli.h"
#include "duration.h"
#include "log.h"

const char *probe_settings_problem(const struct probe_settings *s) {
        if (s->timeout_usec > s->period_usec)
                return "the timeout is longer than the period (--timeout must not exceed --period)";
        if (s->failure_threshold == 0)
                return "--failure-threshold is 0";
        if (s->success_threshold == 0)
                return "--success-threshold is 0";
        if (s->status_min > s->status_max)
                return "the status range is empty";
        return NULL;
}

const char *probe_url_problem(const char *url) {
        const char *problem = cli_text_problem(url, PROBE_TARGET_MAX);
        char *scheme = NULL, *host = NULL;
        CURLU *u;

        if (problem)
                return problem;
        if (strchr(url, ' '))
                return "contains a space";
        u = curl_url();
        if (!u)
                return "out of memory";
        if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
                problem = "is not a URL";
        else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
                 (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
                problem = "is not an http:// or https:// URL";
        else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0])
                problem = "has no host";
        curl_free(scheme);
        curl_free(host);
        curl_url_cleanup(u);
        return problem;
}

static int parse_status(const char *p, const char **end, unsigned *ret) {
        unsigned v = 0;
        int digits = 0;

        for (; *p >= '0' && *p <= '9' && digits < 4; p++, digits++)
                v = v * 10 + (unsigned) (*p - '0');
        if (digits != 3 || v < 100 || v > 599)
                return -EINVAL;
        *end = p;
        *ret = v;
        return 0;
}

int probe_parse_status_range(const char *text, unsigned *lo, unsigned *hi) {
        const char *p = text;
        unsigned a, b;

        if (parse_status(p, &p, &a) < 0)
                return -EINVAL;
        if (*p == '\0')
                b = a;
        else if (*p != '-' || parse_status(p + 1, &p, &b) < 0 || *p != '\0' || b < a)
                return -EINVAL;
        *lo = a;
        *hi = b;
        return 0;
}

static int check_executable(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
        if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
                return -EACCES;
        return 0;
}

int probe_find_command(const char *name, char *out, size_t size) {
        const char *path = getenv("PATH");
        int best = -ENOENT;

        if (!name[0])
                return -ENOENT;
        if (strchr(name, '/')) {
                if (strlen(name) >= size)
                        return -ENAMETOOLONG;
                int r = check_executable(name);
                if (r == 0)
                        snprintf(out, size, "%s", name);
                return r;
        }
        if (!path || !path[0])
                path = "/bin:/usr/bin";
        while (*path) {
                size_t len = strcspn(path, ":");
                char candidate[PATH_MAX];
                int n = snprintf(candidate, sizeof(candidate), "%.*s/%s", (int) len, path, name);

                path += len + (path[len] == ':');
                if (len == 0 || n < 0 || (size_t) n >= sizeof(candidate))
                        continue;
                int r = check_executable(candidate);
                if (r == 0) {
                        if ((size_t) n >= size)
                                return -ENAMETOOLONG;
                        memcpy(out, candidate, (size_t) n + 1);
                        return 0;
                }
                if (r == -EACCES)
                        best = r;
        }
        return best;
}

/* The words are owned by the caller's argv, and freed from there on every
 * failure; gcc's analyser loses them in the caller's array. */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
int probe_split_words(const char *text, char **argv) {
        size_t n = 0;

        for (const char *p = text; *p;) {
                size_t len;

                p += strspn(p, " ");
                len = strcspn(p, " ");
                if (len == 0)
                        break;
                if (n == PROBE_EXEC_ARGS_MAX)
                        goto fail_inval;
                argv[n] = strndup(p, len);
                if (!argv[n])
                        goto fail_nomem;
                n++;
                p += len;
        }
        if (n == 0)
                return -EINVAL;
        argv[n] = NULL;
        return 0;
fail_inval:
        for (size_t i = 0; i < n; i++)
                free(argv[i]);
        return -EINVAL;
fail_nomem:
        for (size_t i = 0; i < n; i++)
                free(argv[i]);
        return -ENOMEM;
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

static void usage(void) {
        printf("Usage: %s [OPTION]... -- COMMAND [ARG]...\n"
               "Run COMMAND, a daemon that does not pet, as a child and feed systemd's\n"
               "watchdog only while every health probe passes. READY=1 once every probe has\n"
               "passed; STATUS= names each probe and, once keepalives stop, the failing one.\n"
               "\n"
               "Probes (at most 16; all must pass):\n"
               "  --http URL                 GET URL (http:// or https://); passes on a status\n"
               "                             in the --expect-status range\n"
               "  --tcp IP:PORT              a TCP connection is accepted ([IPV6]:PORT too)\n"
               "  --unix PATH                a unix stream socket connection is accepted\n"
               "  --exec 'CMD [ARG]...'      CMD exits 0 (words split at spaces, no shell;\n"
               "                             killed at the timeout)\n"
               "  --file-age PATH            PATH was modified within --max-age\n"
               "\n"
               "Settings of the probes named after them (Kubernetes' names):\n"
               "  --period DUR               time between runs (default 1s; 10ms to 1h)\n"
               "  --timeout DUR              longest a run may take (default 1s; at most the\n"
               "                             period)\n"
               "  --failure-threshold N      failed runs in a row that make a probe fail\n"
               "                             (default 3; 1 to 1000)\n"
               "  --success-threshold N      passed runs in a row that make it pass again\n"
               "                             (default 1; 1 to 1000)\n"
               "  --expect-status LO[-HI]    HTTP statuses that pass (default 200-399)\n"
               "  --max-age DUR              file age that passes (default 30s)\n"
               "\n"
               "  --startup-grace DUR        every probe must have passed within DUR of the\n"
               "                             start, or the start fails (default 1min)\n"
               "  --wedge-file PATH          fault injection: when PATH exists the probe loop\n"
               "                             hangs forever (also $SDLIVE_WEDGE_FILE)\n",
               program_invocation_short_name);
        cli_usage_help_version(27);
        printf("\n"
               "DUR is a whole number with a unit: 500ms, 2s, 1min, 1h; bare numbers are\n"
               "seconds. Exit status: COMMAND's (or its signal, raised again); 1 a failed\n"
               "start or a runtime failure; 2 bad usage, or COMMAND went to the background.\n");
}

enum {
        OPT_HTTP = 0x100,
        OPT_TCP,
        OPT_UNIX,
        OPT_EXEC,
        OPT_FILE_AGE,
        OPT_PERIOD,
        OPT_TIMEOUT,
        OPT_FAILURE_THRESHOLD,
        OPT_SUCCESS_THRESHOLD,
        OPT_EXPECT_STATUS,
        OPT_MAX_AGE,
        OPT_STARTUP_GRACE,
        OPT_WEDGE_FILE,
};

static const struct cli_option options[] = {
        { "http", true, OPT_HTTP },
        { "tcp", true, OPT_TCP },
        { "unix", true, OPT_UNIX },
        { "exec", true, OPT_EXEC },
        { "file-age", true, OPT_FILE_AGE },
        { "period", true, OPT_PERIOD },
        { "timeout", true, OPT_TIMEOUT },
        { "failure-threshold", true, OPT_FAILURE_THRESHOLD },
        { "success-threshold", true, OPT_SUCCESS_THRESHOLD },
        { "expect-status", true, OPT_EXPECT_STATUS },
        { "max-age", true, OPT_MAX_AGE },
        { "startup-grace", true, OPT_STARTUP_GRACE },
        { "wedge-file", true, OPT_WEDGE_FILE },
};

static const char *const kind_names[] = {
        [PROBE_HTTP] = "http", [PROBE_TCP] = "tcp", [PROBE_UNIX] = "unix",
        [PROBE_EXEC] = "exec", [PROBE_FILE_AGE] = "file-age",
};

struct parse_state {
        struct probe_config *c;
        bool resolve; /* look the commands up (false: the options alone) */
        /* A setting given since the last probe, copied: the handler's
         * option text lives only for its call. Empty when none. */
        char settings_option[32];
};

static void add_probe(struct parse_state *st, enum probe_kind kind, const char *option, const char *value) {
        struct probe_config *c = st->c;
        struct probe_spec *p;
        const char *problem;

        if (c->n_probes == PROBES_MAX)
                cli_usage_error("%s: at most %d probes", option, PROBES_MAX);
        problem = probe_settings_problem(&c->next);
        if (problem)
                cli_usage_error("%s %s: %s", option, value, problem);
        cli_text(option, value, PROBE_TARGET_MAX);

        p = &c->probes[c->n_probes];
        *p = (struct probe_spec) { .kind = kind, .target = value, .s = c->next };
        snprintf(p->name, sizeof(p->name), "%s %s", kind_names[kind], value);
        switch (kind) {
        case PROBE_HTTP:
                problem = probe_url_problem(value);
                if (problem)
                        cli_usage_error("%s: '%s' %s", option, value, problem);
                break;
        case PROBE_TCP:
                cli_address(option, value, ADDRESS_ALLOW_TCP | ADDRESS_NUMERIC_HOST, &p->address);
                break;
        case PROBE_UNIX:
                cli_address(option, value, ADDRESS_ALLOW_UNIX, &p->address);
                break;
        case PROBE_EXEC: {
                char path[PATH_MAX];
                int r = probe_split_words(value, p->argv);

                if (r == -ENOMEM) {
                        log_error("out of memory");
                        exit(EXIT_FAILURE);
                }
                if (r < 0)
                        cli_usage_error("%s: '%s': 1 to %d words expected", option, value, PROBE_EXEC_ARGS_MAX);
                if (!st->resolve)
                        break;
                r = probe_find_command(p->argv[0], path, sizeof(path));
                if (r < 0)
                        cli_usage_error("%s: command '%s': %s", option, p->argv[0],
                                        r == -ENOENT ? "not found" : strerror(-r));
                free(p->argv[0]);
                p->argv[0] = strdup(path);
                if (!p->argv[0]) {
                        log_error("out of memory");
                        exit(EXIT_FAILURE);
                }
                break;
        }
        case PROBE_FILE_AGE:
                cli_path(option, value);
                break;
        }
        c->n_probes++;
        st->settings_option[0] = '\0';
}

static void set_option(int id, const char *option, const char *value, void *userdata) {
        struct parse_state *st = userdata;
        struct probe_settings *s = &st->c->next;

        switch (id) {
        case OPT_HTTP:
        case OPT_TCP:
        case OPT_UNIX:
        case OPT_EXEC:
        case OPT_FILE_AGE:
                add_probe(st, (enum probe_kind) (id - OPT_HTTP), option, value);
                return;
        case OPT_PERIOD:
                s->period_usec = cli_duration_range(option, value, PROBE_PERIOD_MIN_USEC, PROBE_PERIOD_MAX_USEC);
                break;
        case OPT_TIMEOUT:
                s->timeout_usec = cli_duration_range(option, value, PROBE_TIMEOUT_MIN_USEC, PROBE_PERIOD_MAX_USEC);
                break;
        case OPT_FAILURE_THRESHOLD:
                s->failure_threshold = (unsigned) cli_number(option, value, 1, PROBE_THRESHOLD_MAX);
                break;
        case OPT_SUCCESS_THRESHOLD:
                s->success_threshold = (unsigned) cli_number(option, value, 1, PROBE_THRESHOLD_MAX);
                break;
        case OPT_EXPECT_STATUS:
                if (probe_parse_status_range(value, &s->status_min, &s->status_max) < 0)
                        cli_usage_error("%s: '%s' is not a status range (LO-HI or N, 100 to 599)", option, value);
                break;
        case OPT_MAX_AGE:
                s->max_age_usec = cli_duration_range(option, value, 1, CLI_DURATION_MAX);
                break;
        case OPT_STARTUP_GRACE:
                st->c->startup_grace_usec = cli_duration_range(option, value, 1, PROBE_GRACE_MAX_USEC);
                return;
        case OPT_WEDGE_FILE:
                st->c->wedge_file = cli_path(option, value);
                return;
        }
        snprintf(st->settings_option, sizeof(st->settings_option), "%s", option);
}

static void parse(int argc, char **argv, struct probe_config *c, bool resolve) {
        struct parse_state st = { .c = c, .resolve = resolve };
        char path[PATH_MAX];
        int end = 1, r;

        *c = (struct probe_config) {
                .next = PROBE_SETTINGS_DEFAULT,
                .startup_grace_usec = PROBE_STARTUP_GRACE_DEFAULT_USEC,
        };
        /* The first "--" ends the options; what follows is the daemon's. */
        while (end < argc && strcmp(argv[end], "--") != 0)
                end++;
        cli_parse(end, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, &st);
        if (st.settings_option[0])
                cli_usage_error("%s applies to the probes named after it, and none is", st.settings_option);
        if (c->n_probes == 0)
                cli_usage_error("no probe given (--http, --tcp, --unix, --exec or --file-age)");
        if (end + 1 >= argc)
                cli_usage_error("no command given: %s [OPTION]... -- COMMAND [ARG]...",
                                program_invocation_short_name);
        cli_text("COMMAND", argv[end + 1], PATH_MAX - 1);
        c->command = argv + end + 1;
        if (!resolve)
                return;
        r = probe_find_command(argv[end + 1], path, sizeof(path));
        if (r < 0)
                cli_usage_error("command '%s': %s", argv[end + 1], r == -ENOENT ? "not found" : strerror(-r));
        c->command_path = strdup(path);
        if (!c->command_path) {
                log_error("out of memory");
                exit(EXIT_FAILURE);
        }
}

void probe_config_parse(int argc, char **argv, struct probe_config *c) {
        parse(argc, argv, c, true);
}

void probe_config_check(int argc, char **argv, struct probe_config *c) {
        parse(argc, argv, c, false);
}

void probe_config_free(struct probe_config *c) {
        for (size_t i = 0; i < c->n_probes; i++)
                for (size_t k = 0; c->probes[i].kind == PROBE_EXEC && c->probes[i].argv[k]; k++)
                        free(c->probes[i].argv[k]);
        free(c->command_path);
        c->command_path = NULL;
        c->n_probes = 0;
}

uint64_t probe_config_detection_bound(const struct probe_config *c) {
        uint64_t worst = 0;

        for (size_t i = 0; i < c->n_probes; i++) {
                const struct probe_settings *s = &c->probes[i].s;
                uint64_t bound = s->period_usec * s->failure_threshold + s->timeout_usec;
                if (bound > worst)
                        worst = bound;
        }
        return worst;
}
