/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int harness_manager_open(harness_manager *m, bool abstract) {
        static atomic_uint serial;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t len;
        int bufsize = 1 << 20;

        memset(m, 0, sizeof(*m));
        m->abstract = abstract;
        m->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (m->fd < 0)
                return -errno;
        (void) setsockopt(m->fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize));

        if (abstract) {
                int n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "sdlive-test-%d-%u",
                                 (int) getpid(), atomic_fetch_add(&serial, 1));
                len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + (size_t) n);
                snprintf(m->socket_env, sizeof(m->socket_env), "@%s", sa.sun_path + 1);
        } else {
                snprintf(m->dir, sizeof(m->dir), "/tmp/sdlive-test-XXXXXX");
                if (!mkdtemp(m->dir)) {
                        int r = -errno;
                        close(m->fd);
                        return r;
                }
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", m->dir);
                len = (socklen_t) sizeof(sa);
                snprintf(m->socket_env, sizeof(m->socket_env), "%s", sa.sun_path);
        }
        if (bind(m->fd, (struct sockaddr *) &sa, len) < 0) {
                int r = -errno;
                harness_manager_close(m);
                return r;
        }
        setenv("NOTIFY_SOCKET", m->socket_env, 1);
        return 0;
}

void harness_manager_close(harness_manager *m) {
        char path[sizeof(m->dir) + 16];

        if (m->fd >= 0)
                close(m->fd);
        m->fd = -1;
        if (m->dir[0]) {
                snprintf(path, sizeof(path), "%s/notify", m->dir);
                (void) unlink(path);
                (void) rmdir(m->dir);
                m->dir[0] = '\0';
        }
}

ssize_t harness_recv(harness_manager *m, char *buf, size_t size) {
        ssize_t n = recv(m->fd, buf, size - 1, MSG_DONTWAIT);

        if (n < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        buf[n] = '\0';
        return n;
}

ssize_t harness_recv_fds(harness_manager *m, char *buf, size_t size, int *fds, size_t max_fds,
                         size_t *ret_n_fds) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * 256)];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = size - 1 };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof(control.buf),
        };
        size_t n_fds = 0;
        ssize_t n;

        n = recvmsg(m->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        buf[n] = '\0';
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                const unsigned char *data = CMSG_DATA(c);
                size_t count;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < count; i++) {
                        int fd;

                        memcpy(&fd, data + i * sizeof(int), sizeof(int));
                        if (n_fds < max_fds)
                                fds[n_fds++] = fd;
                        else
                                close(fd);
                }
        }
        *ret_n_fds = n_fds;
        if (mh.msg_flags & MSG_CTRUNC)
                return -EMSGSIZE;
        return n;
}

ssize_t harness_recv_wait(harness_manager *m, char *buf, size_t size, int timeout_ms) {
        struct pollfd p = { .fd = m->fd, .events = POLLIN };

        if (poll(&p, 1, timeout_ms) < 0)
                return -errno;
        return harness_recv(m, buf, size);
}

unsigned harness_drain(harness_manager *m) {
        return harness_drain_count(m, NULL, NULL);
}

unsigned harness_drain_count(harness_manager *m, const char *text, unsigned *ret_total) {
        static _Thread_local char buf[HARNESS_DGRAM_MAX];
        unsigned matched = 0, total = 0;

        while (harness_recv(m, buf, sizeof(buf)) >= 0) {
                total++;
                if (text && strcmp(buf, text) == 0)
                        matched++;
        }
        if (ret_total)
                *ret_total = total;
        return text ? matched : total;
}

void harness_env_clear(void) {
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
}

void harness_env_watchdog(uint64_t usec) {
        char v[32];

        snprintf(v, sizeof(v), "%" PRIu64, usec);
        setenv("WATCHDOG_USEC", v, 1);
        unsetenv("WATCHDOG_PID");
}

unsigned harness_line_count(const char *msg) {
        unsigned n = 0;

        for (const char *p = msg; *p;) {
                const char *nl = strchr(p, '\n');
                n++;
                if (!nl)
                        break;
                p = nl + 1;
        }
        return n;
}

bool harness_has_line(const char *msg, const char *line) {
        size_t len = strlen(line);

        for (const char *p = msg; *p;) {
                const char *nl = strchr(p, '\n');
                size_t l = nl ? (size_t) (nl - p) : strlen(p);
                if (l == len && memcmp(p, line, len) == 0)
                        return true;
                if (!nl)
                        break;
                p = nl + 1;
        }
        return false;
}

bool harness_line_value(const char *msg, const char *key, char *out, size_t size) {
        size_t klen = strlen(key);

        for (const char *p = msg; *p;) {
                const char *nl = strchr(p, '\n');
                size_t l = nl ? (size_t) (nl - p) : strlen(p);
                if (l > klen && memcmp(p, key, klen) == 0 && p[klen] == '=') {
                        size_t v = l - klen - 1;
                        if (v >= size)
                                return false;
                        memcpy(out, p + klen + 1, v);
                        out[v] = '\0';
                        return true;
                }
                if (!nl)
                        break;
                p = nl + 1;
        }
        return false;
}

int harness_count_sockets(void) {
        DIR *dir = opendir("/proc/self/fd");
        struct dirent *e;
        int n = 0;

        if (!dir)
                return -errno;
        while ((e = readdir(dir))) {
                char link[300], target[128];
                ssize_t l;

                if (e->d_name[0] == '.')
                        continue;
                snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
                l = readlink(link, target, sizeof(target) - 1);
                if (l < 0)
                        continue;
                target[l] = '\0';
                if (strncmp(target, "socket:", 7) == 0)
                        n++;
        }
        closedir(dir);
        return n;
}

static uint64_t fake_now(void *userdata) {
        harness_clock *c = userdata;
        return atomic_load(&c->now);
}

void harness_clock_collect(harness_clock *c) {
        char buf[HARNESS_DGRAM_MAX];

        if (!c->watch)
                return;
        while (harness_recv(c->watch, buf, sizeof(buf)) >= 0) {
                if (c->n_sent >= HARNESS_SENT_MAX)
                        continue;
                c->sent_at[c->n_sent] = atomic_load(&c->now);
                snprintf(c->sent[c->n_sent], sizeof(c->sent[0]), "%.63s", buf);
                c->n_sent++;
        }
}

static int fake_poll(void *userdata, struct pollfd *fds, nfds_t n, uint64_t timeout_usec) {
        harness_clock *c = userdata;
        int r;

        atomic_fetch_add(&c->polls, 1);
        harness_clock_collect(c);
        if (c->on_poll)
                c->on_poll(c, c->on_poll_arg);
        r = poll(fds, n, 0);
        if (r != 0)
                return r < 0 ? -errno : r;
        if (timeout_usec == UINT64_MAX)
                return -EDEADLK;
        atomic_fetch_add(&c->now, timeout_usec);
        atomic_fetch_add(&c->wakeups, 1);
        return 0;
}

const sdlive_clock_ops harness_fake_clock_ops = {
        .now = fake_now,
        .poll = fake_poll,
};

void harness_clock_init(harness_clock *c, harness_manager *watch) {
        memset(c, 0, sizeof(*c));
        atomic_store(&c->now, sdlive_clock_monotonic_usec());
        c->watch = watch;
}

void harness_clock_advance(harness_clock *c, uint64_t usec) {
        atomic_fetch_add(&c->now, usec);
}

uint64_t harness_clock_get(harness_clock *c) {
        return atomic_load(&c->now);
}

int harness_new_fake(sdlive **ret, const sdlive_options *opts, harness_clock *c) {
        int r = sdlive_new(ret, opts);

        if (r < 0)
                return r;
        sdlive_clock_override(*ret, &harness_fake_clock_ops, c);
        return 0;
}

uint64_t harness_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int fixture_setup(void **state, bool watch) {
        harness_fixture *f = calloc(1, sizeof(*f));

        if (!f)
                return -1;
        harness_env_clear();
        if (harness_manager_open(&f->m, false) < 0) {
                free(f);
                return -1;
        }
        harness_clock_init(&f->c, watch ? &f->m : NULL);
        *state = f;
        return 0;
}

int harness_fixture_setup(void **state) {
        return fixture_setup(state, false);
}

int harness_fixture_setup_watching(void **state) {
        return fixture_setup(state, true);
}

int harness_fixture_teardown(void **state) {
        harness_fixture *f = *state;

        sdlive_free(f->d);
        harness_manager_close(&f->m);
        harness_env_clear();
        free(f);
        return 0;
}
