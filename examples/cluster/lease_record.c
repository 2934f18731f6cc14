/* SPDX-License-Identifier: MIT */
#include "lease_record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "sdlive-lease-record 1"

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

/* Nothing, a symlink or a record of ours may be replaced: -EEXIST for
 * anything else. */
static int replaceable(const char *path) {
        struct lease_record old;
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISLNK(st.st_mode))
                return 0;
        return S_ISREG(st.st_mode) && lease_record_read(path, &old) == 0 ? 0 : -EEXIST;
}

int lease_record_write(const char *path, const struct lease_record *r) {
        char text[LEASE_RECORD_SIZE_MAX], *tmp;
        int fd, n, ret;

        n = snprintf(text, sizeof(text), MAGIC "\nlease=%s\nholder=%s\ngeneration=%" PRIu64 "\ninvocation=%s\n",
                     r->lease, r->holder, r->generation, r->invocation[0] ? r->invocation : "-");
        if (n < 0 || (size_t) n >= sizeof(text))
                return -EINVAL;
        ret = replaceable(path);
        if (ret < 0)
                return ret;
        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return -ENOMEM;
        /* A leftover (or planted) temporary file is replaced, never followed. */
        if (unlink(tmp) < 0 && errno != ENOENT) {
                ret = -errno;
                goto out;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                ret = -errno;
                goto out;
        }
        ret = write_all(fd, text, (size_t) n);
        if (close(fd) < 0 && ret == 0)
                ret = -errno;
        if (ret == 0 && rename(tmp, path) < 0)
                ret = -errno;
        if (ret < 0)
                unlink(tmp);
out:
        free(tmp);
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
        char number[21], *line = text, *end;
        int ret;

        if (strncmp(line, MAGIC "\n", sizeof(MAGIC)) != 0)
                return -EBADMSG;
        line += sizeof(MAGIC);
        if ((ret = take(&line, "lease", r->lease, STORE_NAME_MAX, NAME_CHARS)) < 0 ||
            (ret = take(&line, "holder", r->holder, STORE_NAME_MAX, NAME_CHARS)) < 0 ||
            (ret = take(&line, "generation", number, 20, "0123456789")) < 0 ||
            (ret = take(&line, "invocation", r->invocation, LEASE_RECORD_INVOCATION_MAX, "0123456789abcdef-")) < 0)
                return ret;
        if (*line != '\0')
                return -EBADMSG;
        errno = 0;
        r->generation = strtoull(number, &end, 10);
        if (errno || *end || number[0] == '0' || r->generation == 0 || r->generation > INT64_MAX)
                return -EBADMSG;
        if (strcmp(r->invocation, "-") == 0)
                r->invocation[0] = '\0';
        else if (strlen(r->invocation) != LEASE_RECORD_INVOCATION_MAX || strchr(r->invocation, '-'))
                return -EBADMSG;
        return 0;
}

int lease_record_read(const char *path, struct lease_record *ret) {
        char text[LEASE_RECORD_SIZE_MAX + 1];
        struct stat st;
        ssize_t n;
        int fd, r;

        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
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
        *ret = (struct lease_record) { 0 };
        r = strlen(text) == (size_t) n ? parse(text, ret) : -EBADMSG;
out:
        close(fd);
        return r;
}

int lease_record_remove(const char *path, uint64_t generation) {
        struct lease_record r = { 0 };
        int ret = lease_record_read(path, &r);

        if (ret < 0)
                return ret == -ENOENT ? 0 : ret;
        if (r.generation != generation)
                return 0;
        return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}
