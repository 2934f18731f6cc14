/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ACCEPTOR_INHERIT_H
#define SDLIVE_ACCEPTOR_INHERIT_H

#include <stdint.h>

#include <sdlive.h>

#include "clients.h"

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
