/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "monotonic.h"
#include "probes.h"

extern char **environ;

static int pidfd_open_(pid_t pid) {
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

/* Waits for pid until deadline; 0 with its status, -ETIMEDOUT, or -errno. */
static int wait_until(pid_t pid, uint64_t deadline, int *status) {
        int fd = pidfd_open_(pid), r = -ETIMEDOUT;

        if (fd < 0)
                return -errno;
        for (;;) {
                uint64_t now = monotonic_usec();
                struct pollfd pfd = { .fd = fd, .events = POLLIN };

                if (now >= deadline)
                        break;
                int n = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
                if (n < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                if (n > 0) {
                        r = waitpid(pid, status, 0) == pid ? 0 : -errno;
                        break;
                }
        }
        close(fd);
        return r;
}

bool probe_run_exec(const struct probe_spec *p, char *error, size_t size) {
        uint64_t deadline = monotonic_usec() + p->s.timeout_usec;
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        sigset_t none, all;
        pid_t pid;
        int r, status = 0;

        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawnattr_init(&attr);
        /* Its own process group, so that a timeout kills what it started too. */
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        r = posix_spawn(&pid, p->argv[0], &actions, &attr, p->argv, environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&actions);
        if (r != 0) {
                snprintf(error, size, "cannot run %s: %s", p->argv[0], strerror(r));
                return false;
        }

        r = wait_until(pid, deadline, &status);
        if (r < 0) {
                (void) kill(-pid, SIGKILL);
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, &status, 0);
                if (r == -ETIMEDOUT)
                        snprintf(error, size, "timed out, killed");
                else
                        snprintf(error, size, "waiting for it: %s", strerror(-r));
                return false;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return true;
        if (WIFEXITED(status))
                snprintf(error, size, "exited with status %d", WEXITSTATUS(status));
        else
                snprintf(error, size, "killed by signal %s", sigabbrev_np(WTERMSIG(status)) ?: "?");
        return false;
}
