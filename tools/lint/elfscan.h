/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LINT_ELFSCAN_H
#define SDLIVE_LINT_ELFSCAN_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * What one ELF object (an executable or a library) shows, read with libelf:
 * the notify and watchdog functions it imports or defines, the protocol's
 * strings in its read-only data, and the dynamic entries the loader reads
 * to find its libraries.
 */
#define ELFSCAN_NEEDED_MAX 64

struct elf_evidence {
        bool sd_notify;            /* imports sd_notify* or sd_pid_notify* */
        bool sd_event_watchdog;    /* imports sd_event_set_watchdog */
        bool sd_watchdog_enabled;  /* imports sd_watchdog_enabled */
        bool sdlive_pet;           /* imports sdlive_pet_watchdog, sdlive_idle or sdlive_wait_fd */
        bool sdlive_raw;           /* imports sdlive_notify_raw (may send anything) */
        bool defines_notify;       /* defines sd_notify*: an implementation of the protocol */
        bool string_watchdog;      /* "WATCHDOG=1" in its read-only data */
        bool string_notify_socket; /* "NOTIFY_SOCKET" in its read-only data */
        bool go;                   /* a Go program's sections */
        bool dynamic;              /* has a PT_DYNAMIC segment */
        char imports[1024];        /* the notify and watchdog functions it imports */
};

struct elf_links {
        char needed[ELFSCAN_NEEDED_MAX][256]; /* DT_NEEDED, the first ELFSCAN_NEEDED_MAX */
        size_t n_needed;
        char runpath[1024];        /* DT_RUNPATH, "" when none */
        char rpath[1024];          /* DT_RPATH, "" when none */
        int elf_class;             /* ELFCLASS32 or ELFCLASS64 */
        unsigned machine;          /* e_machine */
};

/* Reads e into ev and links (both written whole). strings: also scan the
 * read-only data for the protocol's strings. */
void elfscan_read(Elf *e, bool strings, struct elf_evidence *ev, struct elf_links *links);

#endif
