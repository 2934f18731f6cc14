/* SPDX-License-Identifier: MIT */
/* The assignment token's size, the one definition of it.
 *
 * The frame part owns it because the token is a field of the wire format
 * (an ASSIGN carries it, its RESULT echoes it: docs/protocol.md). It has a
 * header of its own so that the store, which keeps each attempt's token,
 * takes the size without the codec's names. */
#ifndef SDLIVE_EXAMPLE_FRAME_TOKEN_H
#define SDLIVE_EXAMPLE_FRAME_TOKEN_H

/* Bytes of the assignment token an ASSIGN carries and its RESULT echoes:
 * unguessable, drawn by the coordinator for each attempt. */
#define FRAME_TOKEN_SIZE 16

#endif
