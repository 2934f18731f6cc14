/* SPDX-License-Identifier: MIT */
/* The cleaner's walk through the tree: entering and leaving directories,
 * one open directory per level (pass_state.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "pass_state.h"

void tree_enter(pass *p, int dir_fd, const char *name, const struct stat *st) {
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
                        pass_entry_error(p, name, "cannot open directory", errno);
                        parent->kept++;
                }
                if (fd >= 0)
                        close(fd);
                return;
        }
        /* dir is not leaked: the stack owns it, tree_leave() or
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

void tree_leave(pass *p) {
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
                pass_entry_error(p, f->name, "cannot remove directory", errno);
        if (errno != ENOENT)
                parent->kept++;
}
