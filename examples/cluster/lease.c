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
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "health_gate.h"
#include "log.h"
#include "store.h"

struct lease_holder {
        struct lease_config config;
        uint64_t generation;
        struct store *store;      /* the refresher's own handle */
        pthread_t thread;
        bool thread_started;
        int lost_fd;              /* eventfd: readable once lost */
        int stop_fd;              /* eventfd: wakes the refresher to exit */
        atomic_bool lost;
        atomic_bool gated;
        atomic_uint_fast64_t refreshes;
        pthread_mutex_t lock;     /* guards reason while it is written */
        char reason[256];
        uint64_t deadline_usec;   /* refresher thread only */
};

uint64_t lease_now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

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

bool lease_holder_gated(const struct lease_holder *h) {
        return atomic_load(&h->gated);
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

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

/* Sleeps until `until` (monotonic) or a stop request. true when stopping. */
static bool sleep_until(struct lease_holder *h, uint64_t until) {
        struct pollfd p = { .fd = h->stop_fd, .events = POLLIN };
        uint64_t now = lease_now_usec();
        int timeout_ms = 0;

        if (until > now) {
                uint64_t ms = (until - now + 999) / 1000;
                timeout_ms = ms > 60000 ? 60000 : (int) ms;
        }
        return poll(&p, 1, timeout_ms) > 0;
}

/* One renewal. false when the lease is lost for good. */
static bool refresh_once(struct lease_holder *h, uint64_t *failures) {
        const struct lease_config *c = &h->config;
        char left[DURATION_FORMAT_MAX];
        uint64_t started = lease_now_usec();
        int r;

        r = store_lease_refresh(h->store, c->name, c->holder, h->generation, c->ttl_usec);
        if (r >= 0) {
                h->deadline_usec = started + c->ttl_usec;
                atomic_fetch_add(&h->refreshes, 1);
                if (*failures > 0)
                        log_info("lease refreshed again after %llu failed attempts",
                                 (unsigned long long) *failures);
                *failures = 0;
                return true;
        }
        switch (store_error_class(r)) {
        case STORE_LOST:
                mark_lost(h, "lease generation %llu is no longer ours: %s",
                          (unsigned long long) h->generation, store_errmsg(h->store));
                return false;
        case STORE_UNAVAILABLE:
                (*failures)++;
                log_warning("lease refresh failed (store unavailable: %s); %s left before it expires",
                            store_errmsg(h->store),
                            duration_format(left, sizeof(left),
                                            h->deadline_usec > started ? h->deadline_usec - started : 0));
                return true;
        default:
                mark_lost(h, "lease refresh failed: %s", store_errmsg(h->store));
                return false;
        }
}

static void *refresher(void *userdata) {
        struct lease_holder *h = userdata;
        const struct lease_config *c = &h->config;
        uint64_t refresh = c->refresh_usec ? c->refresh_usec : c->ttl_usec / 3;
        uint64_t retry = refresh / 4 > 0 ? refresh / 4 : 1;
        uint64_t check = 0, next_refresh = h->deadline_usec - c->ttl_usec + refresh;
        uint64_t next_check = UINT64_MAX, failures = 0;
        struct health_gate gate;
        bool open = true;

        health_gate_init(&gate, c->health_stale_usec, c->health_checks ? c->health_checks : 2);
        if (c->health_stale_usec > 0 && c->d) {
                check = c->health_check_usec ? c->health_check_usec : c->health_stale_usec / 4;
                if (check == 0)
                        check = 1;
                next_check = lease_now_usec() + check;
        }

        for (;;) {
                uint64_t now;

                if (sleep_until(h, min_u64(min_u64(next_refresh, next_check), h->deadline_usec)))
                        return NULL;
                now = lease_now_usec();

                if (now >= next_check) {
                        bool was_open = open;

                        open = health_gate_check(&gate, c->d);
                        atomic_store(&h->gated, !open);
                        if (was_open && !open)
                                log_warning("health gate closed: the main loop stopped petting, "
                                            "no longer renewing the lease");
                        else if (!was_open && open)
                                log_notice("health gate open again: the main loop is petting, renewing");
                        next_check = now + check;
                }
                if (now >= h->deadline_usec) {
                        mark_lost(h, "lease expired: %s",
                                  !open ? "not renewed while the main loop was stale"
                                  : failures > 0 ? "the store was unreachable until its deadline"
                                  : "the refresher ran too late (process paused or starved)");
                        return NULL;
                }
                if (now >= next_refresh && open) {
                        if (!refresh_once(h, &failures))
                                return NULL;
                        next_refresh = lease_now_usec() + (failures > 0 ? retry : refresh);
                        if (failures > 0 && store_reconnect(h->store) < 0)
                                log_debug("reconnect failed: %s", store_errmsg(h->store));
                }
        }
}

int lease_holder_start(const struct lease_config *c, uint64_t generation,
                       uint64_t acquired_at_usec, struct lease_holder **ret) {
        struct lease_holder *h;
        int r;

        if (!c || !ret || !c->store_url || !c->name || !c->holder || c->ttl_usec == 0 || generation == 0)
                return -EINVAL;
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->config = *c;
        h->generation = generation;
        h->deadline_usec = acquired_at_usec + c->ttl_usec;
        h->lost_fd = h->stop_fd = -1;
        pthread_mutex_init(&h->lock, NULL);

        r = store_open(c->store_url, &h->store);
        if (r < 0) {
                log_error("lease refresher cannot open the store: %s", store_errmsg(NULL));
                goto fail;
        }
        /* A refresh stuck behind a lock must not eat the lease. */
        store_set_lock_timeout(h->store, c->lock_timeout_usec ? c->lock_timeout_usec
                                         : (c->refresh_usec ? c->refresh_usec : c->ttl_usec / 3) / 4);
        h->lost_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (h->lost_fd < 0 || h->stop_fd < 0) {
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

struct lease_holder *lease_holder_stop(struct lease_holder *h, bool release) {
        uint64_t one = 1;
        int r;

        if (!h)
                return NULL;
        if (h->thread_started) {
                if (write(h->stop_fd, &one, sizeof(one)) < 0)
                        log_error("cannot wake the lease refresher: %s", strerror(errno));
                pthread_join(h->thread, NULL);
        }
        if (release && h->store && !lease_holder_lost(h)) {
                r = store_lease_release(h->store, h->config.name, h->config.holder, h->generation);
                if (r < 0)
                        log_warning("cannot release the lease (a standby waits for it to expire): %s",
                                    store_errmsg(h->store));
                else
                        log_info("lease generation %llu released", (unsigned long long) h->generation);
                mark_lost(h, "lease released");
        }
        store_close(h->store);
        if (h->lost_fd >= 0)
                close(h->lost_fd);
        if (h->stop_fd >= 0)
                close(h->stop_fd);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
}
