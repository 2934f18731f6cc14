/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_BINARY_H
#define SDLIVE_LINT_BINARY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * What the static check learns from an executable, read with libelf: the
 * kind of program, which notify and watchdog functions it imports, which
 * libraries it links, and whether its read-only data holds the protocol's
 * strings. A private library of the same package (a DT_NEEDED found only
 * through the executable's RUNPATH, like systemd's libsystemd-shared-*.so)
 * is followed one level: the functions it defines count as available.
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
        char detail[4608];         /* the interpreter, or why it is missing */
        bool sd_notify;           /* imports sd_notify* or sd_pid_notify* */
        bool sd_event_watchdog;   /* imports sd_event_set_watchdog */
        bool sd_watchdog_enabled; /* imports sd_watchdog_enabled */
        bool sdlive_pet;          /* imports sdlive_pet_watchdog, sdlive_idle or sdlive_wait_fd */
        bool sdlive_raw;          /* imports sdlive_notify_raw (may send anything) */
        bool links_libsystemd;
        bool links_libsdlive;
        bool private_notify;      /* a private library defines sd_notify* */
        char private_lib[256];
        bool string_watchdog;     /* "WATCHDOG=1" in its read-only data */
        bool string_notify_socket; /* "NOTIFY_SOCKET" in its read-only data */
        char imports[1024];       /* the notify and watchdog functions it imports */
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
