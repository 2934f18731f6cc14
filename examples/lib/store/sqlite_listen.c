/* SPDX-License-Identifier: MIT */
/* SQLite release announcements: after a release commits, the releaser
 * opens and closes <database>-released beside the database for writing;
 * listeners watch the directory with inotify (IN_CLOSE_WRITE of that
 * name). It works between any processes of the host that share the file,
 * needs no daemon, socket or registration of listeners, leaves nothing to
 * clean up, and a writer never blocks on a slow listener. The directory
 * (the service's StateDirectory=, 0700) admits only writers of the
 * database, who could release the lease anyway. */

#include "sqlite.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* Reads of inotify events per store_lease_notified() call: a flood of
 * events in the directory cannot keep the caller here. */
#define NOTIFY_READS_MAX 16

/* Opening for writing and closing is the announcement (IN_CLOSE_WRITE).
 * Never follows a symlink; a FIFO without a reader fails at once
 * (O_NONBLOCK). A failure only loses the announcement: listeners poll. */
void sqlite_announce_release(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int fd = open(q->released_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

        if (fd >= 0)
                close(fd);
}

int sqlite_lease_listen(struct store *s, int *ret_fd) {
        struct store_sqlite *q = to_sqlite(s);
        char *copy;
        int r = 0;

        if (q->watch_fd < 0) {
                copy = strdup(q->path);
                if (!copy)
                        return store_fail(s, -ENOMEM, "out of memory");
                q->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
                if (q->watch_fd < 0)
                        r = store_fail(s, -errno, "cannot listen for releases: inotify: %m");
                else if (inotify_add_watch(q->watch_fd, dirname(copy), IN_CLOSE_WRITE) < 0) {
                        r = store_fail(s, -errno, "cannot watch the directory of %s: %m", q->path);
                        close(q->watch_fd);
                        q->watch_fd = -1;
                }
                free(copy);
                if (r < 0)
                        return r;
        }
        *ret_fd = q->watch_fd;
        return 0;
}

int sqlite_lease_notified(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        const char *name = strrchr(q->released_path, '/');
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        int found = 0;

        name = name ? name + 1 : q->released_path;
        if (q->watch_fd < 0)
                return store_fail(s, -ENOTCONN, "not listening for releases");
        for (int i = 0; i < NOTIFY_READS_MAX; i++) {
                ssize_t n = read(q->watch_fd, buf, sizeof buf);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n <= 0)
                        return store_fail(s, n < 0 ? -errno : -EIO, "reading release announcements: %m");
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) p;

                        /* A lost event may have been ours. */
                        if ((ev->mask & IN_Q_OVERFLOW) ||
                            (ev->len > 0 && strnlen(ev->name, ev->len) < ev->len && strcmp(ev->name, name) == 0))
                                found = 1;
                        p += sizeof(*ev) + ev->len;
                }
        }
        return found;
}

int sqlite_lease_unlisten(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);

        if (q->watch_fd >= 0)
                close(q->watch_fd);
        q->watch_fd = -1;
        return 0;
}
