/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_H
#define SDLIVE_H

/*
 * sdlive — systemd-native liveness for C daemons.
 *
 * Conventions (as libsystemd's sd-daemon):
 *   - functions returning int: < 0 is -errno, 0 means nothing was sent or
 *     nothing happened (not supervised, watchdog not armed, not due), > 0
 *     means a message was sent or an event occurred;
 *   - every duration is uint64_t microseconds on CLOCK_MONOTONIC;
 *   - the library never logs, never aborts and never reports through errno;
 *   - arguments are checked before anything else, supervised or not.
 *
 * NULL: no function dereferences a NULL handle or object. A NULL handle
 * stands for a process outside systemd: every call that talks to the
 * manager or reports its state returns what it returns there (0;
 * sdlive_pet_interval() 0; sdlive_watchdog_next_due() UINT64_MAX;
 * sdlive_watchdog_fd() and sdlive_last_pet_age() -ENODATA). A call that
 * needs an object to do its work returns -EINVAL for a NULL one (the
 * handle of sdlive_idle(), sdlive_wait_fd(), sdlive_progress_register(),
 * sdlive_peer_new(); any progress loop, peer, required string or output
 * pointer) — except sdlive_peer_poll_timeout(NULL), which returns 0, as
 * poll() would read any negative timeout as "wait forever". Calls returning
 * void do nothing; the _free/_unregister calls return NULL.
 *
 * Fork: a handle belongs to the process that created it. In any other
 * process (a forked child using its copy) it is unsupervised and unarmed:
 * sdlive_supervised() and sdlive_watchdog_enabled() return 0, pets and
 * notifications return 0 and send nothing, and sdlive_request_stop() stops
 * only that process's own waits. The descriptors it shares with the parent
 * (the sdlive_watchdog_fd() timer, the eventfds that wake sleepers) are
 * left alone: nothing the child does re-arms or wakes the parent's. The check runs where a message would go
 * out (a pet only when due), so a not-due pet costs what it always did.
 * Free the copy in the child, or create a new handle there if the child
 * must speak for the service (it then needs NotifyAccess=all).
 *
 * Threads: every function may be called from any thread unless its comment
 * says otherwise. Only sdlive_request_stop() is async-signal-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SDLIVE_VERSION_MAJOR 0
#define SDLIVE_VERSION_MINOR 2
#define SDLIVE_VERSION_PATCH 0
/* Compile-time version as one comparable number: 0xMMmmpp. */
#define SDLIVE_VERSION \
        ((SDLIVE_VERSION_MAJOR << 16) | (SDLIVE_VERSION_MINOR << 8) | SDLIVE_VERSION_PATCH)

/* Run-time version of the loaded library, "MAJOR.MINOR.PATCH". */
const char *sdlive_version(void);

#define SDLIVE_USEC_PER_MSEC UINT64_C(1000)
#define SDLIVE_USEC_PER_SEC UINT64_C(1000000)

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

typedef struct sdlive sdlive;

enum {
        /* Install SIGTERM and SIGINT handlers that call sdlive_request_stop().
         * At most one handle per process may own them (-EBUSY otherwise);
         * sdlive_free() restores the previous handlers. */
        SDLIVE_HANDLE_SIGNALS = 1u << 0,
        /* Remove WATCHDOG_USEC and WATCHDOG_PID from the environment after
         * reading them, so child processes do not inherit the watchdog.
         * Like unsetenv(), not safe while other threads read the environment. */
        SDLIVE_UNSET_WATCHDOG_ENV = 1u << 1,
        /* When a registered progress loop goes stale, send WATCHDOG=trigger
         * at once instead of waiting for WatchdogSec= to run out. */
        SDLIVE_TRIGGER_ON_STALL = 1u << 2,
};

typedef struct sdlive_options {
        /* sizeof(sdlive_options) as the caller compiled it; lets the struct
         * grow without breaking the ABI. Use SDLIVE_OPTIONS_INIT. */
        size_t size;
        /* SDLIVE_* flags above. */
        uint32_t flags;
        /* Keepalive interval. 0: WATCHDOG_USEC / 6 while armed. Set it to
         * track pets (sdlive_last_pet_age) even outside systemd. At least
         * SDLIVE_PET_INTERVAL_MIN_USEC (-ERANGE otherwise). */
        uint64_t pet_interval_usec;
} sdlive_options;

#define SDLIVE_OPTIONS_INIT { sizeof(sdlive_options), 0, 0 }

/* The shortest pet interval: a shorter one would turn every sdlive_idle()
 * into a spin. Hence the shortest WatchdogSec= armed (6 x 1 ms); a smaller
 * WATCHDOG_USEC is refused (-ERANGE) and the watchdog stays off. */
#define SDLIVE_PET_INTERVAL_MIN_USEC UINT64_C(1000)
#define SDLIVE_WATCHDOG_MIN_USEC (6 * SDLIVE_PET_INTERVAL_MIN_USEC)

/* Creates a handle. Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID once,
 * here. A bad environment does not fail the call: the process then acts as
 * unsupervised or unarmed, and sdlive_supervised() / sdlive_watchdog_enabled()
 * report why. opts may be NULL.
 * Returns 0 or -errno: -EINVAL bad options, -EOPNOTSUPP options from a newer
 * sdlive.h that use fields this library lacks, -ERANGE a pet interval not
 * shorter than the armed WatchdogSec, -EBUSY signals already owned, -ENOMEM,
 * or a socket()/eventfd() error. */
int sdlive_new(sdlive **ret, const sdlive_options *opts);

/* Releases the handle and its descriptors. Accepts NULL; returns NULL.
 * No other thread may use the handle (or its progress loops) meanwhile,
 * with one exception: once a wait returned SDLIVE_WAKE_STOP or
 * sdlive_stopping() returned 1, the sdlive_request_stop() that asked for
 * the stop (from another thread or a signal handler) may still be running,
 * and sdlive_free() waits for it to return before closing anything. */
sdlive *sdlive_free(sdlive *d);

/* > 0 when NOTIFY_SOCKET names a socket address (the process is
 * supervised): an absolute path, an abstract "@name", or "vsock:CID:PORT"
 * (also "vsock-stream:", "vsock-seqpacket:", "vsock-dgram:"; CID decimal or
 * hypervisor/local/host, port decimal, each at most 2^32 - 2). Whether
 * anything listens there shows only when a send fails (-ENOENT or
 * -ECONNREFUSED for a path). 0 when it is unset or empty, or in a process
 * other than the handle's creator. -EINVAL when it is malformed, too long,
 * or a vsock address with no peer (CID empty or 2^32 - 1, port 2^32 - 1),
 * -EAFNOSUPPORT when it is none of these forms (a relative path gives
 * -EAFNOSUPPORT). */
int sdlive_supervised(const sdlive *d);

/* ------------------------------------------------------------------ */
/* Notify                                                              */
/* ------------------------------------------------------------------ */

/* Each sends one datagram to the manager without blocking: > 0 sent,
 * 0 not supervised, < 0 -errno (-EAGAIN when the manager's queue is full). */
int sdlive_notify_ready(sdlive *d);
int sdlive_notify_stopping(sdlive *d);
/* RELOADING=1 with MONOTONIC_USEC= (Type=notify-reload). Follow with
 * sdlive_notify_ready() when the reload is done. */
int sdlive_notify_reloading(sdlive *d);
/* STATUS= of one line: control characters become spaces, the message is cut
 * (on a UTF-8 boundary) to fit one 4096-byte datagram. The text is kept and
 * sent again when a stalled progress loop recovers. */
int sdlive_notify_status(sdlive *d, const char *format, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
/* ERRNO= with a positive errno value. */
int sdlive_notify_errno(sdlive *d, int error);
/* EXTEND_TIMEOUT_USEC=: asks for more start/stop/runtime time. The manager
 * pushes its watchdog deadline back as far, so this is a keepalive too:
 * -EBUSY while a registered progress loop is stalled (see Progress below),
 * -EINVAL for 0. */
int sdlive_notify_extend_timeout(sdlive *d, uint64_t usec);

/* BARRIER=1: returns once the manager has processed every message sent
 * before it (it closes the pipe end sent along; as sd_notify_barrier()).
 * Blocks the calling thread up to timeout_usec (UINT64_MAX: no limit) and
 * does not pet meanwhile. > 0 processed, 0 not supervised, -ETIMEDOUT,
 * -EOPNOTSUPP over vsock (no descriptor passing), or a pipe/send error. */
int sdlive_notify_barrier(sdlive *d, uint64_t timeout_usec);

/* MAINPID=pid: the service's main process is now pid (> 1, else -EINVAL:
 * the manager refuses PID 1). The manager accepts it only from a process it
 * allows (NotifyAccess=), and under NotifyAccess=main then takes messages,
 * keepalives included, only from pid. This handle does not follow: in pid,
 * a forked copy speaks for nobody (see Fork above); create a handle there,
 * and, as WATCHDOG_PID still names the old process, arm its watchdog with
 * sdlive_watchdog_set_timeout(). */
int sdlive_notify_mainpid(sdlive *d, pid_t pid);

/* EXIT_STATUS=status (0..255, else -EINVAL): the exit status the manager
 * records for the service (systemd 254 and later; older ones ignore it). */
int sdlive_notify_exit_status(sdlive *d, int status);

/* Longest D-Bus error name. */
#define SDLIVE_BUS_ERROR_MAX 255

/* BUSERROR=name: a D-Bus error name to go with a failure, e.g.
 * "org.freedesktop.DBus.Error.TimedOut" (systemd 254 and later). name must be
 * a valid D-Bus name: two or more dot-separated elements of [A-Za-z0-9_],
 * none starting with a digit, at most SDLIVE_BUS_ERROR_MAX bytes
 * (-EINVAL otherwise). */
int sdlive_notify_bus_error(sdlive *d, const char *name);

enum {
        SDLIVE_NOTIFY_ACCESS_NONE = 0,
        SDLIVE_NOTIFY_ACCESS_MAIN = 1,
        SDLIVE_NOTIFY_ACCESS_EXEC = 2,
        SDLIVE_NOTIFY_ACCESS_ALL = 3,
};

/* NOTIFYACCESS=none|main|exec|all: changes the unit's NotifyAccess= at run
 * time (systemd 254 and later). access is an SDLIVE_NOTIFY_ACCESS_* value
 * (-EINVAL otherwise). */
int sdlive_notify_access(sdlive *d, int access);

/* KEY=VALUE for a field this library has no call for. key: an uppercase
 * letter or '_' then uppercase letters, digits and '_' (non-empty); value:
 * any bytes but a newline or a carriage return (the manager starts another
 * assignment at either), possibly empty. -EINVAL for a bad key or value,
 * -E2BIG when "KEY=VALUE" exceeds one 4096-byte datagram. The value is sent
 * as given, not cleaned as STATUS= text is.
 * -EPERM, whatever the value, for a field the library sends through a call
 * of its own, so that call's checks cannot be got around (a keepalive the
 * progress gate withholds, a MAINPID= of 1): READY, STOPPING, RELOADING and
 * MONOTONIC_USEC, STATUS, ERRNO, BUSERROR, EXIT_STATUS, NOTIFYACCESS,
 * EXTEND_TIMEOUT_USEC, WATCHDOG (WATCHDOG=1 and WATCHDOG=trigger),
 * WATCHDOG_USEC, MAINPID, MAINPIDFD and MAINPIDFDID, FDSTORE, FDNAME, FDPOLL
 * and FDSTOREREMOVE, BARRIER: use their calls. */
int sdlive_notify_raw(sdlive *d, const char *key, const char *value);

/* ------------------------------------------------------------------ */
/* File descriptor store (FileDescriptorStoreMax= in the unit)         */
/* ------------------------------------------------------------------ */

/* Most descriptors one message can pass (the kernel's SCM_MAX_FD). */
#define SDLIVE_NOTIFY_FDS_MAX 253
/* Longest FDNAME= the manager accepts. */
#define SDLIVE_FDNAME_MAX 255

enum {
        /* FDPOLL=0: the manager keeps the descriptors even when they report
         * POLLHUP/POLLERR (by default it drops a descriptor that does). */
        SDLIVE_FDSTORE_NO_POLL = 1u << 0,
};

/* Hands n_fds descriptors (1..SDLIVE_NOTIFY_FDS_MAX) to the manager's store
 * with SCM_RIGHTS: FDSTORE=1, FDNAME=name, and FDPOLL=0 with
 * SDLIVE_FDSTORE_NO_POLL. After a restart they come back through
 * LISTEN_FDS/LISTEN_FDNAMES. name may be NULL (the manager calls them
 * "stored"); otherwise it must be a valid FDNAME as systemd checks it:
 * 1..SDLIVE_FDNAME_MAX printable ASCII characters (space included), no ':'.
 * The caller's descriptors stay open and theirs to close.
 * > 0 sent (the manager may still refuse them, e.g. FileDescriptorStoreMax=
 * reached), 0 not supervised (no system call), -EINVAL bad arguments (checked
 * first, supervised or not), -EAGAIN manager queue full, or a sendmsg()
 * error such as -EBADF. */
int sdlive_notify_fdstore(sdlive *d, const int *fds, size_t n_fds, const char *name,
                          unsigned flags);

/* FDSTOREREMOVE=1 with FDNAME=name: the manager closes every stored
 * descriptor of that name. name is required and validated as above.
 * > 0 sent, 0 not supervised, -EINVAL bad name, or a send error. */
int sdlive_notify_fdstore_remove(sdlive *d, const char *name);

/* ------------------------------------------------------------------ */
/* Watchdog                                                            */
/* ------------------------------------------------------------------ */

/* > 0 and *ret_usec = WatchdogSec when armed; 0 when not armed
 * (WATCHDOG_USEC unset, WATCHDOG_PID names another process, not supervised,
 * or called in a process other than the handle's creator);
 * -EINVAL when WATCHDOG_USEC or WATCHDOG_PID was malformed, zero or
 * negative; -ERANGE when WATCHDOG_USEC overflowed, was "infinity" or was
 * below SDLIVE_WATCHDOG_MIN_USEC. Digits only: no sign, blank or suffix.
 * ret_usec may be NULL. */
int sdlive_watchdog_enabled(const sdlive *d, uint64_t *ret_usec);

/* Sends WATCHDOG=1 if a keepalive is due. Call it as often as you like from
 * any thread: across all threads at most one keepalive goes out per pet
 * interval. When not due it costs one clock read and a compare: a
 * CLOCK_MONOTONIC_COARSE read when the interval is at least 100 times that
 * clock's resolution (400 ms at the usual 4 ms), with the precise clock
 * read in the last 4 resolutions before each deadline, so the coarse clock
 * makes a keepalive late only if a kernel tick is itself that late;
 * otherwise a CLOCK_MONOTONIC read.
 * While a registered progress loop is stalled the keepalive is withheld
 * (returns 0). Not async-signal-safe. */
int sdlive_pet_watchdog(sdlive *d);

/* Asks the manager to act as if the watchdog ran out (WATCHDOG=trigger). */
int sdlive_watchdog_trigger(sdlive *d);

/* Sends WATCHDOG_USEC= (arming the watchdog at that timeout) and, unless the
 * pet interval was overridden, re-derives it as usec / 6.
 * -EINVAL for 0 or UINT64_MAX, -ERANGE below SDLIVE_WATCHDOG_MIN_USEC or not
 * longer than an overridden interval. The manager restarts its timer on
 * this message, so it is a keepalive too: -EBUSY, nothing sent, while a
 * registered progress loop is stalled. */
int sdlive_watchdog_set_timeout(sdlive *d, uint64_t usec);

/* Current pet interval; 0 when pets are not tracked. */
uint64_t sdlive_pet_interval(const sdlive *d);

/* CLOCK_MONOTONIC time at which the next keepalive is due; UINT64_MAX when
 * pets are not tracked. */
uint64_t sdlive_watchdog_next_due(const sdlive *d);

/* A timerfd that polls readable when a keepalive is due, for daemons with
 * their own poll/epoll loop: when it is readable, call sdlive_pet_watchdog(),
 * which re-arms it. Owned by the handle (do not close it). -ENODATA when pets
 * are not tracked. */
int sdlive_watchdog_fd(sdlive *d);

/* Age of the last healthy keepalive (sent, or due while unarmed but tracked),
 * in *ret_usec. Lets a helper thread see that the main loop has stalled: the
 * age grows while nothing pets, and while a progress loop is stalled.
 * Exact to within one pet interval. -ENODATA when pets are not tracked. */
int sdlive_last_pet_age(const sdlive *d, uint64_t *ret_usec);

/* ------------------------------------------------------------------ */
/* Idle and stop                                                       */
/* ------------------------------------------------------------------ */

enum {
        SDLIVE_WAKE_TIMEOUT = 0, /* the full time has passed */
        SDLIVE_WAKE_STOP = 1,    /* a stop was requested */
        SDLIVE_WAKE_FD = 2,      /* the fd is ready (sdlive_wait_fd only) */
};

/* Sleeps for usec, petting the watchdog whenever a keepalive is due (at
 * once when a stalled progress loop beats again) and waking for nothing
 * else: no fixed tick. Returns SDLIVE_WAKE_TIMEOUT, or
 * SDLIVE_WAKE_STOP within a millisecond of a stop request (at once if one is
 * already pending), or -errno. UINT64_MAX sleeps until stopped. */
int sdlive_idle(sdlive *d, uint64_t usec);

/* As sdlive_idle(), but also returns SDLIVE_WAKE_FD as soon as fd polls
 * ready for events (POLLIN, POLLOUT, ...; POLLHUP/POLLERR count as ready).
 * -EINVAL for fd < 0, -EBADF when fd is not open. */
int sdlive_wait_fd(sdlive *d, int fd, short events, uint64_t usec);

/* Requests a stop: wakes every sdlive_idle()/sdlive_wait_fd() now and later.
 * In a forked child, only that process's own waits (they see the request
 * when they next wake; the parent is not stopped). A stop requested in the
 * parent also ends the waits of a child using its copy (they return
 * SDLIVE_WAKE_STOP; the child's sdlive_stopping() stays 0). Async-signal-safe.
 * Returns 0. */
int sdlive_request_stop(sdlive *d);

/* > 0 once a stop was requested. */
int sdlive_stopping(const sdlive *d);

/* ------------------------------------------------------------------ */
/* Progress: keepalives only while every registered loop moves         */
/* ------------------------------------------------------------------ */

typedef struct sdlive_progress sdlive_progress;

/* Maximum number of progress loops registered on one handle at a time. */
#define SDLIVE_PROGRESS_MAX 32
/* Longest name kept (longer names are cut). */
#define SDLIVE_PROGRESS_NAME_MAX 31

/* While a registered, unparked loop is silent past its limit, no keepalive
 * reaches the manager by any call: sdlive_pet_watchdog() withholds
 * WATCHDOG=1, sdlive_watchdog_set_timeout() and
 * sdlive_notify_extend_timeout() return -EBUSY, and sdlive_notify_raw()
 * refuses these fields (-EPERM). Park or unregister a loop that stops
 * moving on purpose (while stopping, say). */

/* Registers a loop that must beat at least every max_silence_usec. It starts
 * as just beaten. -EINVAL bad arguments, -ENOSPC SDLIVE_PROGRESS_MAX loops
 * already registered. */
int sdlive_progress_register(sdlive *d, const char *name, uint64_t max_silence_usec,
                             sdlive_progress **ret);

/* Proves the loop moved: one clock read and an atomic store. Any thread. */
void sdlive_progress_beat(sdlive_progress *p);

/* The loop is legitimately waiting (for work, for a peer) and must not be
 * taken for stalled until its next beat. */
void sdlive_progress_park(sdlive_progress *p);

/* Unregisters the loop; p must not be used afterwards. A check running
 * concurrently sees the loop either registered or gone, never half.
 * Accepts NULL; returns NULL. */
sdlive_progress *sdlive_progress_unregister(sdlive_progress *p);

/* Time since the loop's last beat (parked or not) in *ret_usec. Returns
 * > 0 while parked, 0 while beating, -EINVAL for NULL. */
int sdlive_progress_age(const sdlive_progress *p, uint64_t *ret_usec);

/* > 0 while some registered loop is silent past its limit (keepalives are
 * being withheld), with its name copied to name (size bytes) when non-NULL. */
int sdlive_progress_stalled(sdlive *d, char *name, size_t size);

/* ------------------------------------------------------------------ */
/* Peer liveness: inactivity deadline and heartbeat schedule           */
/* ------------------------------------------------------------------ */

typedef struct sdlive_peer sdlive_peer;

/* Defaults used when 0 is passed to sdlive_peer_new(). Rule: send heartbeats
 * at most every third of the peer's timeout. */
#define SDLIVE_PEER_TIMEOUT_DEFAULT_USEC (30 * SDLIVE_USEC_PER_SEC)
#define SDLIVE_HEARTBEAT_INTERVAL_DEFAULT_USEC (10 * SDLIVE_USEC_PER_SEC)

/* A connection's liveness state: the peer counts as dead once nothing was
 * received from it for timeout_usec; we owe it a frame every
 * heartbeat_usec (UINT64_MAX: we never heartbeat); 0 picks the defaults.
 * Both windows start now. The two values belong to different ends (the
 * peer's timeout governs our heartbeats), so they are not checked against
 * each other. Returns 0, -EINVAL (NULL d or ret) or -ENOMEM.
 * Threads: unlike the handle, a peer belongs to one connection loop: its
 * calls must not overlap (serialize them if threads share it). It reads
 * the handle's clock, so it must be freed before the handle. */
int sdlive_peer_new(sdlive *d, uint64_t timeout_usec, uint64_t heartbeat_usec,
                    sdlive_peer **ret);

/* Releases the peer state. Accepts NULL; returns NULL. */
sdlive_peer *sdlive_peer_free(sdlive_peer *p);

/* A frame arrived from the peer: restarts the inactivity window. Only
 * received frames do; nothing we send proves the peer is alive. */
void sdlive_peer_received(sdlive_peer *p);

/* We sent a frame: restarts the heartbeat schedule. */
void sdlive_peer_sent(sdlive_peer *p);

/* > 0 when the peer has been silent for the whole window. */
int sdlive_peer_expired(const sdlive_peer *p);

/* > 0 when a heartbeat is due to the peer. */
int sdlive_peer_heartbeat_due(const sdlive_peer *p);

/* Milliseconds (rounded up) until the earlier of the inactivity deadline and
 * the next heartbeat: the poll() timeout for this iteration. 0 when one of
 * them is already due. */
int sdlive_peer_poll_timeout(const sdlive_peer *p);

#ifdef __cplusplus
}
#endif

#endif /* SDLIVE_H */
