/* SPDX-License-Identifier: MIT */
/* Opening a unit's files under a root, by type, without blocking. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "files.h"

#define READ_CHUNK 65536

/* openat2 under root (the host when root is empty). */
static int open_in(const char *root, const char *path, int flags) {
        struct open_how how = { .flags = (uint64_t) flags | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
        int dir = AT_FDCWD, fd, e;

        if (root && *root) {
                dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dir < 0)
                        return -1;
                how.resolve |= RESOLVE_IN_ROOT;
        }
        fd = (int) syscall(SYS_openat2, dir, path, &how, sizeof(how));
        e = errno;
        if (dir >= 0)
                close(dir);
        errno = e;
        return fd;
}

const char *files_type_name(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFREG: return "a regular file";
        case S_IFDIR: return "a directory";
        case S_IFIFO: return "a FIFO";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFSOCK: return "a socket";
        case S_IFLNK: return "a symlink";
        }
        return "of an unknown type";
}

int files_stat(const char *root, const char *path, struct stat *st) {
        int fd = open_in(root, path, O_PATH), r, e;

        if (fd < 0)
                return -1;
        r = fstat(fd, st);
        e = errno;
        close(fd);
        errno = e;
        return r;
}

int files_open_regular(const char *root, const char *path, struct stat *st, char *err, size_t err_size) {
        char proc[64];
        int fd = open_in(root, path, O_PATH), rd;

        if (fd < 0 || fstat(fd, st) < 0) {
                int e = errno;

                snprintf(err, err_size, "%s: %s", path, strerror(e));
                if (fd >= 0)
                        close(fd);
                errno = e;
                return -1;
        }
        if (!S_ISREG(st->st_mode)) {
                snprintf(err, err_size, "%s: not a regular file but %s", path, files_type_name(st->st_mode));
                close(fd);
                errno = EINVAL;
                return -1;
        }
        /* Reopening the O_PATH descriptor opens the very inode just checked. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        rd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (rd < 0) {
                int e = errno;

                snprintf(err, err_size, "%s: %s", path, strerror(e));
                close(fd);
                errno = e;
                return -1;
        }
        close(fd);
        return rd;
}

int files_open_dir(const char *root, const char *path) { return open_in(root, path, O_RDONLY | O_DIRECTORY); }

int files_resolve(const char *root, const char *path, char *out, size_t size) {
        char proc[64], host[4096], top[4096];
        int fd = open_in(root, path, O_PATH), e;
        ssize_t n;
        size_t skip = 0;

        if (fd < 0)
                return -1;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, host, sizeof(host) - 1);
        e = errno;
        close(fd);
        if (n < 0 || n >= (ssize_t) sizeof(host) - 1) {
                errno = n < 0 ? e : ENAMETOOLONG;
                return -1;
        }
        host[n] = '\0';
        if (root && *root) {
                if (!realpath(root, top))
                        return -1;
                skip = strcmp(top, "/") ? strlen(top) : 0;
                if (strncmp(host, top, skip) != 0) {
                        errno = EXDEV;
                        return -1;
                }
        }
        if (snprintf(out, size, "%s", host[skip] ? host + skip : "/") >= (int) size) {
                errno = ENAMETOOLONG;
                return -1;
        }
        return 0;
}

int files_readlink(const char *root, const char *path, char *out, size_t size) {
        int fd = open_in(root, path, O_PATH | O_NOFOLLOW), e;
        ssize_t n;

        if (fd < 0)
                return -1;
        n = readlinkat(fd, "", out, size - 1);
        e = errno;
        close(fd);
        if (n < 0 || n >= (ssize_t) size - 1) {
                errno = n < 0 ? e : ENAMETOOLONG;
                return -1;
        }
        out[n] = '\0';
        return 0;
}

long files_read_bounded(int fd, size_t max, char **ret) {
        size_t len = 0, cap = 0;
        char *buf = NULL;

        *ret = NULL;
        for (;;) {
                ssize_t n;

                if (cap - len < READ_CHUNK) {
                        char *more = cap > max ? NULL : realloc(buf, cap + READ_CHUNK + 1);

                        if (!more) {
                                free(buf);
                                if (cap > max)
                                        return -2;
                                errno = ENOMEM;
                                return -1;
                        }
                        buf = more;
                        cap += READ_CHUNK;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;

                        free(buf);
                        errno = e;
                        return -1;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > max) {
                        free(buf);
                        return -2;
                }
        }
        buf[len] = '\0';
        *ret = buf;
        return (long) len;
}
