/* SPDX-License-Identifier: MIT */
/* An executable's shared libraries, found as the loader finds them. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "libraries.h"

#define DIRS_MAX 64
#define LDCONF_SIZE_MAX 65536
#define LDCONF_DEPTH_MAX 3

struct search {
        const char *root;
        char dirs[DIRS_MAX][512]; /* ld.so.conf's, then the defaults */
        size_t n_dirs;
};

/* One object read: where it is and what it needs. */
struct object {
        char origin[4096]; /* $ORIGIN: the directory it was found in */
        struct elf_links links;
};

static bool has_prefix(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static void add_dir(struct search *s, const char *dir, size_t len) {
        if (s->n_dirs < DIRS_MAX && len > 0 && len < sizeof(s->dirs[0]) && dir[0] == '/')
                snprintf(s->dirs[s->n_dirs++], sizeof(s->dirs[0]), "%.*s", (int) len, dir);
}

static void read_ldconf(struct search *s, const char *path, int depth);

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

/* "include PATTERN": every file of the pattern's directory its last
 * component matches, in name order, as glob(3) gives them. */
/* Recursive with read_ldconf, bounded by LDCONF_DEPTH_MAX. */
static void include_ldconf(struct search *s, const char *pattern, const char *conf_dir, int depth) { // NOLINT(misc-no-recursion)
        static char names[LDCONF_DEPTH_MAX + 1][DIRS_MAX][256];
        char full[1024], dir[1024];
        const char *base;
        size_t n = 0;
        struct dirent *e;
        int fd;
        DIR *d;

        if (snprintf(full, sizeof(full), "%s%s%s", pattern[0] == '/' ? "" : conf_dir, pattern[0] == '/' ? "" : "/",
                     pattern) >= (int) sizeof(full))
                return;
        base = strrchr(full, '/') + 1;
        snprintf(dir, sizeof(dir), "%.*s", (int) (base - full), full);
        if ((fd = files_open_dir(s->root, dir)) < 0)
                return;
        if (!(d = fdopendir(fd))) {
                close(fd);
                return;
        }
        while ((e = readdir(d)) && n < DIRS_MAX)
                if (e->d_name[0] != '.' && fnmatch(base, e->d_name, FNM_PERIOD) == 0)
                        snprintf(names[depth][n++], sizeof(names[0][0]), "%s", e->d_name);
        closedir(d);
        qsort(names[depth], n, sizeof(names[0][0]), by_name);
        for (size_t i = 0; i < n; i++) {
                char path[2048];

                snprintf(path, sizeof(path), "%s%s", dir, names[depth][i]);
                read_ldconf(s, path, depth + 1);
        }
}

/* ld.so.conf: a directory per line, "include PATTERN", comments after '#'. */
static void read_ldconf(struct search *s, const char *path, int depth) { // NOLINT(misc-no-recursion): bounded depth
        char err[256], conf_dir[1024], *text = NULL, *save = NULL;
        struct stat st;
        int fd;

        if (depth > LDCONF_DEPTH_MAX || (fd = files_open_regular(s->root, path, &st, err, sizeof(err))) < 0)
                return;
        if (files_read_bounded(fd, LDCONF_SIZE_MAX, &text) < 0) {
                close(fd);
                return;
        }
        close(fd);
        snprintf(conf_dir, sizeof(conf_dir), "%.*s", (int) (strrchr(path, '/') - path), path);
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                size_t len;

                line[strcspn(line, "#")] = '\0';
                line += strspn(line, " \t");
                len = strcspn(line, " \t=:,");
                if (!strncmp(line, "include", 7) && (line[7] == ' ' || line[7] == '\t')) {
                        char *pattern = line + 8 + strspn(line + 8, " \t");

                        pattern[strcspn(pattern, " \t")] = '\0';
                        include_ldconf(s, pattern, conf_dir, depth);
                } else if (strncmp(line, "hwcap", 5) != 0)
                        add_dir(s, line, len);
        }
        free(text);
}

static void default_dirs(struct search *s, unsigned machine) {
        static const struct {
                unsigned machine;
                const char *triplet;
        } multiarch[] = { { EM_X86_64, "x86_64-linux-gnu" }, { EM_AARCH64, "aarch64-linux-gnu" },
                          { EM_386, "i386-linux-gnu" },     { EM_ARM, "arm-linux-gnueabihf" },
                          { EM_RISCV, "riscv64-linux-gnu" }, { EM_PPC64, "powerpc64le-linux-gnu" },
                          { EM_S390, "s390x-linux-gnu" } };
        char dir[512];

        for (size_t i = 0; i < sizeof(multiarch) / sizeof(multiarch[0]); i++)
                if (multiarch[i].machine == machine) {
                        add_dir(s, dir, (size_t) snprintf(dir, sizeof(dir), "/lib/%s", multiarch[i].triplet));
                        add_dir(s, dir, (size_t) snprintf(dir, sizeof(dir), "/usr/lib/%s", multiarch[i].triplet));
                }
        add_dir(s, "/lib64", 6);
        add_dir(s, "/usr/lib64", 10);
        add_dir(s, "/lib", 4);
        add_dir(s, "/usr/lib", 8);
}

/* Opens dir/name under root if it is an ELF object the executable can load. */
static Elf *try_candidate(const struct search *s, const char *dir, const char *origin, const char *name,
                          const struct elf_links *exe, char *path, size_t size, int *fd) {
        char err[256];
        struct stat st;
        int n;
        Elf *e;

        if (has_prefix(dir, "$ORIGIN") || has_prefix(dir, "${ORIGIN}"))
                n = snprintf(path, size, "%s%s/%s", origin, dir + (dir[1] == '{' ? 9 : 7), name);
        else
                n = snprintf(path, size, "%s/%s", dir, name);
        if (n <= 0 || n >= (int) size || (*fd = files_open_regular(s->root, path, &st, err, sizeof(err))) < 0)
                return NULL;
        e = elf_begin(*fd, ELF_C_READ, NULL);
        if (e && elf_kind(e) == ELF_K_ELF && gelf_getclass(e) == exe->elf_class) {
                GElf_Ehdr eh;

                if (gelf_getehdr(e, &eh) && eh.e_machine == exe->machine)
                        return e;
        }
        if (e)
                elf_end(e);
        close(*fd);
        *fd = -1;
        return NULL;
}

/* Tries each ':'-separated directory of list. */
static Elf *try_list(const struct search *s, const char *list, const char *origin, const char *name,
                     const struct elf_links *exe, char *path, size_t size, int *fd) {
        char dirs[1024], *save = NULL;
        Elf *e;

        snprintf(dirs, sizeof(dirs), "%s", list);
        for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
                if ((e = try_candidate(s, dir, origin, name, exe, path, size, fd)))
                        return e;
        return NULL;
}

/* The loader's order for a DT_NEEDED of objects[k]. */
static Elf *find_library(const struct search *s, const struct object *objects, size_t k, const char *name,
                         char *path, size_t size, int *fd) {
        const struct object *o = &objects[k], *exe = &objects[0];
        Elf *e = NULL;

        if (strchr(name, '/'))
                return NULL;
        if (!*o->links.runpath) {
                e = try_list(s, o->links.rpath, o->origin, name, &exe->links, path, size, fd);
                if (!e && k > 0 && !*exe->links.runpath)
                        e = try_list(s, exe->links.rpath, exe->origin, name, &exe->links, path, size, fd);
        }
        if (!e)
                e = try_list(s, o->links.runpath, o->origin, name, &exe->links, path, size, fd);
        for (size_t i = 0; !e && i < s->n_dirs; i++)
                e = try_candidate(s, s->dirs[i], o->origin, name, &exe->links, path, size, fd);
        return e;
}

static bool seen(char (*names)[256], size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (!strcmp(names[i], name))
                        return true;
        return false;
}

/* Takes one library's evidence. */
static void take(struct library_evidence *out, const char *name, const char *path, const struct elf_evidence *ev) {
        if (ev->sd_notify && !out->notify) {
                out->notify = true;
                snprintf(out->notify_name, sizeof(out->notify_name), "%s", name);
        }
        if (!out->pets && (ev->sdlive_pet || ev->sd_event_watchdog)) {
                out->pets = true;
                snprintf(out->pets_evidence, sizeof(out->pets_evidence), "its library %.120s (%.300s) imports %.150s", name, path,
                         ev->imports);
        } else if (!out->watch_only && (ev->sd_watchdog_enabled || ev->string_watchdog)) {
                out->watch_only = true;
                snprintf(out->watch_evidence, sizeof(out->watch_evidence), "its library %.120s (%.300s) %s%.150s%s", name, path,
                         *ev->imports ? "imports " : "", ev->imports,
                         ev->string_watchdog ? (*ev->imports ? " and holds WATCHDOG=1" : "holds WATCHDOG=1") : "");
        }
}

void libraries_follow(const char *root, const char *exe_inside, const struct elf_links *exe,
                      struct library_evidence *out) {
        struct search *s = calloc(1, sizeof(*s));
        struct object *objects = calloc(LIBRARIES_MAX + 1, sizeof(*objects));
        char (*names)[256] = calloc(LIBRARIES_MAX * 4, sizeof(*names)), real[4096];
        size_t n_objects = 1, n_names = 0;

        memset(out, 0, sizeof(*out));
        if (!s || !objects || !names)
                goto out;
        s->root = root;
        read_ldconf(s, "/etc/ld.so.conf", 0);
        default_dirs(s, exe->machine);
        objects[0].links = *exe;
        if (files_resolve(root, exe_inside, real, sizeof(real)) < 0)
                snprintf(real, sizeof(real), "%s", exe_inside);
        snprintf(objects[0].origin, sizeof(objects[0].origin), "%.*s", (int) (strrchr(real, '/') - real), real);
        for (size_t k = 0; k < n_objects; k++)
                for (size_t i = 0; i < objects[k].links.n_needed; i++) {
                        const char *name = objects[k].links.needed[i];
                        struct elf_evidence ev;
                        char path[4096];
                        int fd = -1;
                        Elf *e;

                        if (k == 0 && has_prefix(name, "libsystemd.so"))
                                out->links_libsystemd = true;
                        if (k == 0 && has_prefix(name, "libsdlive.so"))
                                out->links_libsdlive = true;
                        if (has_prefix(name, "libsystemd.so") || has_prefix(name, "libsdlive.so") ||
                            seen(names, n_names, name) || n_names >= LIBRARIES_MAX * 4 || n_objects > LIBRARIES_MAX)
                                continue;
                        snprintf(names[n_names++], sizeof(names[0]), "%s", name);
                        if (!(e = find_library(s, objects, k, name, path, sizeof(path), &fd)))
                                continue;
                        out->n_read++;
                        elfscan_read(e, true, &ev, &objects[n_objects].links);
                        elf_end(e);
                        close(fd);
                        if (ev.defines_notify) {
                                if (!out->provider) {
                                        out->provider = true;
                                        snprintf(out->provider_name, sizeof(out->provider_name), "%s", name);
                                }
                                continue;
                        }
                        take(out, name, path, &ev);
                        snprintf(objects[n_objects].origin, sizeof(objects[n_objects].origin), "%.*s",
                                 (int) (strrchr(path, '/') - path), path);
                        n_objects++;
                }
out:
        free(s);
        free(objects);
        free(names);
}
