/* SPDX-License-Identifier: MIT */
/* Shared by the frame codec test groups (one program, test-frame). */
#ifndef SDLIVE_FRAME_TEST_H
#define SDLIVE_FRAME_TEST_H

#include "frame.h"

/* A fresh decoder; fails the running test if it cannot be made. */
frame_decoder *new_decoder(void);

/* Runs the socket helpers group; returns the number of failed tests. */
int frame_socket_tests(void);

#endif
