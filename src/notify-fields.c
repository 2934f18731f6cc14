/* SPDX-License-Identifier: MIT */
/*
 * The notify fields beyond readiness and status: MAINPID=, EXIT_STATUS=,
 * BUSERROR=, NOTIFYACCESS=, and a validated KEY=VALUE for fields this
 * library does not know. Every value is checked before anything is sent,
 * so no argument can add a line (an assignment) of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sdlive-internal.h"

static int send_formatted(sdlive *d, const char *key, const char *value) {
        char msg[SDLIVE_NOTIFY_MAX + 1];
        int len;

        len = snprintf(msg, sizeof(msg), "%s=%s", key, value);
        if (len < 0 || (size_t) len > SDLIVE_NOTIFY_MAX)
                return -E2BIG;
        return sdlive_notify_send(d, msg, (size_t) len);
}

SDLIVE_EXPORT int sdlive_notify_mainpid(sdlive *d, pid_t pid) {
        char value[24];

        /* PID 1 is the manager (or init): the manager refuses it as a main
         * process. */
        if (pid <= 1)
                return -EINVAL;
        (void) snprintf(value, sizeof(value), "%ld", (long) pid);
        return send_formatted(d, "MAINPID", value);
}

SDLIVE_EXPORT int sdlive_notify_exit_status(sdlive *d, int status) {
        char value[16];

        if (status < 0 || status > 255)
                return -EINVAL;
        (void) snprintf(value, sizeof(value), "%d", status);
        return send_formatted(d, "EXIT_STATUS", value);
}

/* One element of a D-Bus name: [A-Za-z_][A-Za-z0-9_]*. */
static bool bus_element_valid(const char *s, size_t n) {
        if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '_'))
                        return false;
        }
        return true;
}

bool sdlive_bus_error_valid(const char *name) {
        size_t len, elements = 0;
        const char *p;

        if (!name)
                return false;
        len = strlen(name);
        if (len == 0 || len > SDLIVE_BUS_ERROR_MAX)
                return false;
        for (p = name;; elements++) {
                const char *dot = strchr(p, '.');
                size_t n = dot ? (size_t) (dot - p) : strlen(p);

                if (!bus_element_valid(p, n))
                        return false;
                if (!dot)
                        break;
                p = dot + 1;
        }
        return elements >= 1; /* at least two elements */
}

SDLIVE_EXPORT int sdlive_notify_bus_error(sdlive *d, const char *name) {
        if (!sdlive_bus_error_valid(name))
                return -EINVAL;
        return send_formatted(d, "BUSERROR", name);
}

SDLIVE_EXPORT int sdlive_notify_access(sdlive *d, int access) {
        static const char *const names[] = {
                [SDLIVE_NOTIFY_ACCESS_NONE] = "none",
                [SDLIVE_NOTIFY_ACCESS_MAIN] = "main",
                [SDLIVE_NOTIFY_ACCESS_EXEC] = "exec",
                [SDLIVE_NOTIFY_ACCESS_ALL] = "all",
        };

        if (access < SDLIVE_NOTIFY_ACCESS_NONE || access > SDLIVE_NOTIFY_ACCESS_ALL)
                return -EINVAL;
        return send_formatted(d, "NOTIFYACCESS", names[access]);
}

/* Keys: an uppercase letter or '_', then uppercase letters, digits, '_'. */
static bool key_valid(const char *key) {
        size_t len;

        if (!key || !*key || (key[0] >= '0' && key[0] <= '9'))
                return false;
        for (len = 0; key[len]; len++) {
                char c = key[len];
                if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
                        return false;
        }
        return true;
}

int sdlive_notify_raw_check(const char *key, const char *value) {
        if (!key_valid(key) || !value)
                return -EINVAL;
        /* Fields that need descriptors, or whose change the pet schedule
         * must follow, go through their own calls. */
        if (strcmp(key, "FDSTORE") == 0 || strcmp(key, "BARRIER") == 0 ||
            strcmp(key, "WATCHDOG_USEC") == 0)
                return -EINVAL;
        /* The manager splits a message into assignments at '\n' and '\r'. */
        if (strpbrk(value, "\n\r"))
                return -EINVAL;
        if (strlen(key) + 1 + strlen(value) > SDLIVE_NOTIFY_MAX)
                return -E2BIG;
        return 0;
}

SDLIVE_EXPORT int sdlive_notify_raw(sdlive *d, const char *key, const char *value) {
        int r = sdlive_notify_raw_check(key, value);

        if (r < 0)
                return r;
        return send_formatted(d, key, value);
}
