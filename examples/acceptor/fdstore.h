/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ACCEPTOR_FDSTORE_H
#define SDLIVE_ACCEPTOR_FDSTORE_H

#include <stdbool.h>
#include <stdint.h>

#include <sdlive.h>

#include "clients.h"

/*
 * Socket activation and the FD store, both ways (fdstore.c). The
 * acceptor's client connections in the manager's FD store
 * (FileDescriptorStoreMax= in its unit): each is stored under the name
 * "client-<slot>" and removed by that name once it closes, so after a crash,
 * a watchdog kill or `systemctl restart` the next process takes them back
 * (inherit_collect(), inherit_adopt() below) and no connected client
 * notices more than a delay.
 */
#define FDSTORE_NAME_MAX sizeof("client-4294967295")

/* Writes the store name of a slot into buf. */
void fdstore_client_name(unsigned slot, char buf[static FDSTORE_NAME_MAX]);

/* The slot a store name stands for: "client-<n>" with n in decimal,
 * without sign or leading zero, below CLIENTS_MAX. -EINVAL otherwise. */
int fdstore_client_slot(const char *name);

/* Brings the store in line with the slots: stores each connection marked
 * CLIENT_TO_STORE, removes the entry of each closed CLIENT_STORED slot.
 * Outside systemd, or when a message is refused for good (logged), a
 * connection stays unprotected: CLIENT_UNSTORED. Returns true while
 * something is left because the manager's queue is full: call again soon,
 * and accept no one meanwhile (new connections wait in the backlog, which
 * survives a restart; a connection not yet stored does not). */
bool fdstore_sync(clients *c, sdlive *d);


/* ---- Taking back at start ---- */

/*
 * The descriptors the manager passes at start (LISTEN_FDS, LISTEN_FDNAMES):
 * the listening socket of sdlive-acceptor.socket, named "listen", and the
 * client connections the previous process left in the FD store, named
 * "client-<slot>" (fdstore.h). Names and descriptors are not trusted: only a
 * listening AF_UNIX stream socket is taken as "listen" (the first one), only
 * a connected AF_UNIX stream socket under a valid, unused client name is
 * taken back, at most CLIENTS_MAX of them. Everything else is closed and, if
 * it came from the store, removed from it so the next start does not get
 * it again.
 */
#define INHERIT_MAX (1 + CLIENTS_MAX + 64) /* more than this are closed unseen */

typedef struct inherited {
        int listen_fd;                  /* -1: none passed */
        unsigned n;                     /* other descriptors, in fds/names */
        int fds[INHERIT_MAX];
        char *names[INHERIT_MAX];       /* malloc()ed, or NULL when unnamed */
} inherited;

/* Collects the passed descriptors and unsets LISTEN_*; call before opening
 * any descriptor. Never fails: a malformed environment is logged and
 * ignored. */
void inherit_collect(inherited *in);

/* Closes the client connections collected and frees them: the store keeps
 * its copies for the next start. */
void inherit_release(inherited *in);

/* Moves the client connections into c (as already stored), closes what is
 * refused and removes it from the store; frees the rest of in. Returns how
 * many connections were taken back. */
unsigned inherit_adopt(inherited *in, clients *c, sdlive *d, uint64_t now_usec);

#endif
