/* SPDX-License-Identifier: MIT */
#include "lease.h"

#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "duration.h"
#include "health_gate.h"
#include "lease_backend.h"
#include "log.h"
#include "monotonic.h"
#include "store.h"

struct lease_holder {
        struct lease_config config;
        uint64_t generation;
        struct lease_backend backend; /* where renewals and releases go (its own handle) */
        pthread_t thread;
        bool thread_started;
        int lost_fd;              /* eventfd: readable once lost */
        int stop_fd;              /* eventfd: wakes the refresher to exit */
        int exited_fd;            /* eventfd: readable once the refresher returns */
        atomic_bool lost;
        atomic_int state;         /* enum lease_state; written by the refresher only */
        atomic_uint gate_releases;
        atomic_uint_fast64_t refreshes;
        atomic_uint_fast64_t failed_renewals;
        _Atomic uint64_t act_until_usec; /* the deadline; written by the refresher only */
        pthread_mutex_t lock;     /* guards reason while it is written */
        char reason[256];
        /* Refresher thread only: */
        uint64_t acquired_at_usec;
        uint64_t deadline_usec;     /* = act_until_usec */
        uint64_t next_refresh_usec; /* renewal or release attempt */
        uint64_t failures;          /* consecutive unavailable attempts */
};

int lease_holder_fd(const struct lease_holder *h) {
        return h->lost_fd;
}

bool lease_holder_lost(const struct lease_holder *h) {
        return atomic_load_explicit(&h->lost, memory_order_acquire);
}

const char *lease_holder_reason(const struct lease_holder *h) {
        return lease_holder_lost(h) ? h->reason : "";
}

uint64_t lease_holder_refreshes(const struct lease_holder *h) {
        return atomic_load(&h->refreshes);
}

uint64_t lease_holder_failed_renewals(const struct lease_holder *h) {
        return atomic_load(&h->failed_renewals);
}

enum lease_state lease_holder_state(const struct lease_holder *h) {
        return (enum lease_state) atomic_load(&h->state);
}

unsigned lease_holder_gate_releases(const struct lease_holder *h) {
        return atomic_load(&h->gate_releases);
}

static void set_state(struct lease_holder *h, enum lease_state state) {
        atomic_store(&h->state, (int) state);
}

static void mark_lost(struct lease_holder *h, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void mark_lost(struct lease_holder *h, const char *format, ...) {
        uint64_t one = 1;
        va_list ap;

        pthread_mutex_lock(&h->lock);
        if (!atomic_load(&h->lost)) {
                va_start(ap, format);
                vsnprintf(h->reason, sizeof(h->reason), format, ap);
                va_end(ap);
                atomic_store_explicit(&h->lost, true, memory_order_release);
                if (write(h->lost_fd, &one, sizeof(one)) < 0)
                        log_error("cannot signal lease loss: %s", strerror(errno));
        }
        pthread_mutex_unlock(&h->lock);
}

void lease_holder_mark_lost(struct lease_holder *h, const char *reason) {
        mark_lost(h, "%s", reason);
}

uint64_t lease_act_margin(uint64_t ttl_usec) {
        return ttl_usec / 8 > SDLIVE_USEC_PER_MSEC ? ttl_usec / 8 : SDLIVE_USEC_PER_MSEC;
}

uint64_t lease_act_deadline(uint64_t ttl_usec, uint64_t started) {
        uint64_t margin = lease_act_margin(ttl_usec);

        return ttl_usec > margin ? started + ttl_usec - margin : started;
}

static void set_deadline(struct lease_holder *h, uint64_t deadline) {
        h->deadline_usec = deadline;
        atomic_store(&h->act_until_usec, deadline);
}

const _Atomic uint64_t *lease_holder_act_until(const struct lease_holder *h) {
        return &h->act_until_usec;
}

bool lease_holder_may_act(struct lease_holder *h) {
        char margin[DURATION_FORMAT_MAX];
        uint64_t now;

        if (lease_holder_lost(h))
                return false;
        now = monotonic_usec();
        if (now < atomic_load(&h->act_until_usec))
                return true;
        mark_lost(h, "the deadline for acting passed (%s before the lease can expire) with no "
                  "renewal in time: the refresher is still waiting for the lease store's answer",
                  duration_format(margin, sizeof(margin), lease_act_margin(h->config.ttl_usec)));
        return false;
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

/* Sleeps until `until` (monotonic) or a stop request. true when stopping. */
static bool sleep_until(struct lease_holder *h, uint64_t until) {
        struct pollfd p = { .fd = h->stop_fd, .events = POLLIN };
        uint64_t now = monotonic_usec();
        int timeout_ms = 0;

        if (until > now) {
                uint64_t ms = (until - now + 999) / 1000;
                timeout_ms = ms > 60000 ? 60000 : (int) ms;
        }
        return poll(&p, 1, timeout_ms) > 0;
}

uint64_t lease_refresh_interval(const struct lease_config *c) {
        return c->refresh_usec ? c->refresh_usec : c->ttl_usec / LEASE_RENEWALS_PER_TTL;
}

static uint64_t refresh_interval(const struct lease_config *c) {
        return lease_refresh_interval(c);
}

static uint64_t retry_interval(const struct lease_config *c) {
        return refresh_interval(c) / 4 > 0 ? refresh_interval(c) / 4 : 1;
}

/*
 * The refresher runs the state machine of lease.h. Each pass of its loop
 * sleeps until the earliest of three deadlines (the lease's local expiry,
 * the next renewal or release attempt, the next health-gate check), then
 * takes the transition of its state:
 *
 *   expire()     any state, local deadline passed            -> LOST
 *   hold()       HOLDING, RETRYING: gate check, then renewal
 *   close_gate()   gate closed                               -> RELEASING
 *   renew()        renewed                                   -> HOLDING
 *                  store unavailable                         -> RETRYING
 *                  not ours, or any other failure            -> LOST
 *   give_back()  RELEASING: release attempt
 *                  released, or not ours any more            -> LOST
 *                  store unavailable                         -> RELEASING
 *
 * Only the refresher changes the state, once per pass (set_state() of
 * what the transition returns), and close_gate() also on entering
 * RELEASING, before its first release attempt.
 */
struct refresher {
        struct lease_holder *h;
        struct health_gate gate;
        uint64_t check_usec;      /* gate check period; 0: no gate */
        uint64_t next_check_usec; /* UINT64_MAX: no gate */
};

/* A call failed because the store is unavailable: retry soon. The
 * backend reconnects only if the failure says the connection is gone, not
 * when a live one answered late or "lock timeout". */
static void retry_later(struct lease_holder *h, const char *what, uint64_t started) {
        char left[DURATION_FORMAT_MAX];

        h->failures++;
        log_warning("lease %s failed (unavailable: %s); %s left before it expires", what,
                    h->backend.errmsg(h->backend.ctx),
                    duration_format(left, sizeof(left),
                                    h->deadline_usec > started ? h->deadline_usec - started : 0));
        h->next_refresh_usec = monotonic_usec() + retry_interval(&h->config);
        h->backend.reconnect(h->backend.ctx);
}

/* HOLDING or RETRYING, a renewal is due: HOLDING, RETRYING or LOST. */
static enum lease_state renew(struct lease_holder *h) {
        const struct lease_config *c = &h->config;
        uint64_t started = monotonic_usec(), deadline = 0;
        int r;

        r = h->backend.renew(h->backend.ctx, &deadline);
        if (r >= 0) {
                set_deadline(h, deadline);
                atomic_fetch_add(&h->refreshes, 1);
                if (h->failures > 0)
                        log_info("lease refreshed again after %llu failed attempts",
                                 (unsigned long long) h->failures);
                h->failures = 0;
                /* Counted from the start of the call, as the deadline is:
                 * a slow store (a round trip of 400 ms, a retransmission)
                 * must not push each next renewal later by the call's
                 * length, until one falls past the deadline. */
                h->next_refresh_usec = started + refresh_interval(c);
                return LEASE_HOLDING;
        }
        atomic_fetch_add(&h->failed_renewals, 1);
        switch (store_error_class(r)) {
        case STORE_LOST:
                mark_lost(h, "lease generation %llu is no longer ours: %s",
                          (unsigned long long) h->generation, h->backend.errmsg(h->backend.ctx));
                return LEASE_LOST;
        case STORE_UNAVAILABLE:
                retry_later(h, "refresh", started);
                return LEASE_RETRYING;
        default:
                mark_lost(h, "lease refresh failed: %s", h->backend.errmsg(h->backend.ctx));
                return LEASE_LOST;
        }
}

/* RELEASING, a release attempt is due: give the lease back so a standby
 * needs not wait for it to run out. Conditioned on (holder, generation) in
 * the store, like every release. RELEASING (to retry) or LOST. */
static enum lease_state give_back(struct lease_holder *h) {
        uint64_t started = monotonic_usec();
        int r;

        atomic_fetch_add(&h->gate_releases, 1);
        r = h->backend.release(h->backend.ctx);
        if (r >= 0) {
                log_warning("lease generation %llu released: the main loop is stale",
                            (unsigned long long) h->generation);
                return LEASE_LOST;
        }
        if (store_error_class(r) == STORE_UNAVAILABLE) {
                retry_later(h, "release", started);
                return LEASE_RELEASING;
        }
        log_info("lease generation %llu not released (%s)", (unsigned long long) h->generation,
                 h->backend.errmsg(h->backend.ctx));
        return LEASE_LOST;
}

/* HOLDING or RETRYING, the gate closed: the loss is signalled now and the
 * first release attempt made at once. RELEASING or LOST. */
static enum lease_state close_gate(struct lease_holder *h) {
        log_warning("health gate closed: the main loop stopped petting; releasing the lease");
        mark_lost(h, "the main loop was stale: lease released by the health gate");
        set_state(h, LEASE_RELEASING);
        h->failures = 0;
        return give_back(h);
}

/* HOLDING or RETRYING: checks the gate when a check is due, then renews
 * when a renewal is due. */
static enum lease_state hold(struct refresher *r, enum lease_state state, uint64_t now) {
        if (now >= r->next_check_usec) {
                r->next_check_usec = now + r->check_usec;
                if (!health_gate_check(&r->gate, r->h->config.d))
                        return close_gate(r->h);
        }
        return now >= r->h->next_refresh_usec ? renew(r->h) : state;
}

/* RELEASING: retries the release when it is due. */
static enum lease_state release(struct refresher *r, enum lease_state state, uint64_t now) {
        return now >= r->h->next_refresh_usec ? give_back(r->h) : state;
}

/* Any state, the local deadline passed: LOST, saying why it came to that. */
static enum lease_state expire(struct lease_holder *h, enum lease_state state) {
        const char *why = "the refresher ran too late (process paused or starved)";

        if (state == LEASE_RELEASING)
                why = "the store was unreachable to release it";
        else if (h->failures > 0)
                why = "the store was unreachable until its deadline";
        mark_lost(h, "lease expired: %s", why);
        return LEASE_LOST;
}

/* When the refresher must wake next in this state. */
static uint64_t next_wake(const struct refresher *r, enum lease_state state) {
        uint64_t wake = min_u64(r->h->next_refresh_usec, r->h->deadline_usec);

        /* Once releasing, the gate has nothing left to decide. */
        return state == LEASE_RELEASING ? wake : min_u64(wake, r->next_check_usec);
}

static void refresher_init(struct refresher *r, struct lease_holder *h) {
        const struct lease_config *c = &h->config;

        *r = (struct refresher) { .h = h, .next_check_usec = UINT64_MAX };
        h->next_refresh_usec = h->acquired_at_usec + refresh_interval(c);
        health_gate_init(&r->gate, c->health_stale_usec, c->health_checks ? c->health_checks : 2);
        if (c->health_stale_usec > 0 && c->d) {
                r->check_usec = c->health_check_usec ? c->health_check_usec : c->health_stale_usec / 4;
                if (r->check_usec == 0)
                        r->check_usec = 1;
                r->next_check_usec = monotonic_usec() + r->check_usec;
        }
}

static void *refresher(void *userdata) {
        static enum lease_state (*const step[])(struct refresher *, enum lease_state, uint64_t) = {
                [LEASE_HOLDING] = hold,
                [LEASE_RETRYING] = hold,
                [LEASE_RELEASING] = release,
        };
        struct refresher r;

        refresher_init(&r, userdata);
        for (enum lease_state state; (state = lease_holder_state(r.h)) != LEASE_LOST;) {
                if (sleep_until(r.h, next_wake(&r, state)))
                        break;
                uint64_t now = monotonic_usec();
                set_state(r.h, now >= r.h->deadline_usec ? expire(r.h, state) : step[state](&r, state, now));
        }
        if (eventfd_write(r.h->exited_fd, 1) < 0)
                log_error("cannot signal the refresher's end: %s", strerror(errno));
        return NULL;
}

/* Waits for the refresher to return, petting meanwhile: it may be inside
 * a call to the store, bounded (lock timeout + slack, a connect timeout a
 * host) but seconds long on a slow or cut network, and the main loop that
 * waits for it is not stale. */
static void join_refresher(struct lease_holder *h) {
        struct pollfd p = { .fd = h->exited_fd, .events = POLLIN };
        uint64_t interval = h->config.d ? sdlive_pet_interval(h->config.d) : 0;
        int timeout_ms = interval > 0 && interval < 100 * SDLIVE_USEC_PER_MSEC ? (int) (interval / 1000) : 100;

        if (h->config.d)
                while (poll(&p, 1, timeout_ms) == 0 || (p.revents & POLLIN) == 0)
                        sdlive_pet_watchdog(h->config.d);
        pthread_join(h->thread, NULL);
}

/* Starts the refresher of a lease whose backend is opened by open_backend
 * (with etcd_lease > 0: the etcd one), with the first deadline given. */
static int holder_start(const struct lease_config *c, uint64_t generation, uint64_t acquired_at_usec,
                        int64_t etcd_lease, uint64_t act_until_usec, struct lease_holder **ret) {
        struct lease_holder *h;
        int r;

        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->config = *c;
        h->generation = generation;
        h->acquired_at_usec = acquired_at_usec;
        set_deadline(h, act_until_usec);
        h->lost_fd = h->stop_fd = h->exited_fd = -1;
        atomic_init(&h->state, LEASE_HOLDING);
        pthread_mutex_init(&h->lock, NULL);

#if SDLIVE_LEASE_ETCD
        if (etcd_lease > 0) {
                r = lease_etcd_backend_open(c, generation, etcd_lease, &h->backend);
                if (r < 0)
                        log_error("lease refresher cannot open the etcd client: %s", strerror(-r));
        } else
#endif
                r = lease_store_backend_open(c, generation, &h->backend);
        if (r < 0)
                goto fail;
        h->lost_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        h->exited_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (h->lost_fd < 0 || h->stop_fd < 0 || h->exited_fd < 0) {
                r = -errno;
                goto fail;
        }
        r = -pthread_create(&h->thread, NULL, refresher, h);
        if (r < 0)
                goto fail;
        h->thread_started = true;
        *ret = h;
        return 0;
fail:
        lease_holder_stop(h, false);
        return r;
}

int lease_holder_start(const struct lease_config *c, uint64_t generation,
                       uint64_t acquired_at_usec, struct lease_holder **ret) {
        if (!c || !ret || !c->store_url || !c->name || !c->holder || c->ttl_usec == 0 || generation == 0)
                return -EINVAL;
        return holder_start(c, generation, acquired_at_usec, 0, lease_act_deadline(c->ttl_usec, acquired_at_usec), ret);
}

int lease_holder_start_etcd(const struct lease_config *c, uint64_t token, int64_t etcd_lease,
                            uint64_t act_until_usec, struct lease_holder **ret) {
        if (!c || !ret || !c->etcd_endpoints || !c->etcd_key || !c->name || !c->holder || c->ttl_usec == 0 ||
            token == 0 || etcd_lease <= 0)
                return -EINVAL;
#if SDLIVE_LEASE_ETCD
        return holder_start(c, token, monotonic_usec(), etcd_lease, act_until_usec, ret);
#else
        return -ENOTSUP;
#endif
}

struct lease_holder *lease_holder_stop(struct lease_holder *h, bool release) {
        uint64_t one = 1;
        int r;

        if (!h)
                return NULL;
        if (h->thread_started) {
                if (write(h->stop_fd, &one, sizeof(one)) < 0)
                        log_error("cannot wake the lease refresher: %s", strerror(errno));
                join_refresher(h);
        }
        if (release && h->backend.ctx && (!lease_holder_lost(h) || h->backend.release_when_lost)) {
                r = h->backend.release(h->backend.ctx);
                if (r == -ESTALE && lease_holder_lost(h))
                        log_debug("lease generation %llu: nothing left to release",
                                  (unsigned long long) h->generation);
                else if (r < 0)
                        log_warning("cannot release the lease (a standby waits for it to expire): %s",
                                    h->backend.errmsg(h->backend.ctx));
                else
                        log_info("lease generation %llu released", (unsigned long long) h->generation);
                mark_lost(h, "lease released");
        }
        if (h->backend.close)
                h->backend.close(h->backend.ctx);
        if (h->lost_fd >= 0)
                close(h->lost_fd);
        if (h->stop_fd >= 0)
                close(h->stop_fd);
        if (h->exited_fd >= 0)
                close(h->exited_fd);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
}
