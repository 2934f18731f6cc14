/* SPDX-License-Identifier: MIT */
/*
 * sdlive-acceptor: an event-driven daemon that sits in poll() on a unix
 * socket and answers "ping" with "pong". It never pets the watchdog — an
 * idle acceptor legitimately blocks forever — so its unit must not arm
 * WatchdogSec=. SIGTERM/SIGINT arrive on a signalfd in the same poll().
 *
 * A restart drops nothing: the listening socket comes from its socket unit
 * (LISTEN_FDS) when there is one, and every client connection is kept in the
 * manager's FD store and taken back by the next process (fdstore.h). On
 * SIGTERM it leaves its connections to the store.
 */
#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sdlive.h>

#include "cli.h"
#include "clients.h"
#include "fault.h"
#include "fdstore.h"
#include "listener.h"
#include "log.h"
#include "supervision.h"
#include "monotonic.h"

#define STATUS_PERIOD_USEC SDLIVE_USEC_PER_SEC
/* How soon to retry the FD store when the manager's queue was full. */
#define FDSTORE_RETRY_USEC SDLIVE_USEC_PER_MSEC

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Answer \"ping\" with \"pong\" on a unix stream socket, one request per line.\n"
               "Never pets the watchdog: do not arm WatchdogSec= for it.\n"
               "\n"
               "  --socket PATH   the socket to listen on, absolute, when the manager passes\n"
               "                  none (default: $RUNTIME_DIRECTORY/acceptor.sock; its\n"
               "                  directory must exist)\n",
               program_invocation_short_name);
        cli_usage_help_version(16);
        printf("\n"
               "A listening socket passed by the manager under the name \"listen\"\n"
               "(sdlive-acceptor.socket) is used instead of --socket. Client connections\n"
               "are kept in the manager's FD store across restarts.\n"
               "Fault injection: once the file named by $SDLIVE_WEDGE_FILE exists, the main\n"
               "loop hangs; once the file named by $SDLIVE_CRASH_FILE exists, the next\n"
               "request crashes the process (SIGSEGV) before it is answered.\n"
               "\n"
               "Exit status: 0 success or stopped by SIGTERM/SIGINT, 1 failure, 2 bad usage.\n");
}

enum { OPT_SOCKET = 0x100 };

static const struct cli_option options[] = {
        { "socket", true, OPT_SOCKET },
};

/* --socket, the only option (id is OPT_SOCKET): *userdata is its value. */
static void set_option(int id, const char *option, const char *value, void *userdata) {
        struct address address;

        cli_address(option, value, ADDRESS_ALLOW_UNIX, &address);
        *(const char **) userdata = value;
}

/* Returns the --socket value, or NULL. */
static const char *parse_options(int argc, char **argv) {
        const char *socket_path = NULL;

        cli_parse(argc, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, &socket_path);
        return socket_path;
}

/* The path to bind: the option, else $RUNTIME_DIRECTORY/acceptor.sock.
 * malloc()ed. Exits on failure. */
static char *socket_path_to_bind(const char *option) {
        char *path = NULL;

        if (option)
                path = strdup(option);
        else {
                char *runtime_dir = cli_systemd_dir("RUNTIME_DIRECTORY");
                if (!runtime_dir)
                        cli_usage_error("no socket path: pass --socket or run with RuntimeDirectory=");
                if (asprintf(&path, "%s/acceptor.sock", runtime_dir) < 0)
                        path = NULL;
                free(runtime_dir);
        }
        if (!path) {
                log_error("out of memory");
                exit(EXIT_FAILURE);
        }
        return path;
}

/* The path a passed listening socket is bound to, for the logs. malloc()ed. */
static char *socket_path_of(int fd) {
        struct sockaddr_un sa = { 0 };
        socklen_t len = sizeof(sa);

        if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0 || sa.sun_family != AF_UNIX ||
            len <= offsetof(struct sockaddr_un, sun_path) || !sa.sun_path[0])
                return strdup("a passed socket");
        return strndup(sa.sun_path, len - offsetof(struct sockaddr_un, sun_path));
}

/* SIGTERM and SIGINT, blocked, as a descriptor. Exits on failure. */
static int open_signalfd(void) {
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
                log_error("cannot set up signal handling: %s", strerror(errno));
                exit(EXIT_FAILURE);
        }
        return fd;
}

/* Accepts while there is room, storing each connection at once: until it
 * is in the store a crash drops it. Returns true while the store lags. */
static bool accept_clients(int listen_fd, clients *c, sdlive *d, uint64_t now) {
        for (;;) {
                int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                log_warning("accept: %s", strerror(errno));
                        return false;
                }
                if (clients_add(c, fd, now) < 0) {
                        /* Cannot happen: poll() only offers the listener while a slot is free. */
                        close(fd);
                        return false;
                }
                if (fdstore_sync(c, d))
                        return true;
        }
}

static int poll_timeout_ms(uint64_t now, uint64_t deadline) {
        if (deadline == UINT64_MAX)
                return -1;
        if (deadline <= now)
                return 0;
        uint64_t ms = (deadline - now + SDLIVE_USEC_PER_MSEC - 1) / SDLIVE_USEC_PER_MSEC;
        return ms > 60000 ? 60000 : (int) ms;
}

static bool room_for_one_more(const clients *c) {
        for (unsigned i = 0; i < CLIENTS_MAX; i++)
                if (c->slots[i].fd < 0 && c->slots[i].store != CLIENT_STORED)
                        return true;
        return false;
}

/* The event loop; returns the exit status once a stop signal arrives. */
static int serve(sdlive *d, int signal_fd, int listen_fd, const char *path, clients *c,
                 const fault_switch *wedge) {
        struct pollfd fds[2 + CLIENTS_MAX];
        uint64_t reported = UINT64_MAX, next_status = 0, next_expiry = UINT64_MAX;
        bool store_lags = fdstore_sync(c, d);

        for (;;) {
                /* The wedge, like the crash switch, waits until every
                 * connection is in the store (see clients_init()). */
                if (!store_lags)
                        fault_switch_check(wedge);
                uint64_t now = monotonic_usec();
                uint64_t deadline = next_expiry;

                if (store_lags && now + FDSTORE_RETRY_USEC < deadline)
                        deadline = now + FDSTORE_RETRY_USEC;

                /* STATUS= at most once per period, and only when it changed. */
                if (c->requests != reported) {
                        if (now >= next_status) {
                                sdlive_notify_status(d, "listening on %s; %llu requests served, %u clients connected",
                                                     path, (unsigned long long) c->requests, c->connected);
                                reported = c->requests;
                                next_status = now + STATUS_PERIOD_USEC;
                        } else if (next_status < deadline)
                                deadline = next_status;
                }

                fds[0] = (struct pollfd) { .fd = signal_fd, .events = POLLIN };
                /* A full house, or a store that lags, leaves newcomers in
                 * the backlog until a slot frees. */
                bool accepting = !store_lags && room_for_one_more(c);
                fds[1] = (struct pollfd) { .fd = accepting ? listen_fd : -1, .events = POLLIN };
                unsigned n = clients_pollfds(c, fds + 2);

                if (poll(fds, 2 + n, poll_timeout_ms(now, deadline)) < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error("poll: %s", strerror(errno));
                        clients_close_all(c);
                        fdstore_sync(c, d);
                        return EXIT_FAILURE;
                }
                now = monotonic_usec();
                if (fds[0].revents) {
                        struct signalfd_siginfo si;
                        if (read(signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                                log_info("%s received, exiting; %u connections %s",
                                         strsignal((int) si.ssi_signo), c->connected,
                                         sdlive_supervised(d) > 0 ? "left to the FD store" : "closed");
                                fdstore_sync(c, d);
                                clients_release_all(c);
                                return EXIT_SUCCESS;
                        }
                }
                clients_dispatch(c, fds + 2, n, now);
                next_expiry = clients_expire(c, now);
                store_lags = fdstore_sync(c, d);
                if (fds[1].revents && !store_lags)
                        store_lags = accept_clients(listen_fd, c, d, now);
        }
}

/* Serves until stopped, on the passed listening socket if any, else on a
 * socket it binds; returns the exit status. */
static int run(inherited *in, const char *socket_option) {
        char *path = NULL;
        bool bound = in->listen_fd < 0;
        int signal_fd, listen_fd = in->listen_fd, status;
        fault_switch wedge;
        clients c;
        sdlive *d;

        if (bound) {
                path = socket_path_to_bind(socket_option);
                char *dir = strdup(path);
                if (!dir) {
                        log_error("out of memory");
                        inherit_release(in);
                        free(path);
                        return EXIT_FAILURE;
                }
                int r = cli_require_dir("socket directory", dirname(dir));
                free(dir);
                if (r < 0) {
                        inherit_release(in);
                        free(path);
                        return EXIT_FAILURE;
                }
        } else {
                path = socket_path_of(listen_fd);
                if (!path) {
                        log_error("out of memory");
                        inherit_release(in);
                        close(listen_fd);
                        return EXIT_FAILURE;
                }
                if (socket_option)
                        log_notice("--socket %s ignored: the manager passed a listening socket", socket_option);
        }

        signal_fd = open_signalfd();
        /* No SDLIVE_HANDLE_SIGNALS and no sdlive_idle()/sdlive_wait_fd(): the
         * handle only talks to the manager, it never pets. */
        if (supervision_start(&d, 0) < 0) {
                inherit_release(in);
                free(path);
                return EXIT_FAILURE;
        }
        if (sdlive_watchdog_enabled(d, NULL) > 0)
                log_warning("the watchdog is armed but this daemon never pets: systemd will kill it; "
                            "remove WatchdogSec= from its unit");
        fault_switch_init(&wedge, "acceptor main loop", NULL, "SDLIVE_WEDGE_FILE");

        if (bound) {
                listen_fd = listener_open(path);
                if (listen_fd < 0) {
                        inherit_release(in);
                        sdlive_notify_errno(d, -listen_fd);
                        sdlive_free(d);
                        free(path);
                        return EXIT_FAILURE;
                }
        }
        clients_init(&c, getenv("SDLIVE_CRASH_FILE"));
        unsigned adopted = inherit_adopt(in, &c, d, monotonic_usec());
        log_info("listening on %s (%s); %u client connections taken back from the FD store", path,
                 bound ? "bound here" : "passed by the manager", adopted);
        sdlive_notify_status(d, "listening on %s; 0 requests served, %u clients connected", path, adopted);
        sdlive_notify_ready(d);

        status = serve(d, signal_fd, listen_fd, path, &c, &wedge);

        sdlive_notify_stopping(d);
        close(listen_fd);
        if (bound && unlink(path) < 0 && errno != ENOENT)
                log_warning("cannot remove %s: %s", path, strerror(errno));
        close(signal_fd);
        sdlive_free(d);
        free(path);
        return status;
}

int main(int argc, char **argv) {
        inherited in;

        /* First of all: the passed descriptors must not be taken for ours. */
        inherit_collect(&in);
        const char *socket_option = parse_options(argc, argv);

        return run(&in, socket_option);
}
