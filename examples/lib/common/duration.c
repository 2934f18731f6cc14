/* SPDX-License-Identifier: MIT */
#include "duration.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define USEC_PER_MSEC UINT64_C(1000)
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MIN (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MIN)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)

static const struct {
        const char *suffix;
        uint64_t usec;
} duration_units[] = {
        { "", USEC_PER_SEC },     { "us", 1 },
        { "ms", USEC_PER_MSEC },  { "s", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },  { "m", USEC_PER_MIN },
        { "min", USEC_PER_MIN },  { "h", USEC_PER_HOUR },
        { "d", USEC_PER_DAY },
};

int duration_parse(const char *text, uint64_t *ret_usec) {
        uint64_t value = 0;
        bool overflow = false;
        const char *p = text;

        if (!text || *p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                unsigned digit = (unsigned) (*p - '0');
                if (value > (UINT64_MAX - digit) / 10)
                        overflow = true;
                else
                        value = value * 10 + digit;
        }
        /* A bad unit is -EINVAL however large the number. */
        for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++) {
                if (strcmp(p, duration_units[i].suffix) != 0)
                        continue;
                if (overflow || value > UINT64_MAX / duration_units[i].usec)
                        return -ERANGE;
                *ret_usec = value * duration_units[i].usec;
                return 0;
        }
        return -EINVAL;
}

/* usec / unit rounded to the nearest, without overflow near UINT64_MAX. */
static uint64_t rounded(uint64_t usec, uint64_t unit) {
        return usec / unit + (usec % unit >= unit - unit / 2);
}

char *duration_format(char *buf, size_t size, uint64_t usec) {
        if (usec < USEC_PER_MSEC)
                snprintf(buf, size, "%uus", (unsigned) usec);
        else if (usec < USEC_PER_SEC)
                snprintf(buf, size, "%ums", (unsigned) rounded(usec, USEC_PER_MSEC));
        else if (usec < 10 * USEC_PER_SEC && usec % USEC_PER_SEC != 0)
                snprintf(buf, size, "%.1fs", (double) usec / (double) USEC_PER_SEC);
        else if (usec < USEC_PER_MIN)
                snprintf(buf, size, "%us", (unsigned) rounded(usec, USEC_PER_SEC));
        else if (usec < USEC_PER_HOUR) {
                uint64_t s = rounded(usec, USEC_PER_SEC);
                if (s % 60)
                        snprintf(buf, size, "%umin %us", (unsigned) (s / 60), (unsigned) (s % 60));
                else
                        snprintf(buf, size, "%umin", (unsigned) (s / 60));
        } else if (usec < USEC_PER_DAY || usec % USEC_PER_DAY != 0) {
                uint64_t m = rounded(usec, USEC_PER_MIN);
                if (m % 60)
                        snprintf(buf, size, "%lluh %umin", (unsigned long long) (m / 60),
                                 (unsigned) (m % 60));
                else
                        snprintf(buf, size, "%lluh", (unsigned long long) (m / 60));
        } else
                snprintf(buf, size, "%llud", (unsigned long long) (usec / USEC_PER_DAY));
        return buf;
}
