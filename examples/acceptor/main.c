/* SPDX-License-Identifier: MIT */
/*
 * sdlive-acceptor: an event-driven daemon that sits in poll() on a unix
 * socket and answers "ping" with "pong". It never pets the watchdog — an
 * idle acceptor legitimately blocks forever — so its unit must not arm
 * WatchdogSec=. SIGTERM/SIGINT arrive on a signalfd in the same poll().
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sdlive.h>

#include "cli.h"
#include "clients.h"
#include "listener.h"
#include "log.h"
#include "supervision.h"

#define STATUS_PERIOD_USEC SDLIVE_USEC_PER_SEC

static void usage(void) {
        printf("Usage: %s [OPTION]...\n"
               "Answer \"ping\" with \"pong\" on a unix stream socket, one request per line.\n"
               "Never pets the watchdog: do not arm WatchdogSec= for it.\n"
               "\n"
               "  --socket PATH   the socket to listen on, absolute (default:\n"
               "                  $RUNTIME_DIRECTORY/acceptor.sock; its directory must exist)\n"
               "  -h, --help      show this help and exit\n"
               "  -V, --version   show the version and exit\n"
               "\n"
               "Exit status: 0 success or stopped by SIGTERM/SIGINT, 1 failure, 2 bad usage.\n",
               program_invocation_short_name);
}

/* Returns the socket path, malloc()ed. */
static char *parse_options(int argc, char **argv) {
        enum { OPT_SOCKET = 0x100 };
        static const struct option options[] = {
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const char *socket_path = NULL;
        struct address address;
        char *path = NULL;
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hV", options, NULL)) >= 0) {
                switch (c) {
                case OPT_SOCKET:
                        cli_address("--socket", optarg, ADDRESS_ALLOW_UNIX, &address);
                        socket_path = optarg;
                        break;
                default:
                        cli_common_option(c, argc, argv, usage);
                }
        }
        cli_no_operands(argc, argv);

        if (socket_path)
                path = strdup(socket_path);
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

static uint64_t monotonic_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SDLIVE_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
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

static void accept_clients(int listen_fd, clients *c, uint64_t now) {
        while (c->connected < CLIENTS_MAX) {
                int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                log_warning("accept: %s", strerror(errno));
                        return;
                }
                clients_add(c, fd, now);
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

/* The event loop; returns the exit status once a stop signal arrives. */
static int serve(sdlive *d, int signal_fd, int listen_fd, const char *path) {
        struct pollfd fds[2 + CLIENTS_MAX];
        uint64_t reported = UINT64_MAX, next_status = 0, next_expiry = UINT64_MAX;
        clients c;

        clients_init(&c);
        for (;;) {
                uint64_t now = monotonic_usec();
                uint64_t deadline = next_expiry;

                /* STATUS= at most once per period, and only when it changed. */
                if (c.requests != reported) {
                        if (now >= next_status) {
                                sdlive_notify_status(d, "listening on %s; %llu requests served, %u clients connected",
                                                     path, (unsigned long long) c.requests, c.connected);
                                reported = c.requests;
                                next_status = now + STATUS_PERIOD_USEC;
                        } else if (next_status < deadline)
                                deadline = next_status;
                }

                fds[0] = (struct pollfd) { .fd = signal_fd, .events = POLLIN };
                /* A full house leaves newcomers in the backlog until a slot frees. */
                fds[1] = (struct pollfd) { .fd = c.connected < CLIENTS_MAX ? listen_fd : -1, .events = POLLIN };
                unsigned n = clients_pollfds(&c, fds + 2);

                if (poll(fds, 2 + n, poll_timeout_ms(now, deadline)) < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error("poll: %s", strerror(errno));
                        clients_close_all(&c);
                        return EXIT_FAILURE;
                }
                now = monotonic_usec();
                if (fds[0].revents) {
                        struct signalfd_siginfo si;
                        if (read(signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                                log_info("%s received, exiting", strsignal((int) si.ssi_signo));
                                clients_close_all(&c);
                                return EXIT_SUCCESS;
                        }
                }
                clients_dispatch(&c, fds + 2, n, now);
                if (fds[1].revents)
                        accept_clients(listen_fd, &c, now);
                next_expiry = clients_expire(&c, now);
        }
}

/* Serves on path until stopped; returns the exit status. */
static int run(const char *path) {
        char *dir = strdup(path);
        int signal_fd, listen_fd, status;
        sdlive *d;

        if (!dir) {
                log_error("out of memory");
                return EXIT_FAILURE;
        }
        int r = cli_require_dir("socket directory", dirname(dir));
        free(dir);
        if (r < 0)
                return EXIT_FAILURE;

        signal_fd = open_signalfd();
        /* No SDLIVE_HANDLE_SIGNALS and no sdlive_idle()/sdlive_wait_fd(): the
         * handle only talks to the manager, it never pets. */
        if (supervision_start(&d, 0) < 0)
                return EXIT_FAILURE;
        if (sdlive_watchdog_enabled(d, NULL) > 0)
                log_warning("the watchdog is armed but this daemon never pets: systemd will kill it; "
                            "remove WatchdogSec= from its unit");

        listen_fd = listener_open(path);
        if (listen_fd < 0) {
                sdlive_notify_errno(d, -listen_fd);
                sdlive_free(d);
                return EXIT_FAILURE;
        }
        log_info("listening on %s", path);
        sdlive_notify_status(d, "listening on %s; 0 requests served", path);
        sdlive_notify_ready(d);

        status = serve(d, signal_fd, listen_fd, path);

        sdlive_notify_stopping(d);
        close(listen_fd);
        if (unlink(path) < 0 && errno != ENOENT)
                log_warning("cannot remove %s: %s", path, strerror(errno));
        close(signal_fd);
        sdlive_free(d);
        return status;
}

int main(int argc, char **argv) {
        char *path = parse_options(argc, argv);
        int status = run(path);

        free(path);
        return status;
}
