/* SPDX-License-Identifier: MIT */
/*
 * The election on the work store's own lease table (election_backend.h):
 * an attempt is store_lease_acquire_dated() on the main handle, the wait
 * listens for the store's release announcements.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "election.h"
#include "election_backend.h"
#include "log.h"
#include "monotonic.h"

/* The pause after each wake-up of a standby's wait: announcements and
 * other events on its fd (anyone who can write the store can make them)
 * cannot make it attempt, or look, more often than once per this. */
#define ATTEMPT_GAP_MIN_USEC (20 * SDLIVE_USEC_PER_MSEC)
/* Announcement-driven attempts are at least this far apart, whatever the
 * store's channel delivers (a PostgreSQL role that may connect can
 * NOTIFY as often as it likes): at most 10 a second. */
#define ANNOUNCED_ATTEMPT_GAP_USEC (100 * SDLIVE_USEC_PER_MSEC)
/* Attempt this long after the lease's reported expiry (clock granularity). */
#define EXPIRY_SLACK_USEC SDLIVE_USEC_PER_MSEC


/* The main loop's wait hook, for a caller outside a store call (around
 * store_open(), whose connect no hook can reach yet). */
static void run_wait_hook(const struct election *e) {
        if (e->wait_hook && e->wait_hook->fn)
                e->wait_hook->fn(e->wait_hook->userdata);
}

/* The hook of an attempt's store calls: the main loop's, and a beat of
 * the election's progress (a bounded store call is the attempt moving). */
static void attempt_waiting(void *userdata) {
        const struct election *e = userdata;

        run_wait_hook(e);
        if (e->progress)
                sdlive_progress_beat(e->progress);
}

/* Sets the attempt's hook on the main handle (attempting true) or puts
 * the main loop's back. */
static void set_attempt_hook(const struct election *e, bool attempting) {
        struct store_wait_hook hook;

        if (!e->store || !*e->store || !e->wait_hook)
                return;
        hook = *e->wait_hook;
        if (attempting) {
                hook.fn = attempt_waiting;
                hook.userdata = (void *) e;
        }
        if (store_set_wait_hook(*e->store, &hook) < 0)
                log_warning("cannot set the store's wait hook: %s", store_errmsg(*e->store));
}

/* The refresher's handle, before the attempt that may win: a connect is
 * several round trips to the store, which after a win would come out of
 * the term's first lease. Not opened: the refresher opens its own. */
static void open_refresher_store(const struct election *e) {
        int r;

        if (!e->refresher_store || *e->refresher_store)
                return;
        run_wait_hook(e);
        r = store_open(e->store_url, e->refresher_store);
        attempt_waiting((void *) e);
        if (r < 0) {
                log_debug("cannot open the lease refresher's handle yet: %s", store_errmsg(NULL));
                return;
        }
        if (e->refresher_lock_timeout_usec > 0)
                store_set_lock_timeout(*e->refresher_store, e->refresher_lock_timeout_usec);
}

/* After a win: a refresher's handle bound to another incarnation of the
 * store than the lease's would see every refresh refused. */
static void check_refresher_store(const struct election *e) {
        if (!e->refresher_store || !*e->refresher_store ||
            strcmp(store_identity(*e->refresher_store), store_identity(*e->store)) == 0)
                return;
        log_info("the lease refresher's handle is bound to store %s, the lease to %s: reopening it",
                 store_identity(*e->refresher_store), store_identity(*e->store));
        *e->refresher_store = store_close(*e->refresher_store);
}

/* One acquisition attempt. 1 won, 0 lost or store unavailable (*pause set),
 * -errno fatal. */
static int attempt(const struct election *e, struct election_result *ret, unsigned *failures,
                   char *last_holder, uint64_t *pause) {
        char poll_text[DURATION_FORMAT_MAX], wait_text[DURATION_FORMAT_MAX];
        struct store_lease_info info;
        uint64_t generation = 0, dated_after = 0;
        int r;

        if (!*e->store) {
                run_wait_hook(e);
                r = store_open(e->store_url, e->store);
                attempt_waiting((void *) e);
                if (r < 0)
                        goto failed;
                set_attempt_hook(e, true);
                if (e->lock_timeout_usec > 0)
                        store_set_lock_timeout(*e->store, e->lock_timeout_usec);
        } else {
                set_attempt_hook(e, true);
        }

        open_refresher_store(e);

        /* The term's first deadline counts from just before the statement
         * the store dated the lease with, not from before the call: its
         * other round trips (the identity read, the durability check) do
         * not come out of the first lease. */
        r = store_lease_acquire_dated(*e->store, e->lease_name, e->holder, e->ttl_usec, &generation,
                                      &dated_after);
        /* The store answered: a streak of failures ends, and the log says
         * where (its first failure was logged, the others were not). */
        if ((r >= 0 || r == -EBUSY) && *failures > 0) {
                log_notice("store reachable again");
                *failures = 0;
        }
        if (r >= 0) {
                /* Every field: the etcd ones are 0 on the store's lease. */
                *ret = (struct election_result) { .generation = generation, .acquired_at_usec = dated_after };
                check_refresher_store(e);
                last_holder[0] = '\0';
                if (store_lease_unlisten(*e->store) < 0)
                        log_debug("cannot stop listening for releases: %s", store_errmsg(*e->store));
                return 1;
        }
        if (r == -EBUSY) {
                if (store_lease_read(*e->store, e->lease_name, &info) < 0)
                        snprintf(info.holder, sizeof(info.holder), "another node");
                if (strcmp(info.holder, last_holder) != 0) {
                        log_info("standby: lease \"%s\" held by %s (generation %llu)", e->lease_name,
                                 info.holder, (unsigned long long) info.generation);
                        memcpy(last_holder, info.holder, STORE_NAME_MAX + 1);
                }
                sdlive_notify_status(e->d, "standby: lease held by %s (generation %llu), next attempt in %s",
                                     info.holder, (unsigned long long) info.generation,
                                     duration_format(poll_text, sizeof(poll_text), e->poll_usec));
                /* Held by a member that renews it, or a dead one's lease
                 * running out: attempt again when it would expire. */
                *pause = e->poll_usec;
                if (info.held && info.remaining_usec + EXPIRY_SLACK_USEC < *pause)
                        *pause = info.remaining_usec + EXPIRY_SLACK_USEC;
                else if (!info.held)
                        *pause = ATTEMPT_GAP_MIN_USEC;
                return 0;
        }
failed:
        if (store_error_class(r) != STORE_UNAVAILABLE) {
                log_error("store %s failed: %s", e->store_url, store_errmsg(*e->store));
                return r;
        }
        *pause = election_backoff(e->poll_usec, ++*failures);
        duration_format(wait_text, sizeof(wait_text), *pause);
        if (*failures == 1)
                log_warning("store unavailable (%s); retrying with backoff", store_errmsg(*e->store));
        sdlive_notify_status(e->d, "store unavailable: %s; retry %u in %s", store_errmsg(*e->store),
                             *failures, wait_text);
        last_holder[0] = '\0';
        if (*e->store && *failures > 1)
                store_reconnect(*e->store);
        return 0;
}

/* Waits up to usec for a release to be announced (SDLIVE_WAKE_FD), a stop,
 * or the end of the time. Other events on the fd (another file of the
 * store's directory, a server message) are consumed and the wait goes on,
 * after ATTEMPT_GAP_MIN_USEC so that they cannot keep the loop busy; an
 * announcement wakes it no sooner than ANNOUNCED_ATTEMPT_GAP_USEC after
 * the wait began (after the last attempt), so no flood of announcements,
 * on any store, drives more than 10 attempts a second.
 * Without a usable announcement channel (store unreachable, listening
 * broken) it only idles: the poll still runs. */
static int store_wait_for_release(const struct election *e, struct election_standby *s, uint64_t usec) {
        uint64_t entered = monotonic_usec(), until = entered + usec;
        int fd, r;

        (void) s;

        if (!*e->store || store_lease_listen(*e->store, &fd) < 0)
                return sdlive_idle(e->d, usec);
        for (;;) {
                uint64_t now;

                r = store_lease_notified(*e->store);
                if (r > 0) {
                        /* Each wait follows an attempt: an announcement
                         * sooner than the gap after it waits out the rest. */
                        now = monotonic_usec();
                        if (now < entered + ANNOUNCED_ATTEMPT_GAP_USEC && now < until) {
                                r = sdlive_idle(e->d, (entered + ANNOUNCED_ATTEMPT_GAP_USEC < until
                                                               ? entered + ANNOUNCED_ATTEMPT_GAP_USEC
                                                               : until) - now);
                                if (r != SDLIVE_WAKE_TIMEOUT)
                                        return r;
                        }
                        return SDLIVE_WAKE_FD;
                }
                now = monotonic_usec();
                if (now >= until)
                        return SDLIVE_WAKE_TIMEOUT;
                if (r < 0)
                        return sdlive_idle(e->d, until - now);
                r = sdlive_wait_fd(e->d, fd, POLLIN, until - now);
                if (r != SDLIVE_WAKE_FD)
                        return r;
                r = sdlive_idle(e->d, ATTEMPT_GAP_MIN_USEC);
                if (r != SDLIVE_WAKE_TIMEOUT)
                        return r;
        }
}

static int store_attempt(const struct election *e, struct election_standby *s, struct election_result *ret,
                         unsigned *failures, uint64_t *pause) {
        int r = attempt(e, ret, failures, s->last_holder, pause);

        set_attempt_hook(e, false);
        return r;
}

static void store_end(struct election_standby *s) {
        (void) s;
}

const struct election_backend election_store_backend = {
        .attempt = store_attempt,
        .wait_for_release = store_wait_for_release,
        .end = store_end,
};
