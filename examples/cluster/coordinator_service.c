/* SPDX-License-Identifier: MIT */
#include "coordinator_service.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "log.h"

/* The longest a store call of the main loop may wait, as the leader's own
 * handle: 1 s, and at most a quarter of the watchdog's timeout. */
#define MAIN_LOOP_WAIT_MAX_USEC SDLIVE_USEC_PER_SEC

static uint64_t main_loop_wait_usec(sdlive *d) {
        uint64_t wait = MAIN_LOOP_WAIT_MAX_USEC, watchdog = 0;

        if (sdlive_watchdog_enabled(d, &watchdog) > 0 && watchdog / 4 < wait)
                wait = watchdog / 4;
        return wait;
}

static int coordinator_stopped(struct leader_watch *w, uint32_t events) {
        struct coordinator_service *s = w->userdata;
        int r = coordinator_result(s->running);

        return r < 0 ? r : 0;
}

static int start(void *userdata, struct leader_loop *loop, const struct store_fence *fence) {
        struct coordinator_service *s = userdata;
        struct coordinator_config cfg = s->config;
        int r;

        cfg.fence = *fence; /* copied by coordinator_start */
        /* Started and stopped on the main loop, which must not wait on the
         * store for longer than its own calls may. A stop waits for the
         * batch in progress (one lock timeout) and then for at most the
         * caller's wait: half of the main loop's bound each. */
        uint64_t bound = main_loop_wait_usec(s->d) / 2;
        cfg.lock_timeout_usec = cfg.lock_timeout_usec && cfg.lock_timeout_usec < bound ? cfg.lock_timeout_usec
                                                                                        : bound;
        cfg.caller_wait_usec = cfg.caller_wait_usec && cfg.caller_wait_usec < bound ? cfg.caller_wait_usec : bound;
        r = coordinator_start(&s->running, s->d, &cfg);
        if (r < 0)
                return r;
        s->watch = (struct leader_watch) {
                .fd = coordinator_event_fd(s->running),
                .ready = coordinator_stopped,
                .userdata = s,
        };
        r = leader_loop_watch(loop, &s->watch, EPOLLIN);
        if (r < 0) {
                log_error("coordinator: cannot watch its event fd: %s", strerror(-r));
                s->running = coordinator_stop(s->running);
        }
        return r;
}

static void stop(void *userdata) {
        struct coordinator_service *s = userdata;
        struct coordinator_stats st;

        if (!s->running)
                return;
        /* The figures once every connection's last batch is applied: read
         * while serving they would trail the store by the batches in
         * flight. */
        s->running = coordinator_stop_final(s->running, &st);
        log_info("coordinator: term over: %llu jobs assigned, %llu counted, %llu duplicate and "
                 "%llu stale RESULTs, %llu requeued, %llu workers reaped",
                 (unsigned long long) st.assigned, (unsigned long long) st.counted,
                 (unsigned long long) st.duplicates, (unsigned long long) st.stale,
                 (unsigned long long) st.requeued, (unsigned long long) st.reaped);
}

/* The jobs cannot move while the lease is fine: the leader says so. */
static int stalled(void *userdata, char *why, size_t size) {
        struct coordinator_service *s = userdata;

        return coordinator_stalled(s->running, why, size);
}

struct leader_service coordinator_service(struct coordinator_service *s) {
        return (struct leader_service) { .name = "coordinator", .start = start, .stop = stop,
                                         .stalled = stalled, .userdata = s };
}
