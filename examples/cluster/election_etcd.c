/* SPDX-License-Identifier: MIT */
/*
 * The standby's attempt and wait when the lease lives in etcd
 * (election_backend.h; the loop calls these instead of the store's):
 *
 *   attempt  read the leader key (linearizable); held by another: note its
 *            revision and wait; absent: grant a lease of the TTL and put
 *            the key with it only if it does not exist (etcd_acquire).
 *            Taken: the key's create_revision is the fencing token, the
 *            first deadline for acting comes from the grant's answer.
 *            Lost the race: the unused lease is revoked.
 *   wait     watch the key from the read's revision + 1, petting, and
 *            return at once when it is deleted (released, expired,
 *            revoked); a watch that fails or ends is dropped and the poll
 *            (the next attempt) is the fallback, as with the store.
 *
 * Every etcd call is bounded by e->etcd_budget_usec, and an attempt's
 * calls together by a few of them; before each call the attempt pets the
 * watchdog and beats the election's progress, so a slow etcd never keeps
 * the loop from its keepalives longer than one call. etcd unreachable, or
 * without a quorum, is "store unavailable" to the loop (backoff), never a
 * lease held by another; the log says the failed call's own error.
 *
 * A term is taken only while the grant's deadline for acting
 * (etcd_lease_deadline_ms() with the TTL asked, never more) is at least
 * the margin (at most one call) away when the acquire's answer arrives;
 * otherwise the key is given back (the lease revoked) and the next
 * attempt waits one lease time, doubling, as after a term that could not
 * run.
 */
#include "election.h"
#include "election_backend.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "etcd_lease.h"
#include "lease.h"
#include "log.h"
#include "monotonic.h"

/* The longest one step of the watch runs before the loop pets and looks
 * for a stop request again. */
#define WATCH_STEP_MS 100
/* A deletion wakes the standby no sooner than this after its wait began
 * (after its last attempt): however etcd's stream behaves, at most 10
 * attempts a second, as for the store's announcements. */
#define WATCH_ATTEMPT_GAP_USEC (100 * SDLIVE_USEC_PER_MSEC)
/* The most calls one attempt makes (read, the release of our last term's
 * key, grant, acquire, revoke): together they take at most this many call
 * budgets, with a keepalive before each. */
#define ATTEMPT_CALLS 5
/* The longest pause after consecutive terms refused for want of time. */
#define TERM_REFUSED_MAX_USEC (60 * SDLIVE_USEC_PER_SEC)
/* Room for the reason of a failed call (etcd_errmsg()). */
#define ETCD_REASON_MAX 256

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

static void etcd_standby_end(struct election_standby *s) {
        s->watch = etcd_watch_close(s->watch);
        s->watch_from = 0;
}

/* After a term refused for want of time to act: as after a term that could
 * not run (main.c), one lease time (at least one poll), doubling up to
 * TERM_REFUSED_MAX_USEC. */
static uint64_t refused_backoff(const struct election *e, unsigned refused) {
        uint64_t delay = e->ttl_usec > e->poll_usec ? e->ttl_usec : e->poll_usec;

        while (refused-- > 1 && delay < TERM_REFUSED_MAX_USEC)
                delay *= 2;
        return delay < TERM_REFUSED_MAX_USEC ? delay : TERM_REFUSED_MAX_USEC;
}

/* reason: what failed (etcd_errmsg() of the call that failed, kept before
 * any later call of the attempt could overwrite it). */
static int unavailable(const struct election *e, struct election_standby *s, const char *reason, unsigned *failures,
                       char *last_holder, uint64_t *pause) {
        char wait_text[DURATION_FORMAT_MAX];

        etcd_standby_end(s);
        *pause = election_backoff(e->poll_usec, ++*failures);
        duration_format(wait_text, sizeof(wait_text), *pause);
        if (*failures == 1)
                log_warning("etcd unavailable (%s); retrying with backoff", reason);
        sdlive_notify_status(e->d, "etcd unavailable: %s; retry %u in %s", reason, *failures, wait_text);
        last_holder[0] = '\0';
        return 0;
}

/* Held by another: say so once per holder, watch it from the revision the
 * answer was made at (a new holder: a new watch). */
static void standby(const struct election *e, struct election_standby *s, const struct etcd_holder *h,
                    char *last_holder, uint64_t *pause) {
        char poll_text[DURATION_FORMAT_MAX];

        /* Holder names are at most STORE_NAME_MAX bytes; a longer value
         * (not ours) is compared and said truncated. */
        bool new_holder = strncmp(h->value, last_holder, STORE_NAME_MAX) != 0;

        if (new_holder || !s->watch) {
                etcd_standby_end(s);
                s->watch_from = h->revision + 1;
        }
        if (new_holder) {
                log_info("standby: lease \"%s\" held by %s (generation %lld, in etcd)", e->lease_name, h->value,
                         (long long) h->create_revision);
                snprintf(last_holder, STORE_NAME_MAX + 1, "%.*s", STORE_NAME_MAX, h->value);
        }
        sdlive_notify_status(e->d, "standby: lease held by %s (generation %lld, in etcd), next attempt in %s",
                             h->value, (long long) h->create_revision,
                             duration_format(poll_text, sizeof(poll_text), e->poll_usec));
        *pause = e->poll_usec;
}

/* The budget of the attempt's next call: one call's, and no more than what
 * is left of the attempt's (0: none left). Before it, the attempt pets and
 * beats its progress: the wait since the last keepalive is one call. */
static uint64_t next_call(const struct election *e, uint64_t attempt_until) {
        uint64_t now = monotonic_usec();

        sdlive_pet_watchdog(e->d);
        if (e->progress)
                sdlive_progress_beat(e->progress);
        return now < attempt_until ? min_u64(e->etcd_budget_usec, attempt_until - now) : 0;
}

/* A term refused because the grant's deadline for acting leaves less than
 * the least a term needs (or has passed): said with what etcd answered. */
static void refuse_term(const struct election *e, struct election_standby *s, const struct etcd_lease *lease,
                        int64_t ttl_asked, int64_t left_ms, uint64_t *pause) {
        char wait_text[DURATION_FORMAT_MAX];

        *pause = refused_backoff(e, ++s->refused);
        duration_format(wait_text, sizeof(wait_text), *pause);
        log_warning("etcd lease %lld leaves %lld ms to act (TTL %lld s granted, %lld s asked, the grant sent "
                    "%lld ms ago): too little, term refused; next attempt in %s",
                    (long long) lease->id, (long long) left_ms, (long long) lease->ttl_sec, (long long) ttl_asked,
                    (long long) (monotonic_ms() - lease->sent_ms), wait_text);
        sdlive_notify_status(e->d, "standby: etcd's lease left no time to act; next attempt in %s", wait_text);
}

/* The holder's key read; held with our last term's token: released by it
 * (then not held). < 0: etcd could not be asked (reason in *reason). */
static int read_holder(const struct election *e, uint64_t attempt_until, struct etcd_holder *holder,
                       char *reason, size_t size) {
        int r = etcd_read(*e->etcd, e->etcd_key, next_call(e, attempt_until), holder);

        if (r >= 0 && holder->held && e->etcd_own_token && *e->etcd_own_token > 0 &&
            holder->create_revision == (int64_t) *e->etcd_own_token) {
                log_notice("the leader key still holds our last term's token %lld: releasing it",
                           (long long) holder->create_revision);
                r = etcd_release(*e->etcd, e->etcd_key, holder->create_revision, holder->lease,
                                 next_call(e, attempt_until));
                if (r == -ESTALE)
                        r = 0;
                holder->held = false;
        }
        if (r < 0)
                snprintf(reason, size, "%s", etcd_errmsg(*e->etcd));
        return r;
}

static int etcd_attempt(const struct election *e, struct election_standby *s, struct election_result *ret,
                        unsigned *failures, uint64_t *pause) {
        char *last_holder = s->last_holder;
        int64_t ttl_sec = lease_etcd_ttl_sec(e->ttl_usec), deadline_ms, left_ms;
        uint64_t started = monotonic_usec(), attempt_until = started + ATTEMPT_CALLS * e->etcd_budget_usec;
        /* A term needs this much time to act at least: the holder's
         * reaction time (the margin), at most one call. */
        int64_t floor_ms = (int64_t) min_u64(e->etcd_budget_usec, lease_act_margin(e->ttl_usec)) / 1000;
        char reason[ETCD_REASON_MAX];
        struct etcd_holder holder;
        struct etcd_lease lease;
        bool no_time;
        int r;

        if (!*e->etcd) {
                r = etcd_client_open(e->etcd_endpoints, e->etcd);
                if (r < 0) {
                        log_error("cannot open the etcd client: %s", etcd_errmsg(NULL));
                        return r;
                }
        }
        if (read_holder(e, attempt_until, &holder, reason, sizeof(reason)) < 0)
                return unavailable(e, s, reason, failures, last_holder, pause);
        if (*failures > 0)
                log_notice("etcd reachable again");
        *failures = 0;
        if (holder.held) {
                standby(e, s, &holder, last_holder, pause);
                return 0;
        }

        started = monotonic_usec();
        r = etcd_lease_grant(*e->etcd, ttl_sec, next_call(e, attempt_until), &lease);
        if (r < 0) {
                snprintf(reason, sizeof(reason), "%s", etcd_errmsg(*e->etcd));
                return unavailable(e, s, reason, failures, last_holder, pause);
        }
        /* The acquire is worth its wait only while the grant leaves time to
         * act: its budget ends there. Cut by that deadline, or answered
         * after it, the term has no time to act. */
        deadline_ms = etcd_lease_deadline_ms(&lease, ttl_sec, (int64_t) (lease_act_margin(e->ttl_usec) / 1000));
        left_ms = deadline_ms == INT64_MIN ? INT64_MIN : deadline_ms - monotonic_ms();
        no_time = left_ms <= floor_ms;
        r = 0;
        if (!no_time) {
                uint64_t budget = next_call(e, attempt_until);
                bool cut = (uint64_t) left_ms * 1000 < budget;

                r = etcd_acquire(*e->etcd, e->etcd_key, e->holder, lease.id, cut ? (uint64_t) left_ms * 1000 : budget,
                                 &holder);
                left_ms = deadline_ms - monotonic_ms();
                no_time = (r == -ETIMEDOUT && cut) || (r == 1 && left_ms <= floor_ms);
        }
        if (r == 1 && !no_time) {
                etcd_standby_end(s);
                s->refused = 0;
                last_holder[0] = '\0';
                *ret = (struct election_result) {
                        .generation = (uint64_t) holder.create_revision,
                        .acquired_at_usec = started,
                        .etcd_lease = lease.id,
                        .act_until_usec = (uint64_t) deadline_ms * 1000,
                };
                return 1;
        }
        /* The acquire's own error, before the revoke's call replaces it. */
        snprintf(reason, sizeof(reason), "%s", etcd_errmsg(*e->etcd));
        /* Not ours, no time to act on it, or unknown (the answer was lost):
         * the lease goes, and with it the key if the put did land. */
        if (etcd_lease_revoke(*e->etcd, lease.id, next_call(e, attempt_until)) < 0)
                log_debug("cannot revoke the unused lease %lld (it expires): %s", (long long) lease.id,
                          etcd_errmsg(*e->etcd));
        sdlive_pet_watchdog(e->d);
        if (no_time) {
                etcd_standby_end(s);
                last_holder[0] = '\0';
                refuse_term(e, s, &lease, ttl_sec, left_ms == INT64_MIN ? 0 : left_ms, pause);
                return 0;
        }
        if (r < 0)
                return unavailable(e, s, reason, failures, last_holder, pause);
        standby(e, s, &holder, last_holder, pause);
        return 0;
}

static int etcd_wait_for_release(const struct election *e, struct election_standby *s, uint64_t usec) {
        uint64_t entered = monotonic_usec(), until = entered + usec;
        int r;

        /* After a refused term the pause is a lease time or more, longer
         * than the election's progress expects between attempts. */
        if (s->refused > 0 && !s->watch_from) {
                if (e->progress)
                        sdlive_progress_park(e->progress);
                r = sdlive_idle(e->d, usec);
                if (e->progress)
                        sdlive_progress_beat(e->progress);
                return r;
        }
        if (s->watch_from > 0 && !s->watch && etcd_watch_open(*e->etcd, e->etcd_key, s->watch_from, &s->watch) < 0) {
                log_debug("cannot watch %s: %s; polling", e->etcd_key, etcd_errmsg(*e->etcd));
                s->watch_from = 0;
        }
        if (!s->watch)
                return sdlive_idle(e->d, usec);
        for (;;) {
                uint64_t now = monotonic_usec(), left;

                if (sdlive_stopping(e->d) > 0)
                        return SDLIVE_WAKE_STOP;
                if (now >= until)
                        return SDLIVE_WAKE_TIMEOUT;
                left = (until - now + 999) / 1000;
                r = etcd_watch_step(s->watch, left < WATCH_STEP_MS ? (int) left : WATCH_STEP_MS);
                sdlive_pet_watchdog(e->d);
                if (r > 0) {
                        etcd_standby_end(s);
                        now = monotonic_usec();
                        if (now < entered + WATCH_ATTEMPT_GAP_USEC && now < until &&
                            (r = sdlive_idle(e->d, min_u64(entered + WATCH_ATTEMPT_GAP_USEC, until) - now)) !=
                                    SDLIVE_WAKE_TIMEOUT)
                                return r;
                        return SDLIVE_WAKE_FD;
                }
                if (r < 0) {
                        log_debug("the watch of %s ended (%s); polling", e->etcd_key, etcd_watch_errmsg(s->watch));
                        etcd_standby_end(s);
                        now = monotonic_usec();
                        return now < until ? sdlive_idle(e->d, until - now) : SDLIVE_WAKE_TIMEOUT;
                }
        }
}

const struct election_backend election_etcd_backend = {
        .attempt = etcd_attempt,
        .wait_for_release = etcd_wait_for_release,
        .end = etcd_standby_end,
};
