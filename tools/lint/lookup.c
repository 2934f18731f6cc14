/* SPDX-License-Identifier: MIT */
/* Finding a unit, its names and its drop-in directories as systemd 252 does. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "lookup.h"

/* The system manager's search path, highest priority first
 * (systemd-analyze unit-paths on Debian 12). */
const char *const lookup_search_path[] = {
        "/etc/systemd/system.control", "/run/systemd/system.control", "/run/systemd/transient",
        "/run/systemd/generator.early", "/etc/systemd/system",        "/etc/systemd/system.attached",
        "/run/systemd/system",          "/run/systemd/system.attached", "/run/systemd/generator",
        "/usr/local/lib/systemd/system", "/lib/systemd/system",         "/usr/lib/systemd/system",
        "/run/systemd/generator.late",
};
const size_t lookup_search_path_n = sizeof(lookup_search_path) / sizeof(lookup_search_path[0]);

#define NAME_MAX_LEN 256

/* "foo@bar.service" -> "foo@.service"; false if name is no instance. */
static bool template_of(const char *name, char *out, size_t size) {
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.');

        if (!at || !dot || dot <= at + 1)
                return false;
        return snprintf(out, size, "%.*s@%s", (int) (at - name), name, dot) < (int) size;
}

int lookup_fragment(const char *root, const char *name, char *path, size_t size) {
        char template[NAME_MAX_LEN];
        const char *candidates[2] = { name, template_of(name, template, sizeof(template)) ? template : NULL };

        for (size_t c = 0; c < 2 && candidates[c]; c++)
                for (size_t i = 0; i < lookup_search_path_n; i++) {
                        char target[16];
                        struct stat st;

                        if (snprintf(path, size, "%s/%s", lookup_search_path[i], candidates[c]) >= (int) size)
                                return -1;
                        if (files_stat(root, path, &st) == 0 || files_readlink(root, path, target, sizeof(target)) == 0)
                                return 0;
                }
        return -1;
}

static bool listed(const struct unit_list *l, const char *item) {
        for (size_t i = 0; i < l->n; i++)
                if (!strcmp(l->items[i], item))
                        return true;
        return false;
}

static const char *suffix_of(const char *name) {
        const char *dot = strrchr(name, '.');

        return dot ? dot : "";
}

int lookup_aliases(const char *root, const char *fragment_base, const char *instance, struct unit_list *names) {
        const char *target = fragment_base;
        /* An instance of a template: the template's aliases, with the instance. */
        bool template = instance && strstr(fragment_base, "@.");

        for (size_t i = 0; i < lookup_search_path_n; i++) {
                struct dirent *e;
                DIR *d;
                int fd = files_open_dir(root, lookup_search_path[i]);

                if (fd < 0 || !(d = fdopendir(fd))) {
                        if (fd >= 0)
                                close(fd);
                        continue;
                }
                while ((e = readdir(d))) {
                        char path[4096], final[4096], name[NAME_MAX_LEN];
                        const char *base, *at;

                        if (e->d_type != DT_LNK || strcmp(suffix_of(e->d_name), suffix_of(target)) != 0 ||
                            !strcmp(e->d_name, target) ||
                            snprintf(path, sizeof(path), "%s/%s", lookup_search_path[i], e->d_name) >= (int) sizeof(path) ||
                            files_resolve(root, path, final, sizeof(final)) < 0)
                                continue;
                        base = strrchr(final, '/') + 1;
                        if (strcmp(base, target) != 0)
                                continue;
                        at = strchr(e->d_name, '@');
                        if (template && at && at[1] == '.')
                                snprintf(name, sizeof(name), "%.*s@%s%s", (int) (at - e->d_name), e->d_name, instance,
                                         at + 1);
                        else
                                snprintf(name, sizeof(name), "%s", e->d_name);
                        if (!listed(names, name) && unit_list_add(names, name) < 0) {
                                closedir(d);
                                return -1;
                        }
                }
                closedir(d);
        }
        return 0;
}

/* Adds dir to dirs if it is a directory under root not listed yet. */
static int add_dir(const char *root, const char *dir, struct unit_list *dirs) {
        int fd;

        if (listed(dirs, dir))
                return 0;
        fd = files_open_dir(root, dir);
        if (fd < 0)
                return 0;
        close(fd);
        return unit_list_add(dirs, dir);
}

/* unit_file_find_dirs(): "<name>.d" in one directory of the search path,
 * then its template's, then its dash prefix's, recursively as systemd does;
 * each call is on a shorter name, and depth bounds it besides. */
static int find_dirs(const char *root, const char *unit_path, const char *name, struct unit_list *dirs, // NOLINT(misc-no-recursion)
                     int depth) {
        char path[4096], template[NAME_MAX_LEN], prefix[NAME_MAX_LEN], built[NAME_MAX_LEN];
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.'), *dash;
        bool instance = at && dot && dot > at + 1, chopped = false;
        size_t n;

        if (depth > 64 || snprintf(path, sizeof(path), "%s/%s.d", unit_path, name) >= (int) sizeof(path))
                return 0;
        if (add_dir(root, path, dirs) < 0)
                return -1;
        if (instance && template_of(name, template, sizeof(template)) &&
            find_dirs(root, unit_path, template, dirs, depth + 1) < 0)
                return -1;
        if (!dot) /* "service": the top-level drop-in, no prefix */
                return 0;
        n = at ? (size_t) (at - name) : (size_t) (dot - name);
        if (n >= sizeof(prefix))
                return 0;
        memcpy(prefix, name, n);
        prefix[n] = '\0';
        for (;;) {
                if (!(dash = strrchr(prefix, '-')) || dash == prefix)
                        return 0;
                n = (size_t) (dash - prefix);
                if (prefix[n + 1] != '\0' || chopped) {
                        prefix[n + 1] = '\0';
                        break;
                }
                prefix[n] = '\0'; /* a trailing dash: chop it once */
                chopped = true;
        }
        if (snprintf(built, sizeof(built), "%s%s%.*s%s", prefix, instance ? "@" : "",
                     instance ? (int) (dot - at - 1) : 0, instance ? at + 1 : "", dot) >= (int) sizeof(built))
                return 0;
        return find_dirs(root, unit_path, built, dirs, depth + 1);
}

int lookup_dropin_dirs(const char *root, const char *id, const struct unit_list *aliases, struct unit_list *dirs) {
        const char *dot = strrchr(id, '.');

        for (size_t i = 0; i < lookup_search_path_n; i++)
                if (find_dirs(root, lookup_search_path[i], id, dirs, 0) < 0)
                        return -1;
        for (size_t a = 0; a < aliases->n; a++)
                for (size_t i = 0; i < lookup_search_path_n; i++)
                        if (find_dirs(root, lookup_search_path[i], aliases->items[a], dirs, 0) < 0)
                                return -1;
        if (!dot)
                return 0;
        for (size_t i = 0; i < lookup_search_path_n; i++)
                if (find_dirs(root, lookup_search_path[i], dot + 1, dirs, 0) < 0)
                        return -1;
        return 0;
}
