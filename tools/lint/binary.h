/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_BINARY_H
#define SDLIVE_LINT_BINARY_H

#include <stdbool.h>
#include <stddef.h>

#include "elfscan.h"
#include "libraries.h"

/*
 * What the static check learns from an executable, read with libelf: the
 * kind of program, which notify and watchdog functions it imports, whether
 * its read-only data holds the protocol's strings, and the same of every
 * shared library it loads (libraries.h), found as the loader finds them.
 */
enum binary_kind {
        BINARY_DYNAMIC,     /* a dynamically linked ELF executable: checked */
        BINARY_STATIC,      /* no dynamic symbols to read: inconclusive */
        BINARY_GO,          /* Go speaks the protocol itself: inconclusive */
        BINARY_SCRIPT,      /* "#!" script: inconclusive */
        BINARY_INTERPRETER, /* python3, perl, sh ... running a script: inconclusive */
        BINARY_MISSING,     /* cannot be found */
        BINARY_UNRUNNABLE,  /* found, but execve(2) would fail: not a regular executable file,
                               empty, neither ELF nor a script, a truncated or damaged ELF */
};

enum binary_pets { PETS_NO, PETS_YES, PETS_UNKNOWN };

struct binary {
        enum binary_kind kind;
        char path[4096];           /* as shown: root, then inside */
        char inside[4096];         /* the path inside root */
        char detail[4608];         /* the interpreter, or why it is missing or cannot run */
        struct elf_evidence own;   /* the executable's own imports and strings */
        struct library_evidence libs; /* its libraries', found as the loader finds them */
};

/*
 * Resolves argv0 (an absolute path, else searched in the manager's PATH)
 * under root and reads it. Never fails: the kind says what was found.
 */
void binary_inspect(const char *argv0, const char *root, struct binary *b);

/* Does it pet? Evidence for the answer (or why unknown) goes to why. */
enum binary_pets binary_pets(const struct binary *b, char *why, size_t size);

/* Could it send READY=1 at all (any notify path)? */
bool binary_can_notify(const struct binary *b);

const char *binary_kind_name(enum binary_kind kind);

#endif
