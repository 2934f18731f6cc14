/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ACCEPTOR_FDSTORE_H
#define SDLIVE_ACCEPTOR_FDSTORE_H

#include <stdbool.h>

#include <sdlive.h>

#include "clients.h"

/*
 * The acceptor's client connections in the manager's FD store
 * (FileDescriptorStoreMax= in its unit): each is stored under the name
 * "client-<slot>" and removed by that name once it closes, so after a crash,
 * a watchdog kill or `systemctl restart` the next process takes them back
 * (inherit.h) and no connected client notices more than a delay.
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

#endif
