/* SPDX-License-Identifier: MIT */
/*
 * Reading a service unit and its drop-ins the way the manager merges them:
 * the unit file first, then every "*.conf" of the drop-in directories in
 * file-name order (a name in a directory of higher priority masks the same
 * name in a lower one); a later assignment overrides an earlier one, and an
 * empty assignment resets a list (ExecStart=, Environment=, ...).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "lookup.h"
#include "unit.h"
#include "words.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static void set_err(char *err, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t size, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        vsnprintf(err, size, format, ap);
        va_end(ap);
}

void unit_list_reset(struct unit_list *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
        free(l->items);
        l->items = NULL;
        l->n = 0;
}

/* The copy is not leaked: the list owns it (unit_list_reset frees it);
 * gcc's analyser loses it in the caller's list. */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
int unit_list_add(struct unit_list *l, const char *item) {
        char **items;

        if (l->n >= UNIT_LIST_MAX)
                return -1;
        items = realloc(l->items, (l->n + 1) * sizeof(*items));
        if (!items)
                return -1;
        l->items = items;
        if (!(l->items[l->n] = strdup(item)))
                return -1;
        l->n++;
        return 0;
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

static int set_text(char **field, const char *value) {
        free(*field);
        *field = NULL;
        if (!*value)
                return 0;
        return (*field = strdup(value)) ? 0 : -1;
}

/* Adds the words of value to l (an empty value resets l); prefix, if not
 * NULL, goes before each word ("state=" ...). */
static int list_add_words(const struct unit *u, struct unit_list *l, const char *value, const char *prefix,
                          enum words_specifiers mode) {
        char *words[UNIT_LIST_MAX];
        int n, r = 0;

        if (!*value) {
                unit_list_reset(l);
                return 0;
        }
        n = words_split(u, value, words, UNIT_LIST_MAX, mode);
        if (n < 0)
                return -1;
        for (int i = 0; i < n; i++) {
                char item[4096];

                if (r == 0 && snprintf(item, sizeof(item), "%s%s", prefix ? prefix : "", words[i]) >= (int) sizeof(item))
                        r = -1;
                if (r == 0)
                        r = unit_list_add(l, item);
                free(words[i]);
        }
        return r;
}

static int assign(struct unit *u, const char *key, const char *value, char *err, size_t err_size) {
        static const char *const dir_keys[] = { "StateDirectory", "RuntimeDirectory", "CacheDirectory",
                                                "LogsDirectory", "ConfigurationDirectory" };
        int r = 0;

        if (!strcmp(key, "Type"))
                r = set_text(&u->type, value);
        else if (!strcmp(key, "BusName"))
                u->has_bus_name = *value != '\0';
        else if (!strcmp(key, "Sockets"))
                u->has_sockets = *value != '\0';
        else if (!strcmp(key, "NotifyAccess"))
                r = set_text(&u->notify_access, value);
        else if (!strcmp(key, "Restart"))
                r = set_text(&u->restart, value);
        else if (!strcmp(key, "WatchdogSignal"))
                r = set_text(&u->watchdog_signal, value);
        else if (!strcmp(key, "WatchdogSec")) {
                uint64_t usec = 0;

                if (*value && unit_parse_timespan(value, &usec) < 0) {
                        set_err(err, err_size, "WatchdogSec=%s is not a time span", value);
                        return -1;
                }
                u->watchdog_set = usec != 0 && usec != UNIT_INFINITY;
                u->watchdog_usec = u->watchdog_set ? usec : 0;
        } else if (!strcmp(key, "TimeoutStartSec") || !strcmp(key, "TimeoutSec")) {
                uint64_t usec = 0;

                if (!*value) {
                        u->timeout_start_set = false;
                        return 0;
                }
                if (unit_parse_timespan(value, &usec) < 0) {
                        set_err(err, err_size, "%s=%s is not a time span", key, value);
                        return -1;
                }
                u->timeout_start_set = true;
                u->timeout_start_usec = usec == 0 ? UNIT_INFINITY : usec;
        } else if (!strcmp(key, "ExecStart")) {
                if (!*value)
                        unit_list_reset(&u->exec_start);
                else
                        r = unit_list_add(&u->exec_start, value);
        } else if (!strcmp(key, "RestartPreventExitStatus"))
                r = list_add_words(u, &u->restart_prevent, value, NULL, WORDS_PLAIN);
        else if (!strcmp(key, "Environment"))
                r = list_add_words(u, &u->environment, value, NULL, WORDS_EXPAND_TEXT);
        else
                for (size_t i = 0; i < sizeof(dir_keys) / sizeof(dir_keys[0]); i++)
                        if (!strcmp(key, dir_keys[i])) {
                                char prefix[64];

                                snprintf(prefix, sizeof(prefix), "%s=", dir_keys[i]);
                                r = list_add_words(u, &u->state_dirs, value, prefix, WORDS_EXPAND_WORDS);
                        }
        if (r < 0)
                set_err(err, err_size, "%s=: bad quoting, out of memory or more than %d entries", key,
                        UNIT_LIST_MAX);
        return r;
}

static char *trim(char *s) {
        char *end;

        while (*s == ' ' || *s == '\t')
                s++;
        end = s + strlen(s);
        while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
                *--end = '\0';
        return s;
}

static int note(struct unit *u, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int note(struct unit *u, const char *format, ...) {
        char text[1024];
        va_list ap;

        if (u->notes.n >= UNIT_LIST_MAX)
                return 0;
        va_start(ap, format);
        vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        return unit_list_add(&u->notes, text);
}

/* One logical line of a file (continuations joined, trimmed). */
static int apply_line(struct unit *u, const char *path, int lineno, char *s, bool *service, char *err,
                      size_t err_size) {
        char *eq;

        if (*s == '\0' || *s == '#' || *s == ';')
                return 0;
        if (*s == '[') {
                *service = !strcmp(s, "[Service]");
                return 0;
        }
        if (!*service)
                return 0;
        if (!(eq = strchr(s, '=')))
                return note(u, "%s%s:%d: a line without '=' ignored, as the manager ignores it: %.200s", u->root, path,
                            lineno, s);
        *eq = '\0';
        return assign(u, trim(s), trim(eq + 1), err, err_size);
}

/* Applies one file: only [Service] assignments are read. */
static int apply_file(struct unit *u, const char *path, char *err, size_t err_size) {
        char *text = NULL, *logical, *next;
        size_t used = 0;
        bool service = false;
        struct stat st;
        char target[16];
        int r = 0, lineno = 0, fd;
        long n;

        /* A drop-in linked to /dev/null masks its name and sets nothing. */
        if (files_readlink(u->root, path, target, sizeof(target)) == 0 && !strcmp(target, "/dev/null"))
                return 0;
        if ((fd = files_open_regular(u->root, path, &st, err, err_size)) < 0)
                return -1;
        n = files_read_bounded(fd, UNIT_FILE_SIZE_MAX, &text);
        close(fd);
        if (n < 0) {
                set_err(err, err_size, "%s: %s", path,
                        n == -2 ? "larger than " STRINGIFY(UNIT_FILE_SIZE_MAX) " bytes" : strerror(errno));
                return -1;
        }
        if (!(logical = malloc(UNIT_LINE_MAX))) {
                free(text);
                set_err(err, err_size, "out of memory");
                return -1;
        }
        /* A byte-order mark before the first line is not part of it. */
        for (char *line = text + (strncmp(text, "\xef\xbb\xbf", 3) ? 0 : 3); r == 0 && line; line = next) {
                char *s;
                size_t len;
                bool more;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                else if (!*line)
                        break;
                s = trim(line);
                len = strlen(s);
                lineno++;
                if (used == 0 && (*s == '#' || *s == ';'))
                        continue;
                more = len > 0 && s[len - 1] == '\\';
                if (more)
                        s[--len] = ' ';
                if (used + len + 1 >= UNIT_LINE_MAX) {
                        set_err(err, err_size, "%s:%d: a line over %d bytes", path, lineno, UNIT_LINE_MAX);
                        r = -1;
                        break;
                }
                memcpy(logical + used, s, len + 1);
                used += len;
                if (more)
                        continue;
                used = 0;
                r = apply_line(u, path, lineno, trim(logical), &service, err, err_size);
        }
        free(text);
        free(logical);
        return r;
}

static int add_file(struct unit *u, const char *path) {
        if (u->n_files >= UNIT_FILES_MAX)
                return -1;
        return (u->files[u->n_files++] = strdup(path)) ? 0 : -1;
}

static int by_basename(const void *a, const void *b) {
        const char *x = strrchr(*(char *const *) a, '/'), *y = strrchr(*(char *const *) b, '/');

        return strcmp(x ? x + 1 : *(char *const *) a, y ? y + 1 : *(char *const *) b);
}

/* What the manager takes from a drop-in directory: "*.conf", not hidden, a
 * regular file or a symlink (a FIFO, a socket, a device is skipped). */
static bool dropin_name(const char *name) {
        size_t len = strlen(name);

        return len > 5 && name[0] != '.' && !strcmp(name + len - 5, ".conf");
}

/* Adds dir/"*.conf" to u->files unless a file of that name is there already
 * (from a directory of higher priority). dir is inside u->root. */
static int collect_dropins(struct unit *u, const char *dir) {
        struct dirent *e;
        DIR *d;
        int r = 0, fd = files_open_dir(u->root, dir);

        if (fd < 0 || !(d = fdopendir(fd))) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        while (r == 0 && (e = readdir(d))) {
                char path[4096];
                bool seen = false;

                if (!dropin_name(e->d_name))
                        continue;
                if (e->d_type != DT_REG && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN) {
                        r = note(u, "%s%s/%s: skipped, as the manager skips it: not a regular file but %s", u->root,
                                 dir, e->d_name, files_type_name(DTTOIF(e->d_type)));
                        continue;
                }
                for (size_t i = 1; i < u->n_files; i++)
                        seen |= !strcmp(strrchr(u->files[i], '/') + 1, e->d_name);
                if (seen)
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int) sizeof(path))
                        r = -1;
                else
                        r = add_file(u, path);
        }
        closedir(d);
        return r;
}

static int set_names(struct unit *u, const char *name) {
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.');

        if (!(u->name = strdup(name)))
                return -1;
        if (at && dot && dot > at + 1 && !(u->instance = strndup(at + 1, (size_t) (dot - at - 1))))
                return -1;
        return 0;
}

/* Masked: a symlink to /dev/null, or an empty file. */
static bool masked(const char *root, const char *path) {
        char target[16];
        struct stat st;

        if (files_readlink(root, path, target, sizeof(target)) == 0 && !strcmp(target, "/dev/null"))
                return true;
        return files_stat(root, path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

/* The drop-ins of dirs: each "*.conf" whose name no earlier directory
 * holds, in file-name order once load sorts them. */
static int collect_all_dropins(struct unit *u, const struct unit_list *dirs) {
        for (size_t i = 0; i < dirs->n; i++)
                if (collect_dropins(u, dirs->items[i]) < 0)
                        return -1;
        return 0;
}

static int load_by_name(const char *name, struct unit *u, char *err, size_t err_size) {
        char path[4096], real[4096], id[512];
        const char *root = u->root, *base;
        struct unit_list names = { 0 }, dirs = { 0 };
        int r = -1;

        if (lookup_fragment(root, name, path, sizeof(path)) < 0) {
                set_err(err, err_size, "%s: no such unit under %s (%s, ...)", name, *root ? root : "/",
                        lookup_search_path[0]);
                return -1;
        }
        if (masked(root, path)) {
                set_err(err, err_size, "%s: masked (%s%s links to /dev/null or is empty)", name, root, path);
                return -1;
        }
        if (files_resolve(root, path, real, sizeof(real)) < 0) {
                set_err(err, err_size, "%s%s: %s", root, path, strerror(errno));
                return -1;
        }
        if (set_names(u, name) < 0 || add_file(u, real) < 0)
                goto oom;
        /* The unit's id is its file's name (the instance put in); every other
         * name is an alias whose drop-ins apply too. */
        base = strrchr(real, '/') + 1;
        if (u->instance && strstr(base, "@.")) {
                const char *at = strchr(base, '@');

                snprintf(id, sizeof(id), "%.*s@%s%s", (int) (at - base), base, u->instance, at + 1);
        } else
                snprintf(id, sizeof(id), "%s", base);
        if (strcmp(name, id) != 0 && unit_list_add(&names, name) < 0)
                goto oom;
        if (lookup_aliases(root, base, u->instance, &names) < 0 || lookup_dropin_dirs(root, id, &names, &dirs) < 0 ||
            collect_all_dropins(u, &dirs) < 0)
                goto oom;
        r = 0;
        goto out;
oom:
        set_err(err, err_size, "%s: out of memory or more than %d drop-ins or names", name, UNIT_FILES_MAX - 1);
out:
        unit_list_reset(&names);
        unit_list_reset(&dirs);
        return r;
}

int unit_load(const char *spec, const char *root, struct unit *u, char *err, size_t err_size) {
        char dir[4096];

        memset(u, 0, sizeof(*u));
        if (!(u->root = strdup(strchr(spec, '/') || !root ? "" : root))) {
                set_err(err, err_size, "out of memory");
                return -1;
        }
        if (strchr(spec, '/')) {
                const char *base = strrchr(spec, '/') + 1;

                if (set_names(u, base) < 0 || add_file(u, spec) < 0 ||
                    snprintf(dir, sizeof(dir), "%s.d", spec) >= (int) sizeof(dir) || collect_dropins(u, dir) < 0) {
                        set_err(err, err_size, "%s: out of memory or too many drop-ins", spec);
                        return -1;
                }
        } else if (!strchr(spec, '.')) {
                set_err(err, err_size, "%s: not a unit name (NAME.service) nor a path", spec);
                return -1;
        } else if (load_by_name(spec, u, err, err_size) < 0)
                return -1;
        if (u->n_files > 2)
                qsort(u->files + 1, u->n_files - 1, sizeof(u->files[0]), by_basename);
        for (size_t i = 0; i < u->n_files; i++)
                if (apply_file(u, u->files[i], err, err_size) < 0)
                        return -1;
        return 0;
}

void unit_free(struct unit *u) {
        free(u->root);
        free(u->name);
        free(u->instance);
        for (size_t i = 0; i < u->n_files; i++)
                free(u->files[i]);
        free(u->type);
        free(u->notify_access);
        free(u->watchdog_signal);
        free(u->restart);
        unit_list_reset(&u->exec_start);
        unit_list_reset(&u->restart_prevent);
        unit_list_reset(&u->environment);
        unit_list_reset(&u->state_dirs);
        unit_list_reset(&u->notes);
        memset(u, 0, sizeof(*u));
}

const char *unit_type(const struct unit *u) {
        if (u->type)
                return u->type;
        return u->has_bus_name ? "dbus" : "simple";
}

/* The manager turns "none" (set or default) into "main" for a unit that
 * needs the notify socket: Type=notify or WatchdogSec=. */
const char *unit_notify_access(const struct unit *u) {
        if (u->notify_access && strcmp(u->notify_access, "none") != 0)
                return u->notify_access;
        return !strcmp(unit_type(u), "notify") || u->watchdog_set ? "main" : "none";
}

const char *unit_restart(const struct unit *u) { return u->restart ? u->restart : "no"; }

uint64_t unit_timeout_start(const struct unit *u) {
        return u->timeout_start_set ? u->timeout_start_usec : 90 * UINT64_C(1000000);
}

int unit_split_words(const struct unit *u, const char *line, char **words, int max) {
        return words_split(u, line, words, max, u ? WORDS_EXPAND_WORDS : WORDS_PLAIN);
}
