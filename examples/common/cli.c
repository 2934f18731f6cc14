/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
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
        log_error("%s: %s", program_invocation_short_name, message);
        log_error("Try '%s --help' for more information.", program_invocation_short_name);
        exit(EXIT_USAGE);
}

uint64_t cli_duration(const char *option, const char *arg) {
        uint64_t usec;
        int r = duration_parse(arg, &usec);

        if (r == -ERANGE)
                cli_usage_error("%s: duration '%s' is too large", option, arg);
        if (r < 0)
                cli_usage_error("%s: invalid duration '%s' (examples: 500ms, 2s, 1min, 1h, 7d, 30)",
                                option, arg);
        return usec;
}

uint64_t cli_count(const char *option, const char *arg) {
        uint64_t value = 0;

        if (!arg[0])
                cli_usage_error("%s: empty number", option);
        for (const char *p = arg; *p; p++) {
                if (*p < '0' || *p > '9')
                        cli_usage_error("%s: invalid number '%s'", option, arg);
                unsigned digit = (unsigned) (*p - '0');
                if (value > (UINT64_MAX - digit) / 10)
                        cli_usage_error("%s: number '%s' is too large", option, arg);
                value = value * 10 + digit;
        }
        return value;
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
