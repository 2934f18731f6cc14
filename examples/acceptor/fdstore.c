/* SPDX-License-Identifier: MIT */
#include "fdstore.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
