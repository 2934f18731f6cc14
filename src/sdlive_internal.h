/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_INTERNAL_H
#define SDLIVE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <linux/vm_sockets.h>
#include <time.h>

#include "clock.h"
#include "sdlive.h"

/* Marks a definition as part of the ABI; everything else stays hidden. */
#define SDLIVE_EXPORT __attribute__((visibility("default")))

/* What systemd reads of one notification datagram. */
#define SDLIVE_NOTIFY_MAX 4096
/* Longest wait for a vsock connection to the manager. */
#define SDLIVE_VSOCK_CONNECT_MSEC 100

/* The coarse clock serves the not-due test only for intervals at least this
 * many times its resolution (4 ms ticks: intervals of 400 ms and more). */
#define SDLIVE_COARSE_FACTOR 100
/* How many resolutions the coarse clock may lag before a not-due answer
 * could be wrong; the precise clock is read within that of each deadline. */
#define SDLIVE_COARSE_SLACK 4

/* next_due value meaning "pets are not tracked". */
#define SDLIVE_NOT_TRACKED UINT64_MAX
/* Set in a progress loop's last_beat while it is parked; the other bits
 * keep the time of its last beat. */
#define SDLIVE_PARKED (UINT64_C(1) << 63)

/* Where notifications go (notify_address.c). */
typedef struct sdlive_notify_address {
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
                struct sockaddr_vm vm;
        };
        socklen_t len;
        /* AF_VSOCK: the socket type the address fixes, or 0 for
         * SOCK_SEQPACKET falling back to SOCK_STREAM. */
        int vsock_type;
} sdlive_notify_address;

struct sdlive_progress {
        sdlive *owner;
        _Atomic uint64_t last_beat;  /* clock time of the last beat | SDLIVE_PARKED */
        uint64_t max_silence_usec;
        bool in_use;                 /* guarded by owner->progress_lock */
        char name[SDLIVE_PROGRESS_NAME_MAX + 1];
};

/* The handle. Fields are grouped by the file that owns them: only that
 * file writes them (sdlive.c sets each group's "nothing to release" state
 * before the first step that can fail); another file reads one only where
 * its group's comment says. */
struct sdlive {
        /* Handle (sdlive.c). */
        uint32_t flags;
        /* The process that created the handle: the only one that speaks for
         * the service (a forked child's copy is unsupervised). */
        pid_t pid;

        /* Clock (clock.c). NULL ops: CLOCK_MONOTONIC and ppoll(). Read by
         * every file through sdlive_now() and sdlive_clock_poll(). */
        const sdlive_clock_ops *clock_ops;
        void *clock_userdata;

        /* Notify socket (notify.c). An AF_UNIX address has one datagram
         * socket, notify_fd; an AF_VSOCK one gets a connection per message.
         * notify_addr.un.sun_family 0 (AF_UNSPEC): not supervised. */
        int notify_fd;
        int notify_error; /* why NOTIFY_SOCKET was unusable, or 0 */
        sdlive_notify_address notify_addr;

        /* Watchdog (watchdog.c): the pet's rate limit and the due path.
         * schedule.c reads next_due and sets it to 0 ("due now"); clock.c
         * re-bases it and last_pet on a new clock; idle.c sleeps until
         * next_due. */
        int watchdog_error;                /* why WATCHDOG_USEC was refused, or 0 */
        _Atomic bool armed;
        bool interval_overridden;
        /* A stall was reported (STATUS=) and keepalives are withheld until
         * a due pet finds every loop moving again. */
        _Atomic bool stall_reported;
        /* next_due and coarse_slack are all a not-due pet reads: side by
         * side in 16 aligned bytes, so in one cache line (asserted below). */
        _Atomic uint64_t next_due;         /* SDLIVE_NOT_TRACKED when untracked */
        /* > 0: the not-due test reads CLOCK_MONOTONIC_COARSE with this
         * slack (SDLIVE_COARSE_SLACK resolutions); 0: the precise clock on
         * every pet. */
        _Atomic uint64_t coarse_slack;
        _Atomic uint64_t pet_interval;
        _Atomic uint64_t last_pet;         /* time of the last healthy pet */
        _Atomic uint64_t watchdog_usec;

        /* Schedule (schedule.c): what tells a waiter a keepalive is due.
         * idle.c polls wake_fd through sdlive_schedule_wake_fd(). */
        _Atomic int timer_fd;              /* timerfd following next_due, -1 before */
        pthread_mutex_t timer_lock;
        /* eventfd that wakes sleepers when a keepalive became due early;
         * consumed by the due pet that follows. */
        int wake_fd;
        _Atomic bool wake_pending;

        /* Stop (idle.c). */
        int stop_fd;                       /* eventfd, readable once stopping */
        volatile _Atomic int stop_requested;
        /* sdlive_request_stop() calls between their first and last touch of
         * the handle; sdlive_free() waits for 0. */
        _Atomic unsigned stop_calls;

        /* Progress (progress.c). */
        pthread_mutex_t progress_lock;
        /* The loop the last check found stalled, or NULL; its next beat
         * makes a keepalive due at once. Written under progress_lock. */
        struct sdlive_progress *_Atomic stalled_loop;
        struct sdlive_progress loops[SDLIVE_PROGRESS_MAX];

        /* Notify status (notify.c): the last STATUS= text the daemon set,
         * re-sent when a stalled loop recovers. Last: 4 KiB, and written by
         * the daemon's threads, away from the fields the pet reads. */
        pthread_mutex_t status_lock;
        char status[SDLIVE_NOTIFY_MAX];
};

_Static_assert(offsetof(struct sdlive, next_due) % 16 == 0 &&
                       offsetof(struct sdlive, coarse_slack) == offsetof(struct sdlive, next_due) + 8,
               "the not-due pet's two fields share one cache line");

/* clock.c: poll(2) on the handle's clock. */
int sdlive_clock_poll(const sdlive *d, struct pollfd *fds, nfds_t n, uint64_t timeout_usec);

/* sdlive.c: true in the process that created d. A system call (getpid()),
 * so kept off the not-due pet path. */
bool sdlive_owner(const sdlive *d);

/* notify_address.c: parses NOTIFY_SOCKET. 1 and every field of *out
 * filled (zeroed first); 0 unset or empty; -EAFNOSUPPORT neither an
 * absolute path, "@name" nor a vsock address; -EINVAL malformed or too
 * long, or a vsock address naming no peer (CID empty or VMADDR_CID_ANY,
 * port VMADDR_PORT_ANY). Other than 1: *out all zero (len 0, AF_UNSPEC). */
int sdlive_notify_parse_address(const char *env, sdlive_notify_address *out);

/* notify.c */
/* true when d may send: supervised and used by the process that created it. */
bool sdlive_notify_usable(const sdlive *d);
int sdlive_notify_open(sdlive *d, const char *socket_env);
void sdlive_notify_close(sdlive *d);
/* Sends msg as one datagram without blocking: 1 sent, 0 unsupervised, -errno. */
int sdlive_notify_send(sdlive *d, const char *msg, size_t len);
/* Sends the daemon's last sdlive_notify_status() text again, if it set one:
 * as sdlive_notify_send(), 0 when there is none. */
int sdlive_notify_resend_status(sdlive *d);
/* As sdlive_notify_send(), passing n_fds descriptors (at most
 * SDLIVE_NOTIFY_FDS_MAX) with SCM_RIGHTS. */
int sdlive_notify_send_fds(sdlive *d, const char *msg, size_t len, const int *fds, size_t n_fds);
/* status.c: builds "STATUS=<text>" with text made one valid UTF-8 line that
 * fits one datagram: control characters become spaces, bytes of invalid
 * UTF-8 '?', the text is cut on a character boundary. Returns the message
 * length. out must hold SDLIVE_NOTIFY_MAX + 1. */
size_t sdlive_status_message(char *out, const char *text);

/* notify_fields.c: a D-Bus error name (two or more elements); a raw
 * KEY=VALUE's arguments (0, -EINVAL, -EPERM for a field the library has a
 * call for, or -E2BIG). */
bool sdlive_bus_error_valid(const char *name);
int sdlive_notify_raw_check(const char *key, const char *value);

/* fdstore.c: FDNAME= as the manager accepts it (non-empty). */
bool sdlive_fdname_valid(const char *name);

/* env.c: 0 armed for *usec; 1 not for this process (WATCHDOG_USEC unset,
 * or WATCHDOG_PID is not self); < 0 refused: -EINVAL malformed, zero or
 * negative, -ERANGE overflowing, "infinity", UINT64_MAX or below
 * SDLIVE_WATCHDOG_MIN_USEC (whose interval would make every sleep spin). */
int sdlive_watchdog_parse_env(const char *usec_env, const char *pid_env, pid_t self,
                              uint64_t *usec);

/* watchdog.c */
int sdlive_watchdog_init(sdlive *d, uint64_t pet_interval_override);
/* The handle's clock was replaced (clock.c). */
void sdlive_watchdog_clock_changed(sdlive *d);
/* true while a registered progress loop is stalled: the keepalives it
 * withholds must not reach the manager as another message either
 * (WATCHDOG_USEC= and EXTEND_TIMEOUT_USEC= restart or push back its timer). */
bool sdlive_keepalive_withheld(sdlive *d);

/* schedule.c */
/* Creates the wake-up eventfd: 0 or -errno. */
int sdlive_schedule_init(sdlive *d);
void sdlive_schedule_done(sdlive *d);
/* Points the timerfd, if one was created, at next_due (disarmed when
 * untracked). In a forked child: nothing. */
void sdlive_schedule_rearm(sdlive *d);
/* Makes a keepalive due now (while tracked): the timerfd and every thread
 * sleeping in sdlive_idle()/sdlive_wait_fd() see it at once. */
void sdlive_schedule_hasten(sdlive *d);
/* The descriptor a sleeper polls: readable once a keepalive became due
 * earlier than it went to sleep for. */
int sdlive_schedule_wake_fd(const sdlive *d);
/* The due pet took the keepalive: consumes a pending early wake-up. */
void sdlive_schedule_drain(sdlive *d);

/* idle.c */
int sdlive_stop_init(sdlive *d);
void sdlive_stop_done(sdlive *d);

/* progress.c */
void sdlive_progress_init(sdlive *d);
void sdlive_progress_done(sdlive *d);
/* A stalled progress loop, as the check found it. */
typedef struct sdlive_stall {
        char name[SDLIVE_PROGRESS_NAME_MAX + 1];
        uint64_t silence_usec; /* since its last beat */
        uint64_t limit_usec;   /* its max_silence_usec */
} sdlive_stall;
/* On the due-pet path: true when a registered, unparked loop has been
 * silent past its limit at now, with every field of *ret describing the
 * one of longest overrun; false when every loop moves (*ret untouched). Remembers that loop (or none) as
 * stalled_loop, whose next beat makes a keepalive due at once. Sends
 * nothing. */
bool sdlive_progress_check(sdlive *d, uint64_t now, sdlive_stall *ret);

/* The handle's time: the hot path of every pet, so the real clock is a
 * direct vDSO call and only an injected clock costs an indirect one. */
static inline uint64_t sdlive_now(const sdlive *d) {
        if (__builtin_expect(d->clock_ops != NULL, 0))
                return d->clock_ops->now(d->clock_userdata);
        return sdlive_clock_monotonic_usec();
}

/* CLOCK_MONOTONIC_COARSE in microseconds: the same time base as
 * CLOCK_MONOTONIC, behind it by less than its resolution. */
static inline uint64_t sdlive_clock_coarse_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return (uint64_t) ts.tv_sec * SDLIVE_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* Saturating helpers for microsecond arithmetic. */
static inline uint64_t sdlive_usec_add(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
static inline uint64_t sdlive_usec_sub(uint64_t a, uint64_t b) {
        return a > b ? a - b : 0;
}

#endif
