/* SPDX-License-Identifier: MIT */
#include "trusted_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 if the open directory fd may be trusted, else -EPERM/-ENOTDIR with why. */
static int check_dir(int fd, const char *shown, char *why, size_t size) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode)) {
                snprintf(why, size, "%s is not a directory", shown);
                return -ENOTDIR;
        }
        if (st.st_uid != 0 && st.st_uid != geteuid()) {
                snprintf(why, size, "%s is owned by uid %u, neither root nor us (uid %u)", shown,
                         (unsigned) st.st_uid, (unsigned) geteuid());
                return -EPERM;
        }
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
                snprintf(why, size, "%s is writable by %s and not sticky (mode %04o)", shown,
                         (st.st_mode & S_IWOTH) ? "others" : "its group", (unsigned) (st.st_mode & 07777));
                return -EPERM;
        }
        return 0;
}

int trusted_dir_open(const char *path, char *why, size_t size) {
        char *real, *end;
        int fd = -1, next, r;

        snprintf(why, size, "%s", "");
        real = realpath(path, NULL);
        if (!real) {
                r = -errno;
                snprintf(why, size, "%s: %s", path, strerror(-r));
                return r;
        }
        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = fd < 0 ? -errno : check_dir(fd, "/", why, size);
        /* real is absolute and canonical: "/a/b", or "/" alone. Each step
         * opens the next component and checks it under its full prefix. */
        for (char *component = real + 1; r >= 0 && *component; component = end + 1) {
                char saved;

                end = strchrnul(component, '/');
                saved = *end;
                *end = '\0';
                next = openat(fd, component, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0) {
                        r = -errno;
                        snprintf(why, size, "%s: %s", real, strerror(-r));
                        break;
                }
                close(fd);
                fd = next;
                r = check_dir(fd, real, why, size);
                *end = saved;
                if (!saved)
                        break;
        }
        free(real);
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                return r;
        }
        return fd;
}

int trusted_dir_open_private(const char *path, char *why, size_t size) {
        struct stat st;
        int fd = trusted_dir_open(path, why, size);

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH)) {
                snprintf(why, size, "%s is writable by %s (mode %04o): it must be writable by its owner only",
                         path, (st.st_mode & S_IWOTH) ? "others" : "its group", (unsigned) (st.st_mode & 07777));
                close(fd);
                return -EPERM;
        }
        return fd;
}

int trusted_dir_split(const char *path, char *dir, size_t size, const char **name) {
        const char *slash = strrchr(path, '/');
        size_t len;

        *name = slash ? slash + 1 : path;
        if (!**name || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
                return -EINVAL;
        if (!slash)
                len = snprintf(dir, size, ".");
        else if (slash == path)
                len = snprintf(dir, size, "/");
        else
                len = snprintf(dir, size, "%.*s", (int) (slash - path), path);
        return len < size ? 0 : -ENAMETOOLONG;
}

int trusted_dir_our_socket(int dir_fd, const char *name) {
        struct stat st;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        return S_ISSOCK(st.st_mode) && st.st_uid == geteuid() ? 1 : -EEXIST;
}
