/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_LIBRARIES_H
#define SDLIVE_LINT_LIBRARIES_H

#include <stdbool.h>
#include <stddef.h>

#include "elfscan.h"

/*
 * The shared libraries an executable loads, found under root as the loader
 * finds them (ld.so(8)): for each DT_NEEDED, the needing object's DT_RPATH
 * (when it has no DT_RUNPATH) and the executable's, its DT_RUNPATH ($ORIGIN
 * expanded), the directories of /etc/ld.so.conf (and what it includes), then
 * the default directories; a candidate of another ELF class or machine is
 * passed over, as the loader passes it over. Each library found is read
 * (elfscan.h) and its own libraries followed, breadth first, at most
 * LIBRARIES_MAX in all. libsystemd and libsdlive are noted, not read; a
 * library that defines sd_notify (libsystemd-shared-*.so) is an
 * implementation of the protocol: noted, its own evidence and libraries not
 * taken as the daemon's.
 */
#define LIBRARIES_MAX 64

struct library_evidence {
        size_t n_read;              /* libraries found and read */
        bool links_libsystemd;      /* the executable needs libsystemd.so */
        bool links_libsdlive;       /* the executable needs libsdlive.so */
        bool provider;              /* a library defines sd_notify* */
        char provider_name[256];
        bool notify;                /* a library imports sd_notify* or sd_pid_notify* */
        char notify_name[256];
        bool pets;                  /* a library pets, or holds the evidence and something can notify */
        char pets_evidence[640];    /* "libpets.so.1 (/usr/lib/pets/libpets.so.1) imports sd_watchdog_enabled" */
        bool watch_only;            /* a library reads the watchdog (sd_watchdog_enabled, WATCHDOG=1) ... */
        char watch_evidence[640];   /* ... and why, for pets once something is known to notify */
};

/*
 * Follows the libraries of the executable at exe_inside (a path inside
 * root) whose dynamic entries are exe. Fills out whole; never fails (a
 * library not found or unreadable is passed over).
 */
void libraries_follow(const char *root, const char *exe_inside, const struct elf_links *exe,
                      struct library_evidence *out);

#endif
