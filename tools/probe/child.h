/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_PROBE_CHILD_H
#define SDLIVE_PROBE_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stdnoreturn.h>
#include <sys/types.h>

/*
 * The daemon as sdlive-probe's child: started with fork() and execv() (no
 * shell), the signals the manager sends forwarded to it, its end turned
 * into ours.
 */

/* The signals forwarded to the daemon: the stop (TERM, INT), the reload
 * and user signals (HUP, USR1, USR2), and the watchdog's (ABRT, systemd's
 * default WatchdogSignal=), which under KillMode=mixed reaches only us. */
extern const int child_forwarded_signals[6];

/* Blocks SIGCHLD and the forwarded signals in the calling thread (threads
 * created after inherit the mask) and returns a signalfd reading them
 * (non-blocking, close-on-exec), or -errno. Also makes this process the
 * subreaper of the daemon's descendants, so that one which goes to the
 * background is seen. */
int child_signals_setup(void);

/* Starts path with argv. In the child: the signal mask emptied, every
 * signal disposition reset except SIGPIPE's, which is set to
 * pipe_disposition (what sdlive-probe itself was started with, SIG_IGN
 * under systemd), dies with SIGKILL when sdlive-probe does. The
 * environment is ours (the notify and watchdog variables already removed
 * by the caller). Returns the pid or -errno (the exec's error when it
 * failed). */
pid_t child_start(const char *path, char *const argv[], void (*pipe_disposition)(int));

/* The pids of this process's direct children other than except, read from
 * /proc (at most max); the count, or -errno. The daemon's descendants that
 * lost their parent are among them (we are their subreaper). */
int child_leftovers(pid_t except, pid_t *pids, int max);

/* Ends this process the way the daemon ended (status from waitpid()): the
 * same exit code, or the same signal raised again (without a second core
 * dump). */
noreturn void child_exit_like(int status);

#endif
