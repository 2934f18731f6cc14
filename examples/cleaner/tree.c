/* SPDX-License-Identifier: MIT */
/* The cleaner's walk through the tree: entering and leaving directories
 * (tree.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "tree.h"

void tree_enter(tree *t, int dir_fd, const char *name, const struct stat *st) {
        tree_level *parent = &t->stack[t->depth - 1];
        int fd;
        DIR *dir;

        if (st->st_dev != t->root_dev) {
                parent->kept++;
                return;
        }
        if (t->depth >= TREE_MAX_DEPTH) {
                if (t->too_deep++ == 0)
                        log_warning("%s: deeper than %u levels, skipped (reported once per pass)",
                                    name, TREE_MAX_DEPTH);
                parent->kept++;
                return;
        }
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || !(dir = fdopendir(fd))) {
                if (errno != ENOENT) {
                        t->error(t->userdata, name, "cannot open directory", errno);
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
        tree_level *f = &t->stack[t->depth++];
        *f = (tree_level) { .dir = dir };
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
        strcpy(f->name, name);
}

void tree_leave(tree *t) {
        tree_level *f = &t->stack[--t->depth];
        bool empty = f->kept == 0 && !f->incomplete;

        closedir(f->dir);
        if (t->depth == 0)
                return;
        tree_level *parent = &t->stack[t->depth - 1];
        if (!empty) {
                parent->kept++;
                return;
        }
        if (unlinkat(dirfd(parent->dir), f->name, AT_REMOVEDIR) == 0) {
                t->dirs_removed++;
                return;
        }
        /* ENOTEMPTY/EEXIST: a writer added something meanwhile; keep it. */
        if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
                t->error(t->userdata, f->name, "cannot remove directory", errno);
        if (errno != ENOENT)
                parent->kept++;
}
