/* SPDX-License-Identifier: MIT */
/*
 * sdlive-probe: runs a daemon that cannot pet as its child and feeds the
 * systemd watchdog only while its health probes pass (docs/probe.md).
 * This thread owns the daemon: it forwards signals, pets while the probe
 * loop's verdict is healthy, and ends the way the daemon ends.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sdlive.h>

#include "child.h"
#include "cli.h"
#include "config.h"
#include "duration.h"
#include "log.h"
#include "loop.h"
#include "monotonic.h"
#include "printable.h"
#include "supervision.h"

/* How long a daemon whose start failed gets to stop after SIGTERM. */
#define START_FAILED_STOP_USEC (5 * SDLIVE_USEC_PER_SEC)
#define LEFTOVERS_MAX 64
/* The longest single poll() of the main thread (a WatchdogSec of years
 * gives pet intervals past what poll() takes). */
#define POLL_MAX_USEC (UINT64_C(3600) * SDLIVE_USEC_PER_SEC)
#define LEFTOVERS_STOP_USEC SDLIVE_USEC_PER_SEC

typedef struct supervisor {
        const struct probe_config *config;
        sdlive *d;
        probe_loop loop;
        int signal_fd;
        pid_t pid;
        bool stop_forwarded;
} supervisor;

/* Reaps the daemon's descendants that were handed to us and have exited. */
static void reap_leftovers(void) {
        pid_t pids[LEFTOVERS_MAX];
        int n = child_leftovers(0, pids, LEFTOVERS_MAX);

        for (int i = 0; i < n; i++)
                (void) waitpid(pids[i], NULL, WNOHANG);
}

/* SIGTERM to each, SIGKILL to those still there after
 * LEFTOVERS_STOP_USEC; reaps them all. */
static void stop_leftovers(const pid_t *pids, int n) {
        uint64_t deadline = monotonic_usec() + LEFTOVERS_STOP_USEC;

        for (int i = 0; i < n; i++)
                (void) kill(pids[i], SIGTERM);
        for (int i = 0; i < n; i++) {
                while (waitpid(pids[i], NULL, WNOHANG) == 0) {
                        if (monotonic_usec() >= deadline) {
                                (void) kill(pids[i], SIGKILL);
                                (void) waitpid(pids[i], NULL, 0);
                                break;
                        }
                        (void) usleep(10000);
                }
        }
}

/* The daemon ended with status: stop what it left and end the same way;
 * but a first process that exits 0 leaving others has only gone to the
 * background, which sdlive-probe cannot supervise: refused (exit 2). */
static noreturn void daemon_ended(supervisor *s, int status) {
        char command[PRINTABLE_SIZE(128)];
        pid_t pids[LEFTOVERS_MAX];
        int n;

        printable(s->config->command[0], command, sizeof(command));
        reap_leftovers();
        n = child_leftovers(0, pids, LEFTOVERS_MAX);
        if (n > 0 && !s->stop_forwarded && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                log_error("%s went to the background (its process exited with status %d, leaving pid %d): "
                          "sdlive-probe supervises a daemon in the foreground only; run it with its "
                          "foreground option (nginx: -g 'daemon off;', most: --foreground or --no-daemon)",
                          command, WEXITSTATUS(status), (int) pids[0]);
                stop_leftovers(pids, n);
                sdlive_notify_status(s->d, "refused: %s went to the background", command);
                exit(EXIT_USAGE);
        }
        if (n > 0) {
                log_notice("%s (pid %d) ended, leaving %d process(es): stopping them", command, (int) s->pid, n);
                stop_leftovers(pids, n);
        }
        if (WIFSIGNALED(status))
                log_notice("%s (pid %d) killed by signal %s", command, (int) s->pid,
                           sigabbrev_np(WTERMSIG(status)) ?: "?");
        else
                log_info("%s (pid %d) exited with status %d", command, (int) s->pid, WEXITSTATUS(status));
        sdlive_notify_stopping(s->d);
        child_exit_like(status);
}

/* Reads the pending signals: forwards TERM, INT, HUP, USR1, USR2, ABRT to
 * the daemon; on SIGCHLD ends when the daemon has. */
static void handle_signals(supervisor *s) {
        struct signalfd_siginfo si;
        int status;

        while (read(s->signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                int sig = (int) si.ssi_signo;
                if (sig == SIGCHLD) {
                        if (waitpid(s->pid, &status, WNOHANG) == s->pid)
                                daemon_ended(s, status);
                        reap_leftovers();
                        continue;
                }
                if (sig == SIGTERM || sig == SIGINT || sig == SIGABRT) {
                        s->stop_forwarded = true;
                        sdlive_notify_stopping(s->d);
                }
                log_info("forwarding SIG%s to pid %d", sigabbrev_np(sig) ?: "?", (int) s->pid);
                (void) kill(s->pid, sig);
        }
}

/* The start failed: stops the daemon (SIGTERM, then SIGKILL after
 * START_FAILED_STOP_USEC) and exits 1. */
static noreturn void start_failed(supervisor *s) {
        uint64_t deadline = monotonic_usec() + START_FAILED_STOP_USEC;
        int status;

        s->stop_forwarded = true;
        (void) kill(s->pid, SIGTERM);
        for (;;) {
                if (waitpid(s->pid, &status, WNOHANG) == s->pid)
                        break;
                uint64_t now = monotonic_usec();
                if (now >= deadline) {
                        (void) kill(s->pid, SIGKILL);
                        (void) waitpid(s->pid, &status, 0);
                        break;
                }
                struct pollfd pfd = { .fd = s->signal_fd, .events = POLLIN };
                (void) poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
                struct signalfd_siginfo si;
                while (read(s->signal_fd, &si, sizeof(si)) > 0)
                        ;
        }
        sdlive_notify_errno(s->d, ETIMEDOUT);
        exit(EXIT_FAILURE);
}

/* Waits for signals and verdict changes, petting while the verdict is
 * healthy (sdlive_pet_watchdog() rate-limits; it also withholds while
 * the probe loop is stalled). Never returns. */
static noreturn void supervise(supervisor *s) {
        for (;;) {
                enum probe_verdict v = probe_loop_verdict(&s->loop);
                int timeout = -1;

                if (v == VERDICT_START_FAILED)
                        start_failed(s);
                (void) probe_keepalive(s->d, v);
                if (v == VERDICT_HEALTHY) {
                        uint64_t due = sdlive_watchdog_next_due(s->d), now = monotonic_usec();
                        /* The call moved the due time a pet interval on,
                         * whether it sent or withheld (a stalled probe loop):
                         * one wake-up per interval, no spin. */
                        if (due != UINT64_MAX) {
                                uint64_t wait = due > now ? due - now : 0;
                                timeout = (int) (wait < POLL_MAX_USEC ? wait / 1000 + 1 : POLL_MAX_USEC / 1000);
                        }
                }
                struct pollfd pfds[2] = {
                        { .fd = s->signal_fd, .events = POLLIN },
                        { .fd = s->loop.wake_fd, .events = POLLIN },
                };
                if (poll(pfds, 2, timeout) < 0 && errno != EINTR) {
                        log_error("poll: %s", strerror(errno));
                        exit(EXIT_FAILURE);
                }
                if (pfds[1].revents) {
                        uint64_t count;
                        (void) !read(s->loop.wake_fd, &count, sizeof(count));
                }
                if (pfds[0].revents)
                        handle_signals(s);
        }
}

int main(int argc, char **argv) {
        static struct probe_config config;
        char bound[DURATION_FORMAT_MAX];
        struct sigaction pipe_action;
        supervisor s = { .config = &config };
        uint64_t start;
        int r;

        probe_config_parse(argc, argv, &config);
        /* What the daemon would have got without us (systemd: ignored). */
        (void) sigaction(SIGPIPE, NULL, &pipe_action);
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                log_error("cannot initialise libcurl");
                return EXIT_FAILURE;
        }
        /* The daemon is not the one that speaks to the manager. */
        if (supervision_start(&s.d, SDLIVE_UNSET_WATCHDOG_ENV) < 0)
                return EXIT_FAILURE;
        (void) unsetenv("NOTIFY_SOCKET");

        s.signal_fd = child_signals_setup();
        if (s.signal_fd < 0) {
                log_error("cannot set up signal handling: %s", strerror(-s.signal_fd));
                return EXIT_FAILURE;
        }
        start = monotonic_usec();
        s.pid = child_start(config.command_path, config.command,
                            pipe_action.sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
        if (s.pid < 0) {
                log_error("cannot start %s: %s", config.command_path, strerror((int) -s.pid));
                return EXIT_FAILURE;
        }
        log_info("started %s as pid %d; %zu probe(s), failure declared within %s", config.command_path,
                 (int) s.pid, config.n_probes,
                 duration_format(bound, sizeof(bound), probe_config_detection_bound(&config)));
        sdlive_notify_status(s.d, "starting: waiting for every probe to pass");
        r = probe_loop_start(&s.loop, &config, s.d, start);
        if (r < 0) {
                (void) kill(s.pid, SIGTERM);
                return EXIT_FAILURE;
        }
        supervise(&s);
}
