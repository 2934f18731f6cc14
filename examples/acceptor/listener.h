/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ACCEPTOR_LISTENER_H
#define SDLIVE_ACCEPTOR_LISTENER_H

/*
 * Binds a listening, non-blocking AF_UNIX stream socket at path. A stale
 * socket file left by a dead process is replaced; a socket someone still
 * listens on, or a path that is not a socket, is an error.
 * Returns the descriptor or -errno (logged): -EADDRINUSE when another
 * process listens there, -EEXIST when path is not a socket.
 */
int listener_open(const char *path);

#endif
