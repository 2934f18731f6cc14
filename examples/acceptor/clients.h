/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ACCEPTOR_CLIENTS_H
#define SDLIVE_ACCEPTOR_CLIENTS_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The connections of the acceptor and their line protocol: each request is
 * one line of at most CLIENT_LINE_MAX bytes; "ping" is answered "pong",
 * "ping TOKEN" (TOKEN: 1 to CLIENT_TOKEN_MAX of [A-Za-z0-9._-]) is answered
 * "pong TOKEN", anything else "error: unknown request". A line that is too
 * long, a client that does not read its answers, or one silent for
 * CLIENT_IDLE_USEC is disconnected. Nothing here blocks.
 *
 * Each connection also has a place in the manager's FD store (fdstore.h):
 * a slot whose connection closed stays taken until its store entry is
 * removed, so a slot number names at most one stored connection.
 */
#define CLIENTS_MAX 64  /* = FileDescriptorStoreMax= of the unit (units/sdlive-units.cmake) */
#define CLIENT_LINE_MAX 256
#define CLIENT_TOKEN_MAX 64
#define CLIENT_IDLE_USEC (30 * UINT64_C(1000000))

typedef enum client_store {
        CLIENT_UNSTORED,        /* not in the FD store, nothing to do */
        CLIENT_TO_STORE,        /* open, to be put in the store */
        CLIENT_STORED,          /* in the store; with fd -1: to be removed */
} client_store;

typedef struct client {
        int fd;                         /* -1: closed */
        client_store store;
        uint64_t deadline_usec;         /* CLOCK_MONOTONIC */
        size_t used;
        char line[CLIENT_LINE_MAX];
} client;

typedef struct clients {
        client slots[CLIENTS_MAX];
        unsigned connected;
        uint64_t requests;              /* answered since start */
        const char *crash_file;         /* fault injection, NULL: off */
} clients;

/* crash_file: once that file exists, the next request read while every
 * connection is in the FD store crashes the process (SIGSEGV) before it is
 * answered; NULL or "" is off. */
void clients_init(clients *c, const char *crash_file);

/* Takes a new connection (non-blocking fd), to be stored. -EMFILE when no
 * slot is free. */
int clients_add(clients *c, int fd, uint64_t now_usec);

/* Takes a connection back from the FD store into slot, which must be free
 * (-EBUSY otherwise, -ERANGE when out of range); it is already stored. */
int clients_adopt(clients *c, unsigned slot, int fd, uint64_t now_usec);

/* Fills one pollfd per connection, in slot order, into fds (room for
 * CLIENTS_MAX); returns how many. */
unsigned clients_pollfds(const clients *c, struct pollfd *fds);

/* Handles the events of the pollfds filled by clients_pollfds(). */
void clients_dispatch(clients *c, const struct pollfd *fds, unsigned n, uint64_t now_usec);

/* Disconnects idle clients; returns the earliest remaining deadline
 * (UINT64_MAX when none). */
uint64_t clients_expire(clients *c, uint64_t now_usec);

/* Disconnects every client: each peer sees the end of its connection even
 * while the manager still holds a copy in the store. */
void clients_close_all(clients *c);

/* Closes this process's descriptors and leaves the connections open, for
 * the FD store to hand them to the next process. */
void clients_release_all(clients *c);

#endif
