/* SPDX-License-Identifier: MIT */
#include "election_etcd.h"

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

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

void etcd_standby_end(struct etcd_standby *s) {
        s->watch = etcd_watch_close(s->watch);
        s->watch_from = 0;
}

/* Backoff for an unreachable etcd: as the store's, half a poll doubling up
 * to two polls (election_max_pause()). */
static uint64_t backoff(uint64_t poll_usec, unsigned failures) {
        uint64_t delay = poll_usec / 2;

        while (failures-- > 1 && delay < election_max_pause(poll_usec))
                delay *= 2;
        return delay < election_max_pause(poll_usec) ? delay : election_max_pause(poll_usec);
}

static int unavailable(const struct election *e, struct etcd_standby *s, unsigned *failures,
                       char *last_holder, uint64_t *pause) {
        char wait_text[DURATION_FORMAT_MAX];

        etcd_standby_end(s);
        *pause = backoff(e->poll_usec, ++*failures);
        duration_format(wait_text, sizeof(wait_text), *pause);
        if (*failures == 1)
                log_warning("etcd unavailable (%s); retrying with backoff", etcd_errmsg(*e->etcd));
        sdlive_notify_status(e->d, "etcd unavailable: %s; retry %u in %s", etcd_errmsg(*e->etcd), *failures,
                             wait_text);
        last_holder[0] = '\0';
        return 0;
}

/* Held by another: say so once per holder, watch it from the revision the
 * answer was made at (a new holder: a new watch). */
static void standby(const struct election *e, struct etcd_standby *s, const struct etcd_holder *h,
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

int etcd_attempt(const struct election *e, struct etcd_standby *s, struct election_result *ret,
                 unsigned *failures, char *last_holder, uint64_t *pause) {
        int64_t ttl_sec = (int64_t) (e->ttl_usec / SDLIVE_USEC_PER_SEC), deadline_ms;
        struct etcd_holder holder;
        struct etcd_lease lease;
        uint64_t started;
        int r;

        if (!*e->etcd) {
                r = etcd_client_open(e->etcd_endpoints, e->etcd);
                if (r < 0) {
                        log_error("cannot open the etcd client: %s", etcd_errmsg(NULL));
                        return r;
                }
        }
        r = etcd_read(*e->etcd, e->etcd_key, e->etcd_budget_usec, &holder);
        if (r < 0)
                return unavailable(e, s, failures, last_holder, pause);
        if (*failures > 0)
                log_notice("etcd reachable again");
        *failures = 0;
        if (holder.held && e->etcd_own_token && *e->etcd_own_token > 0 &&
            holder.create_revision == (int64_t) *e->etcd_own_token) {
                log_notice("the leader key still holds our last term's token %lld: releasing it",
                           (long long) holder.create_revision);
                r = etcd_release(*e->etcd, e->etcd_key, holder.create_revision, holder.lease, e->etcd_budget_usec);
                if (r < 0 && r != -ESTALE)
                        return unavailable(e, s, failures, last_holder, pause);
                holder.held = false;
        }
        if (holder.held) {
                standby(e, s, &holder, last_holder, pause);
                return 0;
        }

        started = monotonic_usec();
        r = etcd_lease_grant(*e->etcd, ttl_sec > 0 ? ttl_sec : 1, e->etcd_budget_usec, &lease);
        if (r < 0)
                return unavailable(e, s, failures, last_holder, pause);
        r = etcd_acquire(*e->etcd, e->etcd_key, e->holder, lease.id, e->etcd_budget_usec, &holder);
        deadline_ms = etcd_lease_deadline_ms(&lease, ttl_sec > 0 ? ttl_sec : 1,
                                             (int64_t) (lease_act_margin(e->ttl_usec) / 1000));
        if (r == 1 && holder.create_revision > 0 && deadline_ms > 0) {
                etcd_standby_end(s);
                last_holder[0] = '\0';
                *ret = (struct election_result) {
                        .generation = (uint64_t) holder.create_revision,
                        .acquired_at_usec = started,
                        .etcd_lease = lease.id,
                        .act_until_usec = (uint64_t) deadline_ms * 1000,
                };
                return 1;
        }
        /* Not ours (or unknown: the answer was lost): the lease goes, and
         * with it the key if the put did land. */
        if (etcd_lease_revoke(*e->etcd, lease.id, e->etcd_budget_usec) < 0)
                log_debug("cannot revoke the unused lease %lld (it expires): %s", (long long) lease.id,
                          etcd_errmsg(*e->etcd));
        if (r < 0)
                return unavailable(e, s, failures, last_holder, pause);
        if (r == 1) {
                log_warning("etcd granted lease %lld with no time to act on it: not taken", (long long) lease.id);
                *pause = e->poll_usec;
                return 0;
        }
        standby(e, s, &holder, last_holder, pause);
        return 0;
}

int etcd_wait_for_release(const struct election *e, struct etcd_standby *s, uint64_t usec) {
        uint64_t entered = monotonic_usec(), until = entered + usec;
        int r;

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
