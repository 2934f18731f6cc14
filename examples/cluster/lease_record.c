/* SPDX-License-Identifier: MIT */
#include "lease_record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trusted_dir.h"

#define MAGIC "sdlive-lease-record 2"

int lease_record_path(const char *dir, const char *node, char **ret) {
        if (!dir || !dir[0] || !node || !node[0] || node[0] == '.' || strlen(node) > STORE_NAME_MAX ||
            strspn(node, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@:-") != strlen(node))
                return -EINVAL;
        return asprintf(ret, "%s/%s.lease", dir, node) < 0 ? -ENOMEM : 0;
}

const char *lease_record_invocation(void) {
        const char *id = getenv("INVOCATION_ID");

        if (!id || strlen(id) != LEASE_RECORD_INVOCATION_MAX ||
            strspn(id, "0123456789abcdef") != LEASE_RECORD_INVOCATION_MAX)
                return "";
        return id;
}

static int write_all(int fd, const char *buf, size_t n) {
        while (n > 0) {
                ssize_t w = write(fd, buf, n);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                buf += w;
                n -= (size_t) w;
        }
        return 0;
}

/* The record's directory, opened if it is private to its owner, and the
 * record's name in it. The descriptor or -errno (why filled). */
static int open_dir(const char *path, const char **name, char *why, size_t size) {
        char dir[PATH_MAX];

        if (trusted_dir_split(path, dir, sizeof(dir), name) < 0) {
                snprintf(why, size, "%s: not a file name", path);
                return -EINVAL;
        }
        return trusted_dir_open_private(dir, why, size);
}

static int read_at(int dir_fd, const char *name, struct lease_record *ret);

/* Nothing, a symlink or a record of ours may be replaced: -EEXIST for
 * anything else. */
static int replaceable(int dir_fd, const char *name) {
        struct lease_record old;
        struct stat st;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISLNK(st.st_mode))
                return 0;
        return S_ISREG(st.st_mode) && read_at(dir_fd, name, &old) == 0 ? 0 : -EEXIST;
}

int lease_record_check(const char *path, char *why, size_t size) {
        const char *name;
        int dir_fd = open_dir(path, &name, why, size), r;

        if (dir_fd < 0)
                return dir_fd;
        r = replaceable(dir_fd, name);
        if (r < 0)
                snprintf(why, size, "%s is there and is not a lease record of ours (%s): move it away",
                         path, r == -EEXIST ? "another file" : strerror(-r));
        close(dir_fd);
        return r;
}

/* Field 3 (state) and field 22 (start time) of /proc/PID/stat; both
 * untouched on failure. */
static int process_stat(pid_t pid, char *state, uint64_t *start_time) {
        char path[64], text[1024], *p, found_state;
        unsigned long long value;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, text, sizeof(text) - 1);
        close(fd);
        if (n < 0)
                return -errno;
        text[n] = '\0';
        /* "pid (comm) S f4 ... f22 ...": comm may hold anything but ends
         * at the last ')'. */
        p = strrchr(text, ')');
        if (!p || p[1] != ' ' || !p[2])
                return -EBADMSG;
        p += 2;
        found_state = *p;
        for (int field = 3; field < 22; field++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EBADMSG;
                p++;
        }
        errno = 0;
        value = strtoull(p, &p, 10);
        if (errno || (*p != ' ' && *p != '\n' && *p != '\0'))
                return -EBADMSG;
        *state = found_state;
        *start_time = value;
        return 0;
}

int lease_record_this_process(struct lease_record *r) {
        char state;

        r->pid = getpid();
        return process_stat(r->pid, &state, &r->start_time);
}

int lease_record_process_gone(const struct lease_record *r) {
        uint64_t start_time = 0;
        char state = 0;
        int k = process_stat(r->pid, &state, &start_time);

        if (k == -ENOENT || k == -ESRCH)
                return 1;
        if (k < 0)
                return k;
        return start_time != r->start_time || state == 'Z' || state == 'X';
}

int lease_record_write(const char *path, const struct lease_record *r) {
        char text[LEASE_RECORD_SIZE_MAX], tmp[NAME_MAX + 1], why[PATH_MAX + 128];
        const char *name;
        int dir_fd, fd, n, ret;

        n = snprintf(text, sizeof(text),
                     MAGIC "\nlease=%s\nholder=%s\ngeneration=%" PRIu64 "\ninvocation=%s\npid=%d\nstart=%" PRIu64 "\n",
                     r->lease, r->holder, r->generation, r->invocation[0] ? r->invocation : "-", (int) r->pid,
                     r->start_time);
        if (n < 0 || (size_t) n >= sizeof(text) || r->pid <= 0)
                return -EINVAL;
        dir_fd = open_dir(path, &name, why, sizeof(why));
        if (dir_fd < 0)
                return dir_fd;
        if ((size_t) snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp)) {
                ret = -ENAMETOOLONG;
                goto out;
        }
        ret = replaceable(dir_fd, name);
        if (ret < 0)
                goto out;
        /* A leftover (or planted) temporary file is replaced, never followed. */
        if (unlinkat(dir_fd, tmp, 0) < 0 && errno != ENOENT) {
                ret = -errno;
                goto out;
        }
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                ret = -errno;
                goto out;
        }
        ret = write_all(fd, text, (size_t) n);
        if (close(fd) < 0 && ret == 0)
                ret = -errno;
        if (ret == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                ret = -errno;
        if (ret < 0)
                unlinkat(dir_fd, tmp, 0);
out:
        close(dir_fd);
        return ret;
}

/* Copies the value of "key=value" at *line into dst (size max + 1);
 * advances *line past the newline. */
static int take(char **line, const char *key, char *dst, size_t max, const char *charset) {
        size_t klen = strlen(key), vlen;
        char *end = strchr(*line, '\n');

        if (!end || strncmp(*line, key, klen) != 0 || (*line)[klen] != '=')
                return -EBADMSG;
        vlen = (size_t) (end - (*line + klen + 1));
        if (vlen == 0 || vlen > max || strspn(*line + klen + 1, charset) < vlen)
                return -EBADMSG;
        memcpy(dst, *line + klen + 1, vlen);
        dst[vlen] = '\0';
        *line = end + 1;
        return 0;
}

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@:-"

static int parse(char *text, struct lease_record *r) {
        char number[21], pid[11], start[21], *line = text, *end;
        unsigned long long value;
        int ret;

        if (strncmp(line, MAGIC "\n", sizeof(MAGIC)) != 0)
                return -EBADMSG;
        line += sizeof(MAGIC);
        if ((ret = take(&line, "lease", r->lease, STORE_NAME_MAX, NAME_CHARS)) < 0 ||
            (ret = take(&line, "holder", r->holder, STORE_NAME_MAX, NAME_CHARS)) < 0 ||
            (ret = take(&line, "generation", number, 20, "0123456789")) < 0 ||
            (ret = take(&line, "invocation", r->invocation, LEASE_RECORD_INVOCATION_MAX, "0123456789abcdef-")) < 0 ||
            (ret = take(&line, "pid", pid, 10, "0123456789")) < 0 ||
            (ret = take(&line, "start", start, 20, "0123456789")) < 0)
                return ret;
        if (*line != '\0')
                return -EBADMSG;
        errno = 0;
        r->generation = strtoull(number, &end, 10);
        if (errno || *end || number[0] == '0' || r->generation == 0 || r->generation > INT64_MAX)
                return -EBADMSG;
        value = strtoull(pid, &end, 10);
        if (errno || *end || pid[0] == '0' || value > INT_MAX)
                return -EBADMSG;
        r->pid = (pid_t) value;
        r->start_time = strtoull(start, &end, 10);
        if (errno || *end || (start[0] == '0' && start[1]))
                return -EBADMSG;
        if (strcmp(r->invocation, "-") == 0)
                r->invocation[0] = '\0';
        else if (strlen(r->invocation) != LEASE_RECORD_INVOCATION_MAX || strchr(r->invocation, '-'))
                return -EBADMSG;
        return 0;
}

static int read_at(int dir_fd, const char *name, struct lease_record *ret) {
        char text[LEASE_RECORD_SIZE_MAX + 1];
        struct lease_record rec = { 0 };
        struct stat st;
        ssize_t n;
        int fd, r;

        fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ELOOP ? -EPERM : -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
                r = -EPERM;
                goto out;
        }
        if (st.st_size > LEASE_RECORD_SIZE_MAX) {
                r = -EFBIG;
                goto out;
        }
        do
                n = read(fd, text, LEASE_RECORD_SIZE_MAX + 1);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                r = -errno;
                goto out;
        }
        if (n > LEASE_RECORD_SIZE_MAX) {
                r = -EFBIG;
                goto out;
        }
        text[n] = '\0';
        r = strlen(text) == (size_t) n ? parse(text, &rec) : -EBADMSG;
        if (r == 0)
                *ret = rec;
out:
        close(fd);
        return r;
}

int lease_record_read(const char *path, struct lease_record *ret) {
        char why[PATH_MAX + 128];
        const char *name;
        int dir_fd = open_dir(path, &name, why, sizeof(why)), r;

        if (dir_fd < 0)
                return dir_fd == -ENOENT ? -ENOENT : -EPERM;
        r = read_at(dir_fd, name, ret);
        close(dir_fd);
        return r;
}

int lease_record_remove(const char *path, uint64_t generation) {
        struct lease_record r = { 0 };
        char why[PATH_MAX + 128];
        const char *name;
        int dir_fd = open_dir(path, &name, why, sizeof(why)), ret;

        if (dir_fd < 0)
                return dir_fd == -ENOENT ? 0 : -EPERM;
        ret = read_at(dir_fd, name, &r);
        if (ret < 0)
                ret = ret == -ENOENT ? 0 : ret;
        else if (r.generation == generation && unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
                ret = -errno;
        close(dir_fd);
        return ret;
}
