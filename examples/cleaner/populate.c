/* SPDX-License-Identifier: MIT */
#include "populate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define FILES_PER_DIR 256
#define DIRS_PER_DIR 256

static int make_dir(int dir_fd, const char *path) {
        if (mkdirat(dir_fd, path, 0755) < 0 && errno != EEXIST) {
                int r = -errno;
                log_error("cannot create %s: %s", path, strerror(-r));
                return r;
        }
        return 0;
}

int populate_tree(int root_fd, uint64_t count) {
        char path[64];
        int r = make_dir(root_fd, "populated");

        for (uint64_t n = 0; r == 0 && n < count; n++) {
                unsigned long long top = n / (FILES_PER_DIR * DIRS_PER_DIR);
                unsigned leaf = (unsigned) (n / FILES_PER_DIR % DIRS_PER_DIR);

                if (n % (FILES_PER_DIR * DIRS_PER_DIR) == 0) {
                        snprintf(path, sizeof(path), "populated/%04llx", top);
                        r = make_dir(root_fd, path);
                }
                if (r == 0 && n % FILES_PER_DIR == 0) {
                        snprintf(path, sizeof(path), "populated/%04llx/%02x", top, leaf);
                        r = make_dir(root_fd, path);
                }
                if (r < 0)
                        break;
                snprintf(path, sizeof(path), "populated/%04llx/%02x/%08llx.blob", top, leaf,
                         (unsigned long long) n);
                int fd = openat(root_fd, path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
                if (fd < 0) {
                        r = -errno;
                        log_error("cannot create %s: %s", path, strerror(-r));
                        break;
                }
                /* An existing file keeps its content but counts as fresh. */
                if (futimens(fd, NULL) < 0) {
                        r = -errno;
                        log_error("cannot touch %s: %s", path, strerror(-r));
                }
                close(fd);
        }
        return r;
}
