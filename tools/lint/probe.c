/* SPDX-License-Identifier: MIT */
/* The probe: a unit's command on a notify socket of the linter's own. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define STOP_GRACE_USEC (2 * UINT64_C(1000000))

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) remove(path); /* best effort: a leftover is only a temporary directory */
        return 0;
}

/* In the child: the environment the manager would give, then exec. Writes
 * errno to report on failure. Never returns. */
static void exec_child(const struct unit *u, const char *dir, const char *exec_path, char *const *argv,
                       const char *socket_path, uint64_t watchdog_usec, int report) {
        char value[4096];
        sigset_t none;
        int null = open("/dev/null", O_RDWR);

        setsid();
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (null >= 0) {
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
        }
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDNAMES");
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
        setenv("NOTIFY_SOCKET", socket_path, 1);
        if (watchdog_usec) {
                snprintf(value, sizeof(value), "%" PRIu64, watchdog_usec);
                setenv("WATCHDOG_USEC", value, 1);
                snprintf(value, sizeof(value), "%d", (int) getpid());
                setenv("WATCHDOG_PID", value, 1);
        }
        for (size_t i = 0; i < u->environment.n; i++) {
                char *eq = strchr(u->environment.items[i], '=');

                if (eq && eq > u->environment.items[i]) {
                        *eq = '\0';
                        setenv(u->environment.items[i], eq + 1, 1);
                        *eq = '=';
                }
        }
        /* StateDirectory=a b -> STATE_DIRECTORY=<dir>/a:<dir>/b, each made */
        static const char *const kinds[][2] = { { "StateDirectory", "STATE_DIRECTORY" },
                                                { "RuntimeDirectory", "RUNTIME_DIRECTORY" },
                                                { "CacheDirectory", "CACHE_DIRECTORY" },
                                                { "LogsDirectory", "LOGS_DIRECTORY" },
                                                { "ConfigurationDirectory", "CONFIGURATION_DIRECTORY" } };
        for (size_t k = 0; k < 5; k++) {
                size_t len = 0, klen = strlen(kinds[k][0]);

                value[0] = '\0';
                for (size_t i = 0; i < u->state_dirs.n; i++) {
                        const char *item = u->state_dirs.items[i];
                        char path[4096];

                        if (strncmp(item, kinds[k][0], klen) != 0 || item[klen] != '=' || strchr(item + klen + 1, '/'))
                                continue;
                        snprintf(path, sizeof(path), "%s/%s", dir, item + klen + 1);
                        mkdir(path, 0700);
                        len += (size_t) snprintf(value + len, sizeof(value) - len, "%s%s", len ? ":" : "", path);
                        if (len >= sizeof(value))
                                break;
                }
                if (len && len < sizeof(value))
                        setenv(kinds[k][1], value, 1);
        }
        execv(exec_path, argv);
        int e = errno;
        if (write(report, &e, sizeof(e)) < 0) {
        }
        _exit(127);
}

/* May a message from pid change the service's state? */
static bool accepted(const char *access, pid_t pid, pid_t main_pid) {
        if (!strcmp(access, "all"))
                return true;
        if (!strcmp(access, "main") || !strcmp(access, "exec"))
                return pid == main_pid;
        return false;
}

static void keepalive(struct probe_result *r, pid_t pid, uint64_t t) {
        uint64_t since = r->keepalives ? r->last_keepalive_usec : 0;

        if (t - since > r->max_gap_usec)
                r->max_gap_usec = t - since;
        if (r->keepalives && r->n_gaps < PROBE_GAPS_MAX)
                r->gaps[r->n_gaps++] = t - since;
        if (!r->keepalives)
                r->first_keepalive_usec = t;
        r->last_keepalive_usec = t;
        r->keepalives++;
        if (pid != r->main_pid) {
                r->keepalives_child++;
                r->child_pid = pid;
        }
}

/* One datagram: each line KEY=VALUE. */
static void message(const struct unit *u, struct probe_result *r, char *text, pid_t pid, uint64_t t) {
        const char *access = unit_notify_access(u);
        bool ok = accepted(access, pid, r->main_pid);
        char *save = NULL;

        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (!strcmp(line, "READY=1")) {
                        if (ok && !r->ready) {
                                r->ready = true;
                                r->ready_usec = t;
                        } else if (!ok && !r->ready_foreign) {
                                r->ready_foreign = true;
                                r->ready_foreign_pid = pid;
                        }
                } else if (!strcmp(line, "WATCHDOG=1")) {
                        if (ok)
                                keepalive(r, pid, t);
                        else
                                r->keepalives_ignored++;
                } else if (ok && !strncmp(line, "STATUS=", 7))
                        snprintf(r->status, sizeof(r->status), "%s", line + 7);
                else if (ok && !strncmp(line, "MAINPID=", 8))
                        r->main_pid = (pid_t) strtol(line + 8, NULL, 10);
                else if (ok && !strncmp(line, "WATCHDOG_USEC=", 14))
                        snprintf(r->watchdog_usec_sent, sizeof(r->watchdog_usec_sent), "%s", line + 14);
        }
}

static void receive(const struct unit *u, struct probe_result *r, int fd, uint64_t start) {
        for (;;) {
                char buf[4097], control[CMSG_SPACE(sizeof(struct ucred))];
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                                     .msg_controllen = sizeof(control) };
                struct cmsghdr *c;
                pid_t pid = 0;
                ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

                if (n < 0)
                        return;
                for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                                struct ucred cred;

                                memcpy(&cred, CMSG_DATA(c), sizeof(cred));
                                pid = cred.pid;
                        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                                /* FD store: the descriptors are not kept */
                                int fds[64];
                                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

                                memcpy(fds, CMSG_DATA(c), (k > 64 ? 64 : k) * sizeof(int));
                                for (size_t i = 0; i < k && i < 64; i++)
                                        close(fds[i]);
                        }
                if (++r->messages > PROBE_MESSAGES_MAX)
                        continue;
                buf[n] = '\0';
                message(u, r, buf, pid, now_usec() - start);
        }
}

/* SIGTERM to the process group, SIGKILL after the grace time. */
static void stop(struct probe_result *r, pid_t pgid) {
        uint64_t deadline = now_usec() + STOP_GRACE_USEC;
        int status;

        kill(-pgid, SIGTERM);
        while (!r->exited && now_usec() < deadline) {
                if (waitpid(pgid, &status, WNOHANG) == pgid)
                        break;
                usleep(10000);
        }
        kill(-pgid, SIGKILL);
        while (waitpid(pgid, &status, 0) < 0 && errno == EINTR) {
        }
}

int probe_run(const struct unit *u, const char *exec_path, char *const *argv, uint64_t watchdog_usec,
              double seconds, struct probe_result *r) {
        char dir[] = "/tmp/sdlive-lint.XXXXXX", socket_path[sizeof(dir) + 16];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = -1, report[2] = { -1, -1 }, one = 1, e = 0, status, ret = -1;
        uint64_t start, end;
        pid_t pid;

        memset(r, 0, sizeof(*r));
        if (!mkdtemp(dir)) {
                snprintf(r->error, sizeof(r->error), "mkdtemp: %s", strerror(errno));
                return -1;
        }
        snprintf(socket_path, sizeof(socket_path), "%s/notify", dir);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 || pipe2(report, O_CLOEXEC) < 0) {
                snprintf(r->error, sizeof(r->error), "notify socket %s: %s", socket_path, strerror(errno));
                goto out;
        }
        start = now_usec();
        pid = fork();
        if (pid < 0) {
                snprintf(r->error, sizeof(r->error), "fork: %s", strerror(errno));
                goto out;
        }
        if (pid == 0)
                exec_child(u, dir, exec_path, argv, socket_path, watchdog_usec, report[1]);
        close(report[1]);
        report[1] = -1;
        if (read(report[0], &e, sizeof(e)) == (ssize_t) sizeof(e)) {
                waitpid(pid, &status, 0);
                snprintf(r->error, sizeof(r->error), "cannot run %s: %s", exec_path, strerror(e));
                goto out;
        }
        r->started = true;
        r->main_pid = pid;
        end = start + (uint64_t) (seconds * 1e6);
        while (!r->exited) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                uint64_t now = now_usec();

                if (now >= end)
                        break;
                poll(&p, 1, (int) ((end - now) / 1000 > 50 ? 50 : (end - now) / 1000 + 1));
                receive(u, r, fd, start);
                if (waitpid(pid, &status, WNOHANG) == pid) {
                        r->exited = true;
                        r->exit_status = status;
                }
        }
        r->duration_usec = now_usec() - start;
        receive(u, r, fd, start);
        if (r->duration_usec - (r->keepalives ? r->last_keepalive_usec : 0) > r->max_gap_usec)
                r->max_gap_usec = r->duration_usec - (r->keepalives ? r->last_keepalive_usec : 0);
        if (!r->exited)
                stop(r, pid);
        else
                kill(-pid, SIGKILL); /* what it left behind in its group */
        ret = 0;
out:
        if (fd >= 0)
                close(fd);
        if (report[0] >= 0)
                close(report[0]);
        if (report[1] >= 0)
                close(report[1]);
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        return ret;
}

static int by_value(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

uint64_t probe_median_gap(const struct probe_result *r) {
        uint64_t sorted[PROBE_GAPS_MAX];

        if (r->n_gaps == 0)
                return 0;
        memcpy(sorted, r->gaps, r->n_gaps * sizeof(sorted[0]));
        qsort(sorted, r->n_gaps, sizeof(sorted[0]), by_value);
        return sorted[r->n_gaps / 2];
}
