/* SPDX-License-Identifier: MIT */
/* SQLite release announcements: after a release commits, the releaser
 * opens and closes <database>-released beside the database for writing;
 * listeners watch the directory with inotify (IN_CLOSE_WRITE of that
 * name). It works between any processes of the host that share the file,
 * needs no daemon, socket or registration of listeners, leaves nothing to
 * clean up, and a writer never blocks on a slow listener.
 *
 * Listeners trust the name, so the directory must admit nobody else: a
 * read-write open refuses a directory that another user could write,
 * sticky or not (sqlite_check_directory()), and creates the announcement
 * file there as the store's own. Whatever happens in the directory, a
 * listener reports at most one announcement per REPORT_GAP_USEC: one held
 * back is reported when the gap ends (a timer makes the listening fd
 * readable then), so no event can make a standby attempt more often. */

#include "sqlite.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "trusted_dir.h"

/* Reads of inotify events per store_lease_notified() call: a flood of
 * events in the directory cannot keep the caller here. */
#define NOTIFY_READS_MAX 16
/* At most one announcement reported per this: 10 per second. */
#define REPORT_GAP_USEC (100 * 1000)

static const char *released_name(const struct store_sqlite *q) {
        const char *name = strrchr(q->released_path, '/');
        return name ? name + 1 : q->released_path;
}

/* The announcement file in dir_fd: created if absent (opening it to read
 * announces nothing), then it must be a regular file of ours. */
static int check_released_file(struct store_sqlite *q, int dir_fd) {
        const char *name = released_name(q);
        struct stat st;
        int fd;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (!S_ISREG(st.st_mode) || st.st_uid != geteuid()))
                goto refused;
        fd = openat(dir_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0)
                return store_fail(&q->base, errno == ELOOP ? -EPERM : -errno,
                                  "cannot create the release announcement file %s: %m", q->released_path);
        if (fstat(fd, &st) < 0) {
                int r = -errno;
                close(fd);
                return store_fail(&q->base, r, "cannot check %s: %s", q->released_path, strerror(-r));
        }
        close(fd);
        if (S_ISREG(st.st_mode) && st.st_uid == geteuid())
                return 0;
refused:
        if (!S_ISREG(st.st_mode))
                return store_fail(&q->base, -EPERM, "release announcement file %s is not a regular file (%s): "
                                  "remove it", q->released_path,
                                  S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory"
                                  : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
        return store_fail(&q->base, -EPERM,
                          "release announcement file %s is owned by uid %u, not by us (uid %u): remove it",
                          q->released_path, (unsigned) st.st_uid, (unsigned) geteuid());
}

int sqlite_check_directory(struct store_sqlite *q) {
        char dir[PATH_MAX], why[PATH_MAX + 128];
        const char *name;
        int dir_fd, r;

        if (trusted_dir_split(q->path, dir, sizeof dir, &name) < 0)
                return store_fail(&q->base, -EINVAL, "store %s: not a file name", q->path);
        dir_fd = trusted_dir_open_private(dir, why, sizeof why);
        if (dir_fd == -EPERM)
                return store_fail(&q->base, -EPERM,
                                  "store %s refused: %s (another user could plant its side files; "
                                  "give the store a directory of its own, mode 0700)", q->path, why);
        if (dir_fd < 0)
                return store_fail(&q->base, dir_fd, "cannot open store %s: %s", q->path, why);
        r = check_released_file(q, dir_fd);
        close(dir_fd);
        return r;
}

/* Opening for writing and closing is the announcement (IN_CLOSE_WRITE).
 * The directory is private (sqlite_check_directory()), so the name is the
 * file the open checked, or created again by us; never follows a symlink,
 * and a FIFO without a reader fails at once (O_NONBLOCK). A failure only
 * loses the announcement: listeners poll. */
void sqlite_announce_release(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int fd = open(q->released_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                      0600);

        if (fd >= 0)
                close(fd);
}

static void close_fd(int *fd) {
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

/* The other fds are valid only while watch_fd is (a new handle has them 0). */
static void close_listener(struct store_sqlite *q) {
        if (q->watch_fd < 0)
                return;
        close_fd(&q->wake_fd);
        close_fd(&q->wake_timer_fd);
        close_fd(&q->watch_fd);
        q->report_held = false;
}

/* The inotify watch, the rate limit's timer and the epoll fd of both. */
static int open_listener(struct store_sqlite *q) {
        struct epoll_event ev = { .events = EPOLLIN };
        char *copy = strdup(q->path);
        int r = 0;

        if (!copy)
                return store_fail(&q->base, -ENOMEM, "out of memory");
        q->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        q->wake_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        q->wake_fd = epoll_create1(EPOLL_CLOEXEC);
        if (q->watch_fd < 0 || q->wake_timer_fd < 0 || q->wake_fd < 0)
                r = store_fail(&q->base, -errno, "cannot listen for releases: %m");
        else if (inotify_add_watch(q->watch_fd, dirname(copy), IN_CLOSE_WRITE) < 0)
                r = store_fail(&q->base, -errno, "cannot watch the directory of %s: %m", q->path);
        else if (epoll_ctl(q->wake_fd, EPOLL_CTL_ADD, q->watch_fd, &ev) < 0 ||
                 epoll_ctl(q->wake_fd, EPOLL_CTL_ADD, q->wake_timer_fd, &ev) < 0)
                r = store_fail(&q->base, -errno, "cannot listen for releases: epoll: %m");
        free(copy);
        if (r < 0) {
                close_fd(&q->wake_fd);
                close_fd(&q->wake_timer_fd);
                close_fd(&q->watch_fd);
        }
        return r;
}

int sqlite_lease_listen(struct store *s, int *ret_fd) {
        struct store_sqlite *q = to_sqlite(s);
        int r;

        if (q->watch_fd < 0 && (r = open_listener(q)) < 0)
                return r;
        *ret_fd = q->wake_fd;
        return 0;
}

/* 1 when the inotify queue held our name (or lost events), 0 if not. */
static int drain_events(struct store_sqlite *q) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        const char *name = released_name(q);
        int found = 0;

        for (int i = 0; i < NOTIFY_READS_MAX; i++) {
                ssize_t n = read(q->watch_fd, buf, sizeof buf);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n <= 0)
                        return store_fail(&q->base, n < 0 ? -errno : -EIO, "reading release announcements: %m");
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

int sqlite_lease_notified(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        struct itimerspec due = { 0 };
        uint64_t expirations;
        int64_t now;
        int r;

        if (q->watch_fd < 0)
                return store_fail(s, -ENOTCONN, "not listening for releases");
        r = drain_events(q);
        if (r < 0)
                return r;
        /* The timer only makes the fd readable; what it means is below. */
        if (read(q->wake_timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN && errno != EINTR)
                return store_fail(s, -errno, "reading the announcement timer: %m");
        if (r > 0)
                q->report_held = true;
        if (!q->report_held)
                return 0;
        now = sqlite_clock_usec(CLOCK_MONOTONIC);
        if (now >= q->next_report_usec) {
                q->report_held = false;
                q->next_report_usec = now + REPORT_GAP_USEC;
                return 1;
        }
        due.it_value = (struct timespec) { .tv_sec = q->next_report_usec / 1000000,
                                           .tv_nsec = (long) (q->next_report_usec % 1000000) * 1000 };
        if (timerfd_settime(q->wake_timer_fd, TFD_TIMER_ABSTIME, &due, NULL) < 0)
                return store_fail(s, -errno, "arming the announcement timer: %m");
        return 0;
}

int sqlite_lease_unlisten(struct store *s) {
        close_listener(to_sqlite(s));
        return 0;
}
