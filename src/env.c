/* SPDX-License-Identifier: MIT */
/*
 * WATCHDOG_USEC and WATCHDOG_PID as the manager sets them: strict decimal,
 * no sign, blank or suffix. Pure parsing, no system call: also the fuzz
 * target's entry.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "sdlive_internal.h"

/* Strict unsigned decimal: digits only, no sign, no blanks. */
static int parse_u64(const char *s, uint64_t *ret) {
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        *ret = v;
        return 0;
}

int sdlive_watchdog_parse_env(const char *usec_env, const char *pid_env, pid_t self,
                              uint64_t *usec) {
        uint64_t v, pid;
        int r;

        if (!usec_env)
                return 1;
        if (strcmp(usec_env, "infinity") == 0)
                return -ERANGE;
        r = parse_u64(usec_env, &v);
        if (r < 0)
                return r;
        if (v == 0)
                return -EINVAL;
        if (v == UINT64_MAX || v < SDLIVE_WATCHDOG_MIN_USEC)
                return -ERANGE;

        if (pid_env) {
                r = parse_u64(pid_env, &pid);
                if (r < 0 || pid == 0 || pid > INT_MAX)
                        return -EINVAL;
                if ((pid_t) pid != self)
                        return 1;
        }
        *usec = v;
        return 0;
}

