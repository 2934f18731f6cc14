/* SPDX-License-Identifier: MIT */
#include "pass.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "monotonic.h"

#define PARTIAL_SUFFIX ".partial"
#define STATUS_PERIOD_USEC SDLIVE_USEC_PER_SEC
/* Pacing sleeps shorter than this are deferred and merged into a later one. */
#define PACING_MIN_SLEEP_USEC SDLIVE_USEC_PER_MSEC
/* Entry problems logged per pass before they are only counted. */
#define ERRORS_LOGGED_MAX 10

typedef struct frame {
        DIR *dir;
        uint64_t kept;             /* entries that remain in this directory */
        bool incomplete;           /* reading failed: never treat as empty */
        char name[NAME_MAX + 1];   /* name in the parent directory */
} frame;

typedef struct pass {
        const pass_config *config;
        pass_stats stats;
        frame *stack;
        unsigned depth;
        dev_t root_dev;
        uint64_t now_wall_usec;    /* wall clock at the start: ages are measured against it */
        uint64_t start_usec;       /* CLOCK_MONOTONIC */
        uint64_t next_status_usec;
} pass;

static uint64_t wall_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * SDLIVE_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static void entry_error(pass *p, const char *name, const char *action, int error) {
        p->stats.errors++;
        if (p->stats.errors <= ERRORS_LOGGED_MAX)
                log_warning("%s %s: %s%s", action, name, strerror(error),
                            p->stats.errors == ERRORS_LOGGED_MAX ? " (further errors this pass are only counted)" : "");
}

static void report_status(pass *p) {
        sdlive_notify_status(p->config->d,
                             "pass %llu: scanned %llu entries, deleted %llu blobs, %llu partials, %llu directories",
                             (unsigned long long) p->config->number,
                             (unsigned long long) p->stats.scanned,
                             (unsigned long long) p->stats.blobs_deleted,
                             (unsigned long long) p->stats.partials_deleted,
                             (unsigned long long) p->stats.dirs_removed);
}

/* Runs before each entry: proof of progress, stop, fault injection, pacing.
 * Returns 0 to go on or SDLIVE_WAKE_STOP. */
static int before_entry(pass *p) {
        const pass_config *c = p->config;
        uint64_t now;

        sdlive_pet_watchdog(c->d);
        if (sdlive_stopping(c->d) > 0)
                return SDLIVE_WAKE_STOP;
        fault_switch_check(c->wedge);

        now = monotonic_usec();
        if (c->max_rate > 0) {
                uint64_t slot = p->start_usec + p->stats.scanned * SDLIVE_USEC_PER_SEC / c->max_rate;
                if (slot >= now + PACING_MIN_SLEEP_USEC) {
                        /* sdlive_idle pets while it waits: pacing never starves the watchdog. */
                        if (sdlive_idle(c->d, slot - now) == SDLIVE_WAKE_STOP)
                                return SDLIVE_WAKE_STOP;
                        now = monotonic_usec();
                }
        }
        if (now >= p->next_status_usec) {
                report_status(p);
                p->next_status_usec = now + STATUS_PERIOD_USEC;
        }
        return 0;
}

static void clean_file(pass *p, int dir_fd, const char *name, const struct stat *st) {
        const pass_config *c = p->config;
        size_t len = strlen(name), suffix = strlen(PARTIAL_SUFFIX);
        bool partial = len > suffix && strcmp(name + len - suffix, PARTIAL_SUFFIX) == 0;
        uint64_t max_age = partial ? c->partial_max_age_usec : c->max_age_usec;
        uint64_t mtime = (uint64_t) st->st_mtim.tv_sec * SDLIVE_USEC_PER_SEC + (uint64_t) st->st_mtim.tv_nsec / 1000;
        frame *f = &p->stack[p->depth - 1];

        if (st->st_mtim.tv_sec < 0 || max_age > p->now_wall_usec || mtime > p->now_wall_usec - max_age) {
                f->kept++;
                return;
        }
        if (unlinkat(dir_fd, name, 0) < 0) {
                if (errno != ENOENT) {
                        entry_error(p, name, "cannot delete", errno);
                        f->kept++;
                }
                return;
        }
        if (partial)
                p->stats.partials_deleted++;
        else
                p->stats.blobs_deleted++;
}

static void enter_directory(pass *p, int dir_fd, const char *name, const struct stat *st) {
        frame *parent = &p->stack[p->depth - 1];
        int fd;
        DIR *dir;

        if (st->st_dev != p->root_dev) {
                parent->kept++;
                return;
        }
        if (p->depth >= PASS_MAX_DEPTH) {
                if (p->stats.too_deep++ == 0)
                        log_warning("%s: deeper than %u levels, skipped (reported once per pass)",
                                    name, PASS_MAX_DEPTH);
                parent->kept++;
                return;
        }
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || !(dir = fdopendir(fd))) {
                if (errno != ENOENT) {
                        entry_error(p, name, "cannot open directory", errno);
                        parent->kept++;
                }
                if (fd >= 0)
                        close(fd);
                return;
        }
        /* dir is not leaked: the stack owns it, leave_directory() or
         * pass_run()'s unwinding closes it; gcc's analyser loses it in the
         * heap-allocated stack. */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
        frame *f = &p->stack[p->depth++];
        *f = (frame) { .dir = dir };
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
        strcpy(f->name, name);
}

/* Closes the innermost directory, removing it when it was found empty. */
static void leave_directory(pass *p) {
        frame *f = &p->stack[--p->depth];
        bool empty = f->kept == 0 && !f->incomplete;

        closedir(f->dir);
        if (p->depth == 0)
                return;
        frame *parent = &p->stack[p->depth - 1];
        if (!empty) {
                parent->kept++;
                return;
        }
        if (unlinkat(dirfd(parent->dir), f->name, AT_REMOVEDIR) == 0) {
                p->stats.dirs_removed++;
                return;
        }
        /* ENOTEMPTY/EEXIST: a writer added something meanwhile; keep it. */
        if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
                entry_error(p, f->name, "cannot remove directory", errno);
        if (errno != ENOENT)
                parent->kept++;
}

static int walk(pass *p) {
        while (p->depth > 0) {
                frame *f = &p->stack[p->depth - 1];
                int dir_fd = dirfd(f->dir);
                struct dirent *de;
                struct stat st;

                errno = 0;
                de = readdir(f->dir);
                if (!de) {
                        if (errno != 0) {
                                entry_error(p, f->name, "cannot read directory", errno);
                                f->incomplete = true;
                        }
                        leave_directory(p);
                        continue;
                }
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;

                if (before_entry(p) == SDLIVE_WAKE_STOP)
                        return SDLIVE_WAKE_STOP;
                p->stats.scanned++;

                if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT) {
                                entry_error(p, de->d_name, "cannot stat", errno);
                                f->kept++;
                        }
                        continue;
                }
                if (S_ISDIR(st.st_mode))
                        enter_directory(p, dir_fd, de->d_name, &st);
                else if (S_ISREG(st.st_mode))
                        clean_file(p, dir_fd, de->d_name, &st);
                else
                        f->kept++;
        }
        return 0;
}

int pass_run(const pass_config *c, pass_stats *ret_stats) {
        pass p = { .config = c };
        struct stat st;
        int fd, r;
        DIR *root;

        /* A fresh descriptor per pass: its own read position, root_fd untouched. */
        fd = openat(c->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !(root = fdopendir(fd))) {
                r = -errno;
                log_error("cannot read the blob directory: %s", strerror(-r));
                if (fd >= 0)
                        close(fd);
                return r;
        }
        p.stack = calloc(PASS_MAX_DEPTH, sizeof(frame));
        if (!p.stack) {
                closedir(root);
                log_error("out of memory");
                return -ENOMEM;
        }
        p.stack[0] = (frame) { .dir = root };
        strcpy(p.stack[0].name, ".");
        p.depth = 1;
        p.root_dev = st.st_dev;
        p.now_wall_usec = wall_usec();
        p.start_usec = monotonic_usec();
        p.next_status_usec = p.start_usec;

        r = walk(&p);
        while (p.depth > 0)
                closedir(p.stack[--p.depth].dir);
        free(p.stack);

        p.stats.duration_usec = monotonic_usec() - p.start_usec;
        *ret_stats = p.stats;
        return r;
}
