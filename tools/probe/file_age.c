/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "duration.h"
#include "probes.h"

bool probe_run_file_age(const struct probe_spec *p, char *error, size_t size) {
        char age_text[DURATION_FORMAT_MAX], max_text[DURATION_FORMAT_MAX];
        struct timespec now;
        struct stat st;
        uint64_t now_usec, mtime_usec, age;

        if (stat(p->target, &st) < 0) {
                snprintf(error, size, "%s", strerror(errno));
                return false;
        }
        (void) clock_gettime(CLOCK_REALTIME, &now);
        now_usec = (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000;
        mtime_usec = (uint64_t) st.st_mtim.tv_sec * 1000000 + (uint64_t) st.st_mtim.tv_nsec / 1000;
        /* A time in the future (clock stepped back) counts as fresh. */
        age = now_usec > mtime_usec ? now_usec - mtime_usec : 0;
        if (age <= p->s.max_age_usec)
                return true;
        snprintf(error, size, "modified %s ago (at most %s)", duration_format(age_text, sizeof(age_text), age),
                 duration_format(max_text, sizeof(max_text), p->s.max_age_usec));
        return false;
}
