/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sdlive.h>

#include "duration.h"
#include "log.h"

noreturn void cli_usage_error(const char *format, ...) {
        char message[512];
        va_list ap;

        va_start(ap, format);
        vsnprintf(message, sizeof(message), format, ap);
        va_end(ap);
        /* log_error() blanks control characters: one line whatever the value. */
        log_error("%s: %s (see --help)", program_invocation_short_name, message);
        exit(EXIT_USAGE);
}

uint64_t cli_duration_range(const char *option, const char *arg, uint64_t min_usec, uint64_t max_usec) {
        char lo[DURATION_FORMAT_MAX], hi[DURATION_FORMAT_MAX];
        uint64_t usec = 0;
        int r = duration_parse(arg, &usec);

        if (r < 0 && r != -ERANGE)
                cli_usage_error("%s: invalid duration '%s' (examples: 500ms, 2s, 1min, 1h, 7d, 30)",
                                option, arg);
        if (r == -ERANGE || usec < min_usec || usec > max_usec)
                cli_usage_error("%s: duration '%s' out of range (%s to %s)", option, arg,
                                min_usec ? duration_format(lo, sizeof(lo), min_usec) : "0",
                                duration_format(hi, sizeof(hi), max_usec));
        return usec;
}

uint64_t cli_duration(const char *option, const char *arg) {
        return cli_duration_range(option, arg, 0, CLI_DURATION_MAX);
}

uint64_t cli_number(const char *option, const char *arg, uint64_t min, uint64_t max) {
        uint64_t value = 0;
        bool overflow = false;

        if (!arg[0])
                cli_usage_error("%s: empty number", option);
        for (const char *p = arg; *p; p++) {
                if (*p < '0' || *p > '9')
                        cli_usage_error("%s: invalid number '%s' (digits only)", option, arg);
                unsigned digit = (unsigned) (*p - '0');
                if (value > (UINT64_MAX - digit) / 10)
                        overflow = true;
                else
                        value = value * 10 + digit;
        }
        if (overflow || value < min || value > max)
                cli_usage_error("%s: %s out of range (%llu to %llu)", option, arg, (unsigned long long) min,
                                (unsigned long long) max);
        return value;
}

uint64_t cli_count(const char *option, const char *arg) {
        return cli_number(option, arg, 0, CLI_COUNT_MAX);
}

const char *cli_text_problem(const char *text, size_t max_len) {
        size_t len = 0;

        if (!text || !text[0])
                return "empty";
        for (const char *p = text; *p; p++, len++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return "contains a control character";
        if (len > max_len)
                return "too long";
        return NULL;
}

const char *cli_text(const char *option, const char *arg, size_t max_len) {
        const char *problem = cli_text_problem(arg, max_len);

        if (problem)
                cli_usage_error("%s: '%s' %s (1 to %zu bytes, no control characters)", option, arg,
                                problem, max_len);
        return arg;
}

const char *cli_path(const char *option, const char *arg) {
        return cli_text(option, arg, PATH_MAX - 1);
}

void cli_address(const char *option, const char *arg, unsigned flags, struct address *ret) {
        const char *why = NULL;

        if (address_parse(arg, flags, ret, &why) < 0)
                cli_usage_error("%s: '%s': %s", option, arg, why);
}

void cli_print_version(void) {
        printf("%s (sdlive %s)\n", program_invocation_short_name, sdlive_version());
}

char *cli_systemd_dir(const char *variable) {
        const char *value = getenv(variable);

        if (!value || !value[0])
                return NULL;
        char *dir = strndup(value, strcspn(value, ":"));
        if (!dir) {
                log_error("out of memory");
                exit(EXIT_FAILURE);
        }
        if (!dir[0]) {
                free(dir);
                return NULL;
        }
        return dir;
}

int cli_require_dir(const char *what, const char *path) {
        struct stat st;

        if (stat(path, &st) < 0) {
                int r = -errno;
                log_error("%s %s: %s", what, path, strerror(-r));
                return r;
        }
        if (!S_ISDIR(st.st_mode)) {
                log_error("%s %s: not a directory", what, path);
                return -ENOTDIR;
        }
        return 0;
}

void cli_common_option(int c, int argc, char **argv, void (*usage)(void)) {
        const char *option = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

        switch (c) {
        case 'h':
                usage();
                exit(EXIT_SUCCESS);
        case 'V':
                cli_print_version();
                exit(EXIT_SUCCESS);
        case ':':
                cli_usage_error("option '%s' needs a value", option);
        default:
                cli_usage_error("unknown option '%s'", option);
        }
}

void cli_no_operands(int argc, char **argv) {
        if (optind < argc)
                cli_usage_error("unexpected argument '%s'", argv[optind]);
}

void cli_parse(int argc, char **argv, const struct cli_option *options, size_t n, void (*usage)(void),
               cli_handler handle, void *userdata) {
        struct option table[n + 3]; /* n is a daemon's table size, not input */
        char name[64];
        int c, found = 0;

        for (size_t i = 0; i < n; i++)
                table[i] = (struct option) { options[i].name, options[i].has_value ? required_argument : no_argument,
                                             NULL, options[i].id };
        table[n] = (struct option) { "help", no_argument, NULL, 'h' };
        table[n + 1] = (struct option) { "version", no_argument, NULL, 'V' };
        table[n + 2] = (struct option) {};

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hV", table, &found)) >= 0) {
                if (c == 'h' || c == 'V' || c == ':' || c == '?')
                        cli_common_option(c, argc, argv, usage);
                snprintf(name, sizeof(name), "--%s", table[found].name);
                handle(c, name, optarg, userdata);
        }
        cli_no_operands(argc, argv);
}

void cli_usage_help_version(int width) {
        printf("  %-*sshow this help and exit\n", width, "-h, --help");
        printf("  %-*sshow the version and exit\n", width, "-V, --version");
}
