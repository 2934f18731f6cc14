/* SPDX-License-Identifier: MIT */
/*
 * The acceptor's liveness-across-restarts pattern, whole: the listening
 * socket comes from the socket unit (LISTEN_FDS), every client connection
 * is put in the manager's FD store as it is accepted and removed as it
 * closes, and the next process, after a crash, a watchdog kill or a
 * restart, takes them back (inherit_*()) so no client notices more than a
 * delay.
 */
#include "fdstore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "log.h"

void fdstore_client_name(unsigned slot, char buf[static FDSTORE_NAME_MAX]) {
        snprintf(buf, FDSTORE_NAME_MAX, "client-%u", slot);
}

int fdstore_client_slot(const char *name) {
        static const char prefix[] = "client-";
        unsigned slot = 0;
        const char *p;

        if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
                return -EINVAL;
        p = name + sizeof(prefix) - 1;
        if (!*p || (p[0] == '0' && p[1]))
                return -EINVAL;
        for (; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                slot = slot * 10 + (unsigned) (*p - '0');
                if (slot >= CLIENTS_MAX)
                        return -EINVAL;
        }
        return (int) slot;
}

/* A full manager queue (it drains in well under a millisecond unless the
 * manager is stuck) is waited out this long, in steps, before a new
 * connection is left for a later attempt: until it is stored, the death of
 * this process would drop it. */
#define STORE_WAIT_USEC 5000
#define STORE_WAIT_STEP_USEC 100

static bool queue_full(int r) {
        return r == -EAGAIN || r == -ENOBUFS;
}

static int store(sdlive *d, int fd, const char *name) {
        const struct timespec step = { .tv_nsec = STORE_WAIT_STEP_USEC * 1000 };
        unsigned waited = 0;
        int r;

        while (queue_full(r = sdlive_notify_fdstore(d, &fd, 1, name, 0)) && waited < STORE_WAIT_USEC) {
                nanosleep(&step, NULL);
                waited += STORE_WAIT_STEP_USEC;
        }
        return r;
}

/* Returns false when the manager's queue is full and the slot keeps its state. */
static bool sync_slot(sdlive *d, client *cl, unsigned slot) {
        char name[FDSTORE_NAME_MAX];
        int r;

        if (cl->fd >= 0 && cl->store == CLIENT_TO_STORE) {
                fdstore_client_name(slot, name);
                r = store(d, cl->fd, name);
                if (queue_full(r))
                        return false;
                if (r < 0)
                        log_warning("cannot put connection %s in the FD store, a restart will drop it: %s",
                                    name, strerror(-r));
                cl->store = r > 0 ? CLIENT_STORED : CLIENT_UNSTORED;
        } else if (cl->fd < 0 && cl->store == CLIENT_STORED) {
                fdstore_client_name(slot, name);
                r = sdlive_notify_fdstore_remove(d, name);
                if (queue_full(r))
                        return false;
                if (r < 0)
                        /* shutdown() already ended the connection: the
                         * manager drops its copy when it sees the hang-up. */
                        log_warning("cannot remove %s from the FD store: %s", name, strerror(-r));
                cl->store = CLIENT_UNSTORED;
        }
        return true;
}

bool fdstore_sync(clients *c, sdlive *d) {
        for (unsigned i = 0; i < CLIENTS_MAX; i++)
                if (!sync_slot(d, &c->slots[i], i))
                        return true;
        return false;
}

/* ---- Taking back at start ---- */

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
