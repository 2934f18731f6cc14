/* SPDX-License-Identifier: MIT */
#include "listener.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

/* Removes path when it is a socket nobody listens on. 0, or -errno. */
static int remove_stale_socket(const char *path, const struct sockaddr_un *sa) {
        struct stat st;
        int fd, r = 0;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode)) {
                log_error("%s exists and is not a socket", path);
                return -EEXIST;
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) == 0) {
                log_error("another process is listening on %s", path);
                r = -EADDRINUSE;
        } else if (errno == ECONNREFUSED) {
                if (unlink(path) < 0 && errno != ENOENT)
                        r = -errno;
                else
                        log_info("removed stale socket %s", path);
        }
        /* Other connect errors: let bind() report the problem. */
        close(fd);
        return r;
}

int listener_open(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (strlen(path) >= sizeof(sa.sun_path)) {
                log_error("socket path %s is too long (at most %zu bytes)", path, sizeof(sa.sun_path) - 1);
                return -ENAMETOOLONG;
        }
        strcpy(sa.sun_path, path);

        r = remove_stale_socket(path, &sa);
        if (r < 0) {
                if (r != -EADDRINUSE && r != -EEXIST)
                        log_error("%s: %s", path, strerror(-r));
                return r;
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                r = -errno;
                log_error("socket: %s", strerror(-r));
                return r;
        }
        if (bind(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                log_error("cannot listen on %s: %s", path, strerror(-r));
                close(fd);
                return r;
        }
        return fd;
}
