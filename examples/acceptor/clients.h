/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ACCEPTOR_CLIENTS_H
#define SDLIVE_ACCEPTOR_CLIENTS_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The connections of the acceptor and their line protocol: each request is
 * one line of at most CLIENT_LINE_MAX bytes; "ping" is answered "pong",
 * anything else "error: unknown request". A line that is too long, a client
 * that does not read its answers, or one silent for CLIENT_IDLE_USEC is
 * disconnected. Nothing here blocks.
 */
#define CLIENTS_MAX 64
#define CLIENT_LINE_MAX 256
#define CLIENT_IDLE_USEC (30 * UINT64_C(1000000))

typedef struct client {
        int fd;                         /* -1: free slot */
        uint64_t deadline_usec;         /* CLOCK_MONOTONIC */
        size_t used;
        char line[CLIENT_LINE_MAX];
} client;

typedef struct clients {
        client slots[CLIENTS_MAX];
        unsigned connected;
        uint64_t requests;              /* answered since start */
} clients;

void clients_init(clients *c);

/* Takes a new connection (non-blocking fd). -EMFILE when all slots are used. */
int clients_add(clients *c, int fd, uint64_t now_usec);

/* Fills one pollfd per connection, in slot order, into fds (room for
 * CLIENTS_MAX); returns how many. */
unsigned clients_pollfds(const clients *c, struct pollfd *fds);

/* Handles the events of the pollfds filled by clients_pollfds(). */
void clients_dispatch(clients *c, const struct pollfd *fds, unsigned n, uint64_t now_usec);

/* Disconnects idle clients; returns the earliest remaining deadline
 * (UINT64_MAX when none). */
uint64_t clients_expire(clients *c, uint64_t now_usec);

void clients_close_all(clients *c);

#endif
