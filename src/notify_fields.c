/* SPDX-License-Identifier: MIT */
/*
 * The notify fields beyond readiness and status: MAINPID=, EXIT_STATUS=,
 * BUSERROR=, NOTIFYACCESS=, and a validated KEY=VALUE for fields this
 * library has no call for. Every value is checked before anything is sent,
 * so no argument can add a line (an assignment) of its own, and a field
 * the library has a call for is refused raw, so no caller can get around
 * that call's checks (the progress gate's among them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdlive_internal.h"

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

/* The fields this library sends through a call of its own, each with that
 * call's checks: a keepalive only while every progress loop moves, MAINPID=
 * only above 1, STATUS= cleaned, descriptors where the manager needs them.
 * Sorted for bsearch(). */
static const char *const owned_keys[] = {
        "BARRIER",         /* sdlive_notify_barrier() */
        "BUSERROR",        /* sdlive_notify_bus_error() */
        "ERRNO",           /* sdlive_notify_errno() */
        "EXIT_STATUS",     /* sdlive_notify_exit_status() */
        "EXTEND_TIMEOUT_USEC", /* sdlive_notify_extend_timeout() */
        "FDNAME",          /* sdlive_notify_fdstore(), _remove() */
        "FDPOLL",          /* sdlive_notify_fdstore() */
        "FDSTORE",         /* sdlive_notify_fdstore() */
        "FDSTOREREMOVE",   /* sdlive_notify_fdstore_remove() */
        "MAINPID",         /* sdlive_notify_mainpid() */
        "MAINPIDFD",       /* the main process as a pidfd: as MAINPID= */
        "MAINPIDFDID",     /* the main process's pidfd inode: as MAINPID= */
        "MONOTONIC_USEC",  /* sdlive_notify_reloading() */
        "NOTIFYACCESS",    /* sdlive_notify_access() */
        "READY",           /* sdlive_notify_ready() */
        "RELOADING",       /* sdlive_notify_reloading() */
        "STATUS",          /* sdlive_notify_status() */
        "STOPPING",        /* sdlive_notify_stopping() */
        "WATCHDOG",        /* sdlive_pet_watchdog(), sdlive_watchdog_trigger() */
        "WATCHDOG_USEC",   /* sdlive_watchdog_set_timeout() */
};

static int compare_key(const void *key, const void *entry) {
        return strcmp(key, *(const char *const *) entry);
}

static bool key_owned(const char *key) {
        return bsearch(key, owned_keys, sizeof(owned_keys) / sizeof(owned_keys[0]),
                       sizeof(owned_keys[0]), compare_key) != NULL;
}

int sdlive_notify_raw_check(const char *key, const char *value) {
        if (!key_valid(key) || !value)
                return -EINVAL;
        /* A field with a call of its own goes through that call, so raw
         * cannot send what the call refuses or withholds. */
        if (key_owned(key))
                return -EPERM;
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
