/* SPDX-License-Identifier: MIT */
#include "child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

const int child_forwarded_signals[6] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGABRT };

int child_signals_setup(void) {
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        for (size_t i = 0; i < sizeof(child_forwarded_signals) / sizeof(child_forwarded_signals[0]); i++)
                sigaddset(&mask, child_forwarded_signals[i]);
        if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
                return -EINVAL;
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                return -errno;
        fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* In the child: only async-signal-safe calls until execv(). */
static noreturn void exec_child(const char *path, char *const argv[], void (*pipe_disposition)(int),
                                pid_t parent, int report_fd) {
        sigset_t none;
        int error;

        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) signal(sig, sig == SIGPIPE ? pipe_disposition : SIG_DFL);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != parent) /* sdlive-probe died before the line above */
                _exit(127);
        execv(path, argv);
        error = errno;
        (void) !write(report_fd, &error, sizeof(error));
        _exit(127);
}

pid_t child_start(const char *path, char *const argv[], void (*pipe_disposition)(int)) {
        int report[2], error = 0;
        pid_t parent = getpid(), pid;
        ssize_t n;

        if (pipe2(report, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                error = errno;
                close(report[0]);
                close(report[1]);
                return -error;
        }
        if (pid == 0)
                exec_child(path, argv, pipe_disposition, parent, report[1]);
        close(report[1]);
        /* End of file: the exec succeeded (the pipe closed on exec). */
        do
                n = read(report[0], &error, sizeof(error));
        while (n < 0 && errno == EINTR);
        close(report[0]);
        if (n == (ssize_t) sizeof(error)) {
                (void) waitpid(pid, NULL, 0);
                return -(error > 0 ? error : EIO);
        }
        return pid;
}

int child_leftovers(pid_t except, pid_t *pids, int max) {
        char path[64], buf[4096];
        int fd, count = 0;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int) getpid());
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        for (char *p = buf, *end; *p && count < max; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p)
                        break;
                if (v > 0 && (pid_t) v != except)
                        pids[count++] = (pid_t) v;
        }
        return count;
}

void child_exit_like(int status) {
        if (WIFEXITED(status))
                exit(WEXITSTATUS(status));
        if (WIFSIGNALED(status)) {
                int sig = WTERMSIG(status);
                struct rlimit no_core = { 0, 0 };
                sigset_t mask;

                (void) setrlimit(RLIMIT_CORE, &no_core);
                (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
                (void) signal(sig, SIG_DFL);
                sigemptyset(&mask);
                sigaddset(&mask, sig);
                (void) pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
                (void) raise(sig);
                exit(128 + sig);
        }
        exit(EXIT_FAILURE);
}
