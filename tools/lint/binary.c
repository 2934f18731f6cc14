/* SPDX-License-Identifier: MIT */
/* The static check: an executable's imports, libraries and strings, via libelf. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary.h"
#include "elfscan.h"
#include "files.h"
#include "libraries.h"

/* The manager's PATH for a command that is not an absolute path. */
static const char *const exec_path[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                         "/usr/bin",        "/sbin",           "/bin" };

/* Programs that run a script: the binary says nothing about the script. */
static const char *const interpreters[] = { "python", "perl", "sh", "bash", "dash", "ruby",
                                            "node", "lua", "php", "tclsh", "java" };

const char *binary_kind_name(enum binary_kind kind) {
        switch (kind) {
        case BINARY_DYNAMIC: return "dynamic";
        case BINARY_STATIC: return "static";
        case BINARY_GO: return "go";
        case BINARY_SCRIPT: return "script";
        case BINARY_INTERPRETER: return "interpreter";
        case BINARY_MISSING: return "missing";
        case BINARY_UNRUNNABLE: return "unrunnable";
        }
        return "?";
}

static bool is_interpreter(const char *path) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

        for (size_t i = 0; i < sizeof(interpreters) / sizeof(interpreters[0]); i++) {
                size_t n = strlen(interpreters[i]);

                /* "python3", "python3.11", "perl5.36": the name, then a version */
                if (!strncmp(base, interpreters[i], n) && strspn(base + n, "0123456789.") == strlen(base + n))
                        return true;
        }
        return false;
}

static void close_elf(Elf *e, int fd) {
        if (e)
                elf_end(e);
        if (fd >= 0)
                close(fd);
}

static void read_elf(struct binary *b, const char *root, Elf *e) {
        struct elf_links *links = calloc(1, sizeof(*links));

        if (!links) {
                snprintf(b->detail, sizeof(b->detail), "out of memory");
                b->kind = BINARY_STATIC;
                return;
        }
        elfscan_read(e, true, &b->own, links);
        if (b->own.go)
                b->kind = BINARY_GO;
        if (b->kind == BINARY_GO)
                snprintf(b->detail, sizeof(b->detail), "a Go program (it speaks the notify protocol without libsystemd)");
        else if (!b->own.dynamic || links->n_needed == 0) {
                b->kind = BINARY_STATIC;
                snprintf(b->detail, sizeof(b->detail), "statically linked: no dynamic symbols to read");
        } else
                libraries_follow(root, b->inside, links, &b->libs);
        free(links);
}

/* Finds argv0 under root: b->path and b->inside, or BINARY_MISSING with the
 * reason. What is found need not be runnable: binary_inspect says. */
static bool resolve(struct binary *b, const char *argv0, const char *root) {
        struct stat st;

        if (argv0[0] == '/') {
                snprintf(b->inside, sizeof(b->inside), "%s", argv0);
                snprintf(b->path, sizeof(b->path), "%s%s", root, argv0);
                if (files_stat(root, argv0, &st) == 0)
                        return true;
                snprintf(b->detail, sizeof(b->detail), "%s: %s", b->path, strerror(errno));
                return false;
        }
        for (size_t i = 0; i < sizeof(exec_path) / sizeof(exec_path[0]); i++) {
                snprintf(b->inside, sizeof(b->inside), "%s/%s", exec_path[i], argv0);
                snprintf(b->path, sizeof(b->path), "%s%s", root, b->inside);
                if (files_stat(root, b->inside, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
                        return true;
        }
        snprintf(b->detail, sizeof(b->detail), "%s: not found in %s:...:/bin", argv0, exec_path[0]);
        return false;
}

static void unrunnable(struct binary *b, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void unrunnable(struct binary *b, const char *format, ...) {
        va_list ap;
        int n = snprintf(b->detail, sizeof(b->detail), "%s: ", b->path);

        b->kind = BINARY_UNRUNNABLE;
        va_start(ap, format);
        if (n > 0 && (size_t) n < sizeof(b->detail))
                vsnprintf(b->detail + n, sizeof(b->detail) - (size_t) n, format, ap);
        va_end(ap);
}

/*
 * Would execve(2) load it? The headers libelf reads must be whole and inside
 * the file: an ELF executable or shared object with program headers of its
 * class's size, each segment and the section table within the file's size,
 * something to load.
 */
static bool elf_runnable(struct binary *b, Elf *e, off_t size) {
        GElf_Ehdr eh;
        size_t phnum, shnum, phent;
        bool load = false;

        if (!gelf_getehdr(e, &eh)) {
                unrunnable(b, "a damaged ELF header (%s)", elf_errmsg(-1));
                return false;
        }
        if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
                unrunnable(b, "an ELF file that is not an executable (type %u)", (unsigned) eh.e_type);
                return false;
        }
        phent = gelf_getclass(e) == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
        if (elf_getphdrnum(e, &phnum) < 0 || phnum == 0 || eh.e_phentsize != phent || eh.e_phoff > (uint64_t) size ||
            phnum > ((uint64_t) size - eh.e_phoff) / phent) {
                unrunnable(b, "program headers missing or outside the file (%zu of %u bytes at %" PRIu64 ", file %lld bytes)",
                           elf_getphdrnum(e, &phnum) < 0 ? (size_t) 0 : phnum, (unsigned) eh.e_phentsize,
                           (uint64_t) eh.e_phoff, (long long) size);
                return false;
        }
        for (size_t i = 0; i < phnum; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(e, (int) i, &ph)) {
                        unrunnable(b, "program header %zu unreadable (%s)", i, elf_errmsg(-1));
                        return false;
                }
                if (ph.p_type == PT_LOAD && (ph.p_offset > (uint64_t) size || ph.p_filesz > (uint64_t) size - ph.p_offset)) {
                        unrunnable(b, "truncated: a segment ends at byte %" PRIu64 ", the file has %lld",
                                   (uint64_t) (ph.p_offset + ph.p_filesz), (long long) size);
                        return false;
                }
                load |= ph.p_type == PT_LOAD;
        }
        if (!load) {
                unrunnable(b, "no loadable segment");
                return false;
        }
        /* e_shnum 0 with sections: the count is in section 0 (libelf's). */
        if (elf_getshdrnum(e, &shnum) < 0 || (eh.e_shnum != 0 && shnum != eh.e_shnum) ||
            (shnum > 0 && (eh.e_shoff > (uint64_t) size || eh.e_shentsize == 0 ||
                           shnum > ((uint64_t) size - eh.e_shoff) / eh.e_shentsize))) {
                unrunnable(b, "truncated or damaged: its section table lies outside the file");
                return false;
        }
        return true;
}

void binary_inspect(const char *argv0, const char *root, struct binary *b) {
        char head[256] = "";
        struct stat st;
        ssize_t n;
        int fd = -1;
        Elf *e = NULL;

        memset(b, 0, sizeof(*b));
        b->kind = BINARY_MISSING;
        if (!root)
                root = "";
        if (!resolve(b, argv0, root))
                return;
        fd = files_open_regular(root, b->inside, &st, b->detail, sizeof(b->detail));
        if (fd < 0) {
                if (errno == EINVAL) /* there, but not a regular file */
                        unrunnable(b, "not a regular file but %s", files_type_name(st.st_mode));
                else
                        snprintf(b->detail, sizeof(b->detail), "%s: %s", b->path, strerror(errno));
                return;
        }
        if (!(st.st_mode & 0111)) {
                unrunnable(b, "not executable (mode %04o)", (unsigned) (st.st_mode & 07777));
                close(fd);
                return;
        }
        n = read(fd, head, sizeof(head) - 1);
        if (n <= 0) {
                unrunnable(b, "%s", n == 0 ? "an empty file" : strerror(errno));
                close(fd);
                return;
        }
        if (n >= 2 && head[0] == '#' && head[1] == '!') {
                head[n] = '\0';
                head[strcspn(head, "\n")] = '\0';
                b->kind = BINARY_SCRIPT;
                snprintf(b->detail, sizeof(b->detail), "a script run by %s", head + 2 + strspn(head + 2, " "));
                close(fd);
                return;
        }
        if (n < 4 || memcmp(head, ELFMAG, SELFMAG) != 0) {
                unrunnable(b, "neither an ELF file nor a #! script");
                close(fd);
                return;
        }
        if (lseek(fd, 0, SEEK_SET) < 0 || elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ, NULL)) ||
            elf_kind(e) != ELF_K_ELF) {
                unrunnable(b, "an ELF magic, then no ELF file libelf can read");
                close_elf(e, fd); /* elf_begin() may have succeeded */
                return;
        }
        if (!elf_runnable(b, e, st.st_size)) {
                close_elf(e, fd);
                return;
        }
        if (is_interpreter(b->path)) {
                b->kind = BINARY_INTERPRETER;
                snprintf(b->detail, sizeof(b->detail), "%s is an interpreter: what it runs cannot be read", b->path);
                close_elf(e, fd);
                return;
        }
        b->kind = BINARY_DYNAMIC;
        read_elf(b, root, e);
        close_elf(e, fd);
}
bool binary_can_notify(const struct binary *b) {
        return b->own.sd_notify || b->own.string_notify_socket || b->libs.links_libsdlive || b->libs.links_libsystemd ||
               b->libs.provider || b->libs.notify;
}

/* How it would notify, for the evidence. */
static const char *notify_path(const struct binary *b) {
        return b->own.sd_notify              ? "sd_notify"
               : b->libs.notify              ? b->libs.notify_name
               : b->libs.provider            ? b->libs.provider_name
               : b->libs.links_libsystemd    ? "libsystemd"
               : b->own.string_notify_socket ? "its own NOTIFY_SOCKET code"
                                             : "libsdlive";
}

enum binary_pets binary_pets(const struct binary *b, char *why, size_t size) {
        const struct elf_evidence *own = &b->own;
        /* Something calls sd_notify, or speaks the protocol itself. Linking
         * libsystemd alone (for sd_listen_fds ...) sends nothing; a libsdlive
         * user is judged by what it imports of libsdlive. */
        bool other_notify =
                own->sd_notify || b->libs.notify || (own->string_notify_socket && !b->libs.links_libsdlive);

        if (b->kind != BINARY_DYNAMIC) {
                snprintf(why, size, "inconclusive: %s", b->detail);
                return PETS_UNKNOWN;
        }
        if (own->sdlive_pet) {
                snprintf(why, size, "imports %s", own->imports);
                return PETS_YES;
        }
        if (own->sd_event_watchdog) {
                snprintf(why, size, "imports sd_event_set_watchdog (sd-event pets at half of WATCHDOG_USEC)");
                return PETS_YES;
        }
        if ((own->sd_watchdog_enabled || own->string_watchdog) && binary_can_notify(b)) {
                snprintf(why, size, "%s and notifies through %s",
                         own->sd_watchdog_enabled ? "imports sd_watchdog_enabled" : "holds the string WATCHDOG=1",
                         notify_path(b));
                return PETS_YES;
        }
        if (b->libs.pets || (b->libs.watch_only && binary_can_notify(b))) {
                snprintf(why, size, "%s%s%s", b->libs.pets ? b->libs.pets_evidence : b->libs.watch_evidence,
                         b->libs.pets ? "" : ", and it notifies through ", b->libs.pets ? "" : notify_path(b));
                return PETS_YES;
        }
        if (own->sdlive_raw) {
                snprintf(why, size, "imports sdlive_notify_raw, which may send WATCHDOG=1: inconclusive, probe it");
                return PETS_UNKNOWN;
        }
        if (other_notify) {
                snprintf(why, size,
                         "can notify (through %s), but no keepalive is seen in it or its %zu libraries: "
                         "inconclusive, probe it",
                         notify_path(b), b->libs.n_read);
                return PETS_UNKNOWN;
        }
        if (b->libs.links_libsdlive) {
                snprintf(why, size, "links libsdlive but imports none of sdlive_pet_watchdog, sdlive_idle, sdlive_wait_fd");
                return PETS_NO;
        }
        snprintf(why, size,
                 "neither it nor its %zu libraries import sd_notify* or hold NOTIFY_SOCKET, and it links no "
                 "libsdlive: it cannot notify",
                 b->libs.n_read);
        return PETS_NO;
}
