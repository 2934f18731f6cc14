/* SPDX-License-Identifier: MIT */
/* The coordinator's listeners: a unix socket with peer credential checks,
 * optionally TCP, and the thread that accepts on them. */
#include "coordinator_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <stddef.h>
#include <unistd.h>

#include "address.h"
#include "log.h"
#include "monotonic.h"
#include "trusted_dir.h"

#define LISTEN_BACKLOG 64
/* TCP: a burst (the connection cap, or a flood refused at once) waits in
 * the kernel's queue rather than in SYN retransmits of a worker's
 * connection; the listener drains it quickly. */
#define LISTEN_TCP_BACKLOG (4 * COORDINATOR_CONNECTIONS_MAX)
/* Connections taken off each listener's queue per wake-up: a burst of
 * connections refused at once must not fill the kernel's queue, where a
 * worker's connection would wait for a SYN retransmit. */
#define ACCEPTS_PER_WAKEUP 64
/* A bound on the listener's sleep, so finished connection threads are
 * joined even while nobody connects. */
#define LISTENER_TICK_MS 1000
/* How long a TLS newcomer that has sent nothing yet, and would be refused
 * for it, gets for its first bytes: a worker sends its ClientHello right
 * after its TCP handshake, but the listener may take the connection off
 * the queue in between. The listener waits for a whole wake-up's
 * newcomers at once, so a flood of silent ones slows its accepts to
 * ACCEPTS_PER_WAKEUP per TALK_WAIT_MS at most; they wait in the kernel's
 * queue meanwhile, where a worker's ClientHello arrives too. */
#define TALK_WAIT_MS 10
/* ... unless more than this many connections wait in the kernel's queue:
 * the wait must not fill it (a worker's SYN would then wait for a
 * retransmit), and a connection behind that many has spent about
 * TALK_WAIT_MS in the queue already, as they are taken off at full
 * speed. */
#define TALK_WAIT_QUEUE_MAX (LISTEN_TCP_BACKLOG / 2)
/* Gives our socket `name` in dir_fd mode 0666 without following a link:
 * the entry is opened as itself (O_PATH | O_NOFOLLOW), must be a socket we
 * own, and is changed through its descriptor. */
static int open_to_everyone(int dir_fd, const char *name) {
        char proc[64];
        struct stat st;
        int fd, r;

        fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
                r = -EPERM;
        else {
                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
                r = chmod(proc, 0666) < 0 ? -errno : 0;
        }
        close(fd);
        return r;
}

int listen_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char dir[PATH_MAX], why[PATH_MAX + 128];
        const char *name;
        int dir_fd, fd = -1, r;

        if (!path || !*path || strlen(path) >= sizeof(sa.sun_path) ||
            trusted_dir_split(path, dir, sizeof(dir), &name) < 0)
                return -EINVAL;
        dir_fd = trusted_dir_open(dir, why, sizeof(why));
        if (dir_fd < 0) {
                log_error("coordinator: refusing socket directory %s: %s", dir, why);
                return dir_fd;
        }
        /* Only a socket of ours (an earlier leader's on this host) is
         * replaced; anything else at the path is left alone. */
        r = trusted_dir_our_socket(dir_fd, name);
        if (r == -EEXIST)
                log_error("coordinator: %s exists and is not a socket of ours", path);
        if (r > 0 && unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
                r = -errno;
        if (r < 0)
                goto out;
        /* Bound through the checked directory's descriptor, not the path. */
        if ((size_t) snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dir_fd, name) >=
            sizeof(sa.sun_path)) {
                r = -ENAMETOOLONG;
                goto out;
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                r = -errno;
                goto out;
        }
        /* Anyone may connect; SO_PEERCRED decides who is served. */
        r = open_to_everyone(dir_fd, name);
        if (r >= 0 && listen(fd, LISTEN_BACKLOG) < 0)
                r = -errno;
        if (r < 0 && trusted_dir_our_socket(dir_fd, name) > 0)
                (void) unlinkat(dir_fd, name, 0);
out:
        if (r < 0 && fd >= 0)
                close(fd);
        close(dir_fd);
        return r < 0 ? r : fd;
}

void listen_unix_remove(const char *path) {
        char dir[PATH_MAX], why[PATH_MAX + 128];
        const char *name;
        int dir_fd;

        if (!path || trusted_dir_split(path, dir, sizeof(dir), &name) < 0)
                return;
        dir_fd = trusted_dir_open(dir, why, sizeof(why));
        if (dir_fd < 0)
                return;
        if (trusted_dir_our_socket(dir_fd, name) > 0)
                (void) unlinkat(dir_fd, name, 0);
        close(dir_fd);
}

int listen_tcp(const struct coordinator *c) {
        const char *text = c->cfg.tcp_address;
        struct addrinfo *ai = NULL;
        struct address address;
        int fd, r, one = 1;

        r = address_parse(text, ADDRESS_ALLOW_TCP | ADDRESS_NUMERIC_HOST, &address, NULL);
        if (r < 0)
                return r;
        if (!c->cfg.tls && !c->cfg.tcp_insecure) {
                log_error("coordinator: TCP %s needs TLS certificates, or the explicit opt-in to serve "
                          "loopback in the clear", text);
                return -EPERM;
        }
        if (!c->cfg.tls && !address_is_loopback(&address)) {
                log_error("coordinator: refusing to serve %s in the clear: not a loopback address", text);
                return -EPERM;
        }
        r = address_resolve(&address, true, &ai);
        if (r < 0)
                return r;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, LISTEN_TCP_BACKLOG) < 0) {
                r = -errno;
                close(fd);
                goto out;
        }
        r = fd;
out:
        freeaddrinfo(ai);
        return r;
}

int listen_peer_allowed(const struct coordinator *c, int fd, char *why, size_t size) {
        struct ucred cred;
        socklen_t len = sizeof(cred);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        if (cred.uid == 0 || cred.uid == geteuid())
                return 0;
        for (size_t i = 0; i < c->cfg.n_allowed_uids; i++)
                if (c->cfg.allowed_uids[i] == cred.uid)
                        return 0;
        for (size_t i = 0; i < c->cfg.n_allowed_gids; i++)
                if (c->cfg.allowed_gids[i] == cred.gid)
                        return 0;
        snprintf(why, size, "pid %d uid %u gid %u is not allowed", (int) cred.pid,
                 (unsigned) cred.uid, (unsigned) cred.gid);
        return -EPERM;
}

/* "tls 192.0.2.7:41234": the transport and the peer's address, for logs;
 * and its budget key in source: the IPv4 address (also when mapped in
 * IPv6), or the /64 of an IPv6 address, where one host has many. */
static void peer_origin(int fd, const char *transport, char *buf, size_t size, char *source, size_t source_size) {
        struct sockaddr_storage sa = { 0 };
        socklen_t len = sizeof(sa);
        char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";

        snprintf(source, source_size, "?");
        if (getpeername(fd, (struct sockaddr *) &sa, &len) == 0) {
                (void) getnameinfo((struct sockaddr *) &sa, len, host, sizeof(host), port, sizeof(port),
                                   NI_NUMERICHOST | NI_NUMERICSERV);
                if (sa.ss_family == AF_INET6) {
                        struct in6_addr a = ((struct sockaddr_in6 *) &sa)->sin6_addr;
                        if (IN6_IS_ADDR_V4MAPPED(&a))
                                (void) inet_ntop(AF_INET, &a.s6_addr[12], source, (socklen_t) source_size);
                        else {
                                memset(&a.s6_addr[8], 0, 8);
                                (void) inet_ntop(AF_INET6, &a, source, (socklen_t) source_size);
                        }
                } else if (sa.ss_family == AF_INET)
                        (void) inet_ntop(AF_INET, &((struct sockaddr_in *) &sa)->sin_addr, source,
                                         (socklen_t) source_size);
        }
        snprintf(buf, size, strchr(host, ':') ? "%s [%s]:%s" : "%s %s:%s", transport, host, port);
}

/* A TCP newcomer taken off the queue, not yet adopted. */
struct newcomer {
        int fd;
        char origin[64];
        char source[INET6_ADDRSTRLEN];
};

static void adopt(struct coordinator *c, struct newcomer *n) {
        int r = coordinator_adopt_conn(c, n->fd, n->origin, c->cfg.tls, n->source);

        if (r == -EAGAIN)
                coordinator_log_refusal("cannot take a handshake from %s now: its share of the %d handshake "
                                        "places is taken", n->origin, COORDINATOR_PREAUTH_MAX);
        else if (r < 0)
                coordinator_log_refusal("cannot serve a new worker (%s): %s", n->origin, strerror(-r));
}

/* Accepts one connection: false when the queue is empty. A TLS newcomer
 * that would be refused only for being silent so far goes to waiting[]
 * (*n_waiting more), to be adopted by accept_some(). */
static bool accept_one(struct coordinator *c, int listen_fd, bool is_unix, struct newcomer *waiting,
                       size_t *n_waiting) {
        struct newcomer n = { .source = "" };
        char why[128];
        int r;

        n.fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (n.fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED)
                        return true;
                if (errno != EAGAIN)
                        log_warning("coordinator: accept: %s", strerror(errno));
                return false;
        }
        if (is_unix) {
                r = listen_peer_allowed(c, n.fd, why, sizeof(why));
                if (r < 0) {
                        coordinator_log_refusal("refusing a worker: %s", r == -EPERM ? why : strerror(-r));
                        close(n.fd);
                        return true;
                }
                r = coordinator_adopt_conn(c, n.fd, "unix", false, NULL);
                if (r < 0)
                        coordinator_log_refusal("cannot serve a new worker (unix): %s", strerror(-r));
                return true;
        }
        peer_origin(n.fd, c->cfg.tls ? "tls" : "tcp", n.origin, sizeof(n.origin), n.source, sizeof(n.source));
        if (c->cfg.tls && conn_admit_wants_talk(c, n.fd, n.source))
                waiting[(*n_waiting)++] = n;
        else
                adopt(c, &n);
        return true;
}

/* Waits until each of the n newcomers has sent something (or ended), at
 * most TALK_WAIT_MS in all. */
static void wait_for_talk(const struct newcomer *waiting, size_t n) {
        struct pollfd p[ACCEPTS_PER_WAKEUP];
        int64_t deadline = monotonic_ms() + TALK_WAIT_MS, left;
        size_t quiet = n;

        for (size_t i = 0; i < n; i++)
                p[i] = (struct pollfd) { .fd = waiting[i].fd, .events = POLLIN | POLLRDHUP };
        while (quiet && (left = deadline - monotonic_ms()) > 0) {
                if (poll(p, n, (int) left) < 0 && errno != EINTR)
                        return;
                for (size_t i = 0; i < n; i++)
                        if (p[i].fd >= 0 && p[i].revents) {
                                p[i].fd = -1; /* poll() skips it from now on */
                                quiet--;
                        }
        }
}

/* The connections waiting in the kernel's queue of a TCP listener, 0 when
 * unknown. */
static unsigned queued(int listen_fd) {
        struct tcp_info info;
        socklen_t len = sizeof(info);

        memset(&info, 0, sizeof(info));
        if (getsockopt(listen_fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0 ||
            len < offsetof(struct tcp_info, tcpi_unacked) + sizeof(info.tcpi_unacked))
                return 0;
        return info.tcpi_unacked; /* of a listener: its accept queue */
}

static void accept_some(struct coordinator *c, int listen_fd, bool is_unix) {
        struct newcomer waiting[ACCEPTS_PER_WAKEUP];
        size_t n_waiting = 0;

        for (int i = 0; i < ACCEPTS_PER_WAKEUP && accept_one(c, listen_fd, is_unix, waiting, &n_waiting); i++)
                ;
        if (!n_waiting)
                return;
        if (queued(listen_fd) <= TALK_WAIT_QUEUE_MAX)
                wait_for_talk(waiting, n_waiting);
        for (size_t i = 0; i < n_waiting; i++)
                adopt(c, &waiting[i]);
}

void *listener_main(void *userdata) {
        struct coordinator *c = userdata;
        struct pollfd p[3] = {
                { .fd = c->stop_fd, .events = POLLIN },
                { .fd = c->unix_fd, .events = POLLIN },
                { .fd = c->tcp_fd, .events = POLLIN },
        };

        for (;;) {
                int r = poll(p, 3, LISTENER_TICK_MS);
                if (r < 0 && errno != EINTR) {
                        coordinator_fail(c, -errno);
                        break;
                }
                if (p[0].revents)
                        break;
                if (r > 0 && p[1].revents)
                        accept_some(c, c->unix_fd, true);
                if (r > 0 && p[2].revents)
                        accept_some(c, c->tcp_fd, false);
                coordinator_reap_finished(c);
        }
        return NULL;
}
