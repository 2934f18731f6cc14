/* SPDX-License-Identifier: MIT */
#include "inherit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "fdstore.h"
#include "log.h"

static int set_nonblocking(int fd) {
        int flags = fcntl(fd, F_GETFL);

        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

/* The passed descriptors are 3..3+n-1 whatever their names say: when the
 * names are malformed, they are closed unused. */
static void close_unnamed(void) {
        int n = sd_listen_fds(1);

        for (int i = 0; i < n; i++)
                close(SD_LISTEN_FDS_START + i);
        if (n > 0)
                log_warning("closed %d passed descriptors: LISTEN_FDNAMES is malformed", n);
}

void inherit_collect(inherited *in) {
        char **names = NULL;
        int n;

        in->listen_fd = -1;
        in->n = 0;
        n = sd_listen_fds_with_names(0, &names);
        if (n < 0) {
                log_warning("ignoring the passed descriptors (LISTEN_FDS, LISTEN_FDNAMES): %s", strerror(-n));
                close_unnamed();
                return;
        }
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_FDNAMES");
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                char *name = names ? names[i] : NULL;

                if (in->listen_fd < 0 && name && strcmp(name, "listen") == 0 &&
                    sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0 && set_nonblocking(fd) == 0) {
                        in->listen_fd = fd;
                        free(name);
                } else if (in->n < INHERIT_MAX) {
                        in->fds[in->n] = fd;
                        in->names[in->n++] = name;
                } else {
                        log_warning("more than %d descriptors passed, closing descriptor %d (%s)",
                                    INHERIT_MAX, fd, name ? name : "unnamed");
                        close(fd);
                        free(name);
                }
        }
        free(names);
}

void inherit_release(inherited *in) {
        for (unsigned i = 0; i < in->n; i++) {
                close(in->fds[i]);
                free(in->names[i]);
        }
        in->n = 0;
}

/* A stored descriptor that is not one of ours: closed, and its name dropped
 * from the store (which also drops any other descriptor of that name). */
static void refuse(sdlive *d, int fd, const char *name, const char *why) {
        log_warning("refusing passed descriptor %d (%s): %s", fd, name ? name : "unnamed", why);
        close(fd);
        if (name) {
                int r = sdlive_notify_fdstore_remove(d, name);
                if (r < 0)
                        log_warning("cannot remove %s from the FD store: %s", name, strerror(-r));
        }
}

unsigned inherit_adopt(inherited *in, clients *c, sdlive *d, uint64_t now_usec) {
        bool name_refused[CLIENTS_MAX] = { false };
        unsigned adopted = 0;

        for (unsigned i = 0; i < in->n; i++) {
                int fd = in->fds[i], slot = -1;
                const char *name = in->names[i];

                if (!name)
                        refuse(d, fd, name, "no name");
                else if ((slot = fdstore_client_slot(name)) < 0)
                        refuse(d, fd, name, "not a client connection name");
                else {
                        const char *why = NULL;
                        if (c->slots[slot].fd >= 0)
                                why = "a second descriptor of that name";
                        else if (sd_is_socket_unix(fd, SOCK_STREAM, 0, NULL, 0) <= 0)
                                why = "not a connected unix stream socket";
                        else if (set_nonblocking(fd) < 0)
                                why = "cannot make it non-blocking";
                        if (why) {
                                refuse(d, fd, name, why);
                                name_refused[slot] = true;
                        } else {
                                clients_adopt(c, (unsigned) slot, fd, now_usec);
                                adopted++;
                        }
                }
                free(in->names[i]);
                in->names[i] = NULL;
        }
        in->n = 0;
        /* Removing a refused name dropped the adopted connection of that
         * name from the store too: store it again. */
        for (unsigned slot = 0; slot < CLIENTS_MAX; slot++)
                if (name_refused[slot] && c->slots[slot].fd >= 0)
                        c->slots[slot].store = CLIENT_TO_STORE;
        return adopted;
}
