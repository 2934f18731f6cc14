/* SPDX-License-Identifier: MIT */
/*
 * The cleaner's liveness pattern, whole: a pass that may take far longer
 * than WatchdogSec pets once per entry (before_entry(), cheap when no
 * keepalive is due) and paces itself with sdlive_idle(), which pets while
 * it waits; between passes the loop (pass_loop()) idles with
 * sdlive_idle(). Only a pass that stops moving withholds the keepalives.
 * Entering and leaving directories is tree.c's.
 */
#include "pass.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "monotonic.h"
#include "tree.h"

#define PARTIAL_SUFFIX ".partial"
#define STATUS_PERIOD_USEC SDLIVE_USEC_PER_SEC
/* Pacing sleeps shorter than this are deferred and merged into a later one. */
#define PACING_MIN_SLEEP_USEC SDLIVE_USEC_PER_MSEC
/* Entry problems logged per pass before they are only counted. */
#define ERRORS_LOGGED_MAX 10

typedef struct pass {
        const pass_config *config;
        pass_stats stats;
        tree tree;
        uint64_t now_wall_usec;    /* wall clock at the start: ages are measured against it */
        uint64_t start_usec;       /* CLOCK_MONOTONIC */
        uint64_t next_status_usec;
} pass;

static uint64_t wall_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * SDLIVE_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* Counts an entry that could not be examined or removed, and logs the
 * first few of a pass. */
static void entry_error(pass *p, const char *name, const char *action, int error) {
        p->stats.errors++;
        if (p->stats.errors <= ERRORS_LOGGED_MAX)
                log_warning("%s %s: %s%s", action, name, strerror(error),
                            p->stats.errors == ERRORS_LOGGED_MAX ? " (further errors this pass are only counted)" : "");
}

/* The tree's errors are the pass's. */
static void tree_error(void *userdata, const char *name, const char *action, int error) {
        entry_error(userdata, name, action, error);
}

static void report_status(pass *p) {
        sdlive_notify_status(p->config->d,
                             "pass %llu: scanned %llu entries, deleted %llu blobs, %llu partials, %llu directories",
                             (unsigned long long) p->config->number,
                             (unsigned long long) p->stats.scanned,
                             (unsigned long long) p->stats.blobs_deleted,
                             (unsigned long long) p->stats.partials_deleted,
                             (unsigned long long) p->tree.dirs_removed);
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
        tree_level *f = &p->tree.stack[p->tree.depth - 1];

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

static int walk(pass *p) {
        while (p->tree.depth > 0) {
                tree_level *f = &p->tree.stack[p->tree.depth - 1];
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
                        tree_leave(&p->tree);
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
                        tree_enter(&p->tree, dir_fd, de->d_name, &st);
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

        *ret_stats = (pass_stats) { 0 }; /* what a pass that cannot start counted */
        /* A fresh descriptor per pass: its own read position, root_fd untouched. */
        fd = openat(c->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !(root = fdopendir(fd))) {
                r = -errno;
                log_error("cannot read the blob directory: %s", strerror(-r));
                if (fd >= 0)
                        close(fd);
                return r;
        }
        p.tree.stack = calloc(TREE_MAX_DEPTH, sizeof(tree_level));
        if (!p.tree.stack) {
                closedir(root);
                log_error("out of memory");
                return -ENOMEM;
        }
        p.tree.stack[0] = (tree_level) { .dir = root };
        strcpy(p.tree.stack[0].name, ".");
        p.tree.depth = 1;
        p.tree.root_dev = st.st_dev;
        p.tree.error = tree_error;
        p.tree.userdata = &p;
        p.now_wall_usec = wall_usec();
        p.start_usec = monotonic_usec();
        p.next_status_usec = p.start_usec;

        r = walk(&p);
        while (p.tree.depth > 0)
                closedir(p.tree.stack[--p.tree.depth].dir);
        free(p.tree.stack);

        p.stats.dirs_removed = p.tree.dirs_removed;
        p.stats.too_deep = p.tree.too_deep;
        p.stats.duration_usec = monotonic_usec() - p.start_usec;
        *ret_stats = p.stats;
        return r;
}

static void log_pass(const pass_stats *s, uint64_t number) {
        char took[DURATION_FORMAT_MAX];

        log_info("pass %llu done in %s: scanned %llu entries, deleted %llu blobs, %llu partials, "
                 "%llu directories, %llu errors",
                 (unsigned long long) number, duration_format(took, sizeof(took), s->duration_usec),
                 (unsigned long long) s->scanned, (unsigned long long) s->blobs_deleted,
                 (unsigned long long) s->partials_deleted, (unsigned long long) s->dirs_removed,
                 (unsigned long long) s->errors);
}

int pass_loop(pass_config *config, uint64_t interval_usec, bool once) {
        char interval[DURATION_FORMAT_MAX], took[DURATION_FORMAT_MAX];
        sdlive *d = config->d;

        duration_format(interval, sizeof(interval), interval_usec);
        for (;;) {
                pass_stats stats;
                int r;

                fault_switch_check(config->wedge);
                config->number++;
                r = pass_run(config, &stats);
                if (r == SDLIVE_WAKE_STOP)
                        return EXIT_SUCCESS;
                if (r < 0) {
                        sdlive_notify_errno(d, -r);
                        return EXIT_FAILURE;
                }
                log_pass(&stats, config->number);
                if (once)
                        return stats.errors > 0 ? EXIT_FAILURE : EXIT_SUCCESS;

                sdlive_notify_status(d, "idle: pass %llu took %s, scanned %llu, deleted %llu blobs, "
                                     "%llu partials, %llu directories; next pass in %s",
                                     (unsigned long long) config->number,
                                     duration_format(took, sizeof(took), stats.duration_usec),
                                     (unsigned long long) stats.scanned,
                                     (unsigned long long) stats.blobs_deleted,
                                     (unsigned long long) stats.partials_deleted,
                                     (unsigned long long) stats.dirs_removed, interval);
                r = sdlive_idle(d, interval_usec);
                if (r == SDLIVE_WAKE_STOP)
                        return EXIT_SUCCESS;
                if (r < 0) {
                        log_error("idle failed: %s", strerror(-r));
                        return EXIT_FAILURE;
                }
        }
}
