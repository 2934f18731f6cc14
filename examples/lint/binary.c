/* SPDX-License-Identifier: MIT */
/* The static check: an executable's imports, libraries and strings, via libelf. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary.h"
#include "files.h"

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

static bool has_prefix(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static void note_import(struct binary *b, const char *name) {
        size_t len = strlen(b->imports);

        if (strstr(b->imports, name) || len + strlen(name) + 2 >= sizeof(b->imports))
                return;
        snprintf(b->imports + len, sizeof(b->imports) - len, "%s%s", len ? " " : "", name);
}

/* One undefined dynamic symbol of the executable. */
static void classify_import(struct binary *b, const char *name) {
        if (has_prefix(name, "sd_notify") || has_prefix(name, "sd_pid_notify")) {
                b->sd_notify = true;
                note_import(b, name);
        } else if (!strcmp(name, "sd_event_set_watchdog")) {
                b->sd_event_watchdog = true;
                note_import(b, name);
        } else if (!strcmp(name, "sd_watchdog_enabled")) {
                b->sd_watchdog_enabled = true;
                note_import(b, name);
        } else if (!strcmp(name, "sdlive_pet_watchdog") || !strcmp(name, "sdlive_idle") ||
                   !strcmp(name, "sdlive_wait_fd")) {
                b->sdlive_pet = true;
                note_import(b, name);
        } else if (!strcmp(name, "sdlive_notify_raw")) {
                b->sdlive_raw = true;
                note_import(b, name);
        }
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

/* A regular file under root, opened without blocking, as an ELF. */
static Elf *open_elf(const char *root, const char *path, int *fd) {
        char err[256];
        struct stat st;

        *fd = files_open_regular(root, path, &st, err, sizeof(err));
        if (*fd < 0)
                return NULL;
        return elf_begin(*fd, ELF_C_READ, NULL);
}

static void close_elf(Elf *e, int fd) {
        if (e)
                elf_end(e);
        if (fd >= 0)
                close(fd);
}

/* Does the library at path define (export) sd_notify* ? */
static bool library_defines_notify(const char *root, const char *path) {
        Elf_Scn *scn = NULL;
        bool found = false;
        int fd;
        Elf *e = open_elf(root, path, &fd);

        while (e && !found && (scn = elf_nextscn(e, scn))) {
                GElf_Shdr sh;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0 ||
                    !(data = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
                        GElf_Sym sym;
                        const char *name;

                        if (!gelf_getsym(data, (int) i, &sym) || sym.st_shndx == SHN_UNDEF)
                                continue;
                        name = elf_strptr(e, sh.sh_link, sym.st_name);
                        found = name && (has_prefix(name, "sd_notify") || has_prefix(name, "sd_pid_notify"));
                }
        }
        close_elf(e, fd);
        return found;
}

/* A DT_NEEDED found through one of the RUNPATH directories ($ORIGIN: the
 * executable's directory) is private to the package: follow it. */
static void follow_private(struct binary *b, const char *root, const char *needed, const char *runpath) {
        char dirs[1024], origin[4096], *save = NULL;

        if (b->private_notify || !runpath || strlen(runpath) >= sizeof(dirs))
                return;
        snprintf(origin, sizeof(origin), "%s", b->inside);
        if (strrchr(origin, '/'))
                *strrchr(origin, '/') = '\0';
        strcpy(dirs, runpath);
        for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                char path[4096];

                int n = has_prefix(dir, "$ORIGIN") ? snprintf(path, sizeof(path), "%s%s/%s", origin, dir + 7, needed)
                                                   : snprintf(path, sizeof(path), "%s/%s", dir, needed);

                if (n > 0 && n < (int) sizeof(path) && library_defines_notify(root, path)) {
                        b->private_notify = true;
                        snprintf(b->private_lib, sizeof(b->private_lib), "%s", needed);
                        return;
                }
        }
}

/* Scans a section's bytes for the protocol's strings. */
static void scan_strings(struct binary *b, Elf_Scn *scn) {
        Elf_Data *data = NULL;

        while ((data = elf_getdata(scn, data))) {
                if (!data->d_buf)
                        continue;
                b->string_watchdog |= memmem(data->d_buf, data->d_size, "WATCHDOG=1", 10) != NULL;
                b->string_notify_socket |= memmem(data->d_buf, data->d_size, "NOTIFY_SOCKET", 13) != NULL;
        }
}

static void read_elf(struct binary *b, const char *root, Elf *e) {
        char needed[32][256], runpath[1024] = "";
        size_t n_needed = 0, shstrndx, phnum;
        bool dynamic = false;
        Elf_Scn *scn = NULL;

        if (elf_getshdrstrndx(e, &shstrndx) < 0)
                shstrndx = 0;
        if (elf_getphdrnum(e, &phnum) == 0)
                for (size_t i = 0; i < phnum; i++) {
                        GElf_Phdr ph;

                        if (gelf_getphdr(e, (int) i, &ph) && ph.p_type == PT_DYNAMIC)
                                dynamic = true;
                }
        while ((scn = elf_nextscn(e, scn))) {
                GElf_Shdr sh;
                Elf_Data *data;
                const char *section = NULL;

                if (!gelf_getshdr(scn, &sh))
                        continue;
                if (shstrndx)
                        section = elf_strptr(e, shstrndx, sh.sh_name);
                if (section && (!strcmp(section, ".go.buildinfo") || !strcmp(section, ".note.go.buildid")))
                        b->kind = BINARY_GO;
                if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) && !(sh.sh_flags & SHF_EXECINSTR))
                        scan_strings(b, scn);
                if ((sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_DYNAMIC) || sh.sh_entsize == 0 ||
                    !(data = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
                        const char *name = NULL;

                        if (sh.sh_type == SHT_DYNSYM) {
                                GElf_Sym sym;

                                if (gelf_getsym(data, (int) i, &sym) && sym.st_shndx == SHN_UNDEF &&
                                    (name = elf_strptr(e, sh.sh_link, sym.st_name)))
                                        classify_import(b, name);
                                continue;
                        }
                        GElf_Dyn dyn;

                        if (!gelf_getdyn(data, (int) i, &dyn))
                                continue;
                        if (dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH)
                                name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
                        if (!name)
                                continue;
                        if (dyn.d_tag == DT_NEEDED && n_needed < 32)
                                snprintf(needed[n_needed++], sizeof(needed[0]), "%s", name);
                        else if (dyn.d_tag != DT_NEEDED && !*runpath)
                                snprintf(runpath, sizeof(runpath), "%s", name);
                }
        }
        for (size_t i = 0; i < n_needed; i++) {
                if (has_prefix(needed[i], "libsystemd.so"))
                        b->links_libsystemd = true;
                else if (has_prefix(needed[i], "libsdlive.so"))
                        b->links_libsdlive = true;
                else
                        follow_private(b, root, needed[i], *runpath ? runpath : NULL);
        }
        if (b->kind == BINARY_GO)
                snprintf(b->detail, sizeof(b->detail), "a Go program (it speaks the notify protocol without libsystemd)");
        else if (!dynamic || n_needed == 0) {
                b->kind = BINARY_STATIC;
                snprintf(b->detail, sizeof(b->detail), "statically linked: no dynamic symbols to read");
        }
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
        Elf *e;

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
                close(fd);
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
        return b->sd_notify || b->links_libsdlive || b->links_libsystemd || b->private_notify ||
               b->string_notify_socket;
}

enum binary_pets binary_pets(const struct binary *b, char *why, size_t size) {
        const char *notify = b->sd_notify ? "sd_notify"
                             : b->private_notify ? b->private_lib
                             : b->links_libsystemd ? "libsystemd"
                                                   : "its own NOTIFY_SOCKET code";

        if (b->kind != BINARY_DYNAMIC) {
                snprintf(why, size, "inconclusive: %s", b->detail);
                return PETS_UNKNOWN;
        }
        if (b->sdlive_pet) {
                snprintf(why, size, "imports %s", b->imports);
                return PETS_YES;
        }
        if (b->sd_event_watchdog) {
                snprintf(why, size, "imports sd_event_set_watchdog (sd-event pets at half of WATCHDOG_USEC)");
                return PETS_YES;
        }
        if ((b->sd_watchdog_enabled || b->string_watchdog) && binary_can_notify(b)) {
                snprintf(why, size, "%s and notifies through %s",
                         b->sd_watchdog_enabled ? "imports sd_watchdog_enabled" : "holds the string WATCHDOG=1",
                         notify);
                return PETS_YES;
        }
        if (b->sdlive_raw) {
                snprintf(why, size, "imports sdlive_notify_raw, which may send WATCHDOG=1: probe it");
                return PETS_UNKNOWN;
        }
        if (b->links_libsdlive) {
                snprintf(why, size, "links libsdlive but imports none of sdlive_pet_watchdog, sdlive_idle, sdlive_wait_fd");
                return PETS_NO;
        }
        if (b->sd_notify || b->private_notify || b->links_libsystemd) {
                snprintf(why, size, "notifies through %s but imports no watchdog function and holds no WATCHDOG=1",
                         notify);
                return PETS_NO;
        }
        if (b->string_notify_socket) {
                snprintf(why, size, "reads NOTIFY_SOCKET with code of its own: probe it");
                return PETS_UNKNOWN;
        }
        snprintf(why, size, "links neither libsystemd nor libsdlive and imports no sd_notify*: it cannot notify");
        return PETS_NO;
}
