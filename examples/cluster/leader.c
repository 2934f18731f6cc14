/* SPDX-License-Identifier: MIT */
#include "leader.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "maintenance.h"

#define EVENTS_PER_WAKE 16

struct leader_loop {
        int epfd;
};

int leader_loop_watch(struct leader_loop *loop, struct leader_watch *w, uint32_t events) {
        struct epoll_event ev = { .events = events, .data.ptr = w };

        if (!w || w->fd < 0 || !w->ready)
                return -EINVAL;
        return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

int leader_loop_unwatch(struct leader_loop *loop, struct leader_watch *w) {
        return epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL) < 0 ? -errno : 0;
}

static bool lease_lost(void *userdata) {
        return lease_holder_lost(userdata);
}

static void stop_services(const struct leader_term *t, size_t started) {
        while (started-- > 0)
                t->services[started].stop(t->services[started].userdata);
}

static int start_services(const struct leader_term *t, struct leader_loop *loop, size_t *started) {
        for (*started = 0; *started < t->n_services; (*started)++) {
                const struct leader_service *s = &t->services[*started];
                int r = s->start(s->userdata, loop, &t->fence);

                if (r < 0) {
                        log_error("leader service %s failed to start: %s", s->name, strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* Dispatches what epoll has ready. The lease-lost fd is registered with a
 * NULL pointer; the loop notices the lost flag itself. */
static int dispatch(struct leader_loop *loop) {
        struct epoll_event events[EVENTS_PER_WAKE];
        int n = epoll_wait(loop->epfd, events, EVENTS_PER_WAKE, 0);

        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        for (int i = 0; i < n; i++) {
                struct leader_watch *w = events[i].data.ptr;
                int r;

                if (!w)
                        continue;
                r = w->ready(w, events[i].events);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Runs one pass; returns LEADER_* to end the term, or -1 to go on. */
static int run_pass(const struct leader_term *t, uint64_t number) {
        char took[DURATION_FORMAT_MAX], next[DURATION_FORMAT_MAX];
        struct maintenance m = {
                .store = t->store,
                .fence = &t->fence,
                .d = t->d,
                .lease_lost = lease_lost,
                .userdata = t->lease,
                .max_rate = t->maintenance_rate,
                .wedge = t->wedge,
        };
        struct maintenance_stats st;
        int r;

        sdlive_notify_status(t->d, "leader (generation %llu): maintenance pass %llu started",
                             (unsigned long long) t->fence.generation, (unsigned long long) number);
        r = maintenance_pass(&m, &st);
        duration_format(took, sizeof(took), st.duration_usec);
        switch (r) {
        case MAINTENANCE_DONE:
                log_info("maintenance pass %llu done in %s: %llu items, %llu blobs deleted, "
                         "%llu artifact versions pruned, %llu nodes marked missing",
                         (unsigned long long) number, took, (unsigned long long) st.items,
                         (unsigned long long) st.blobs_deleted, (unsigned long long) st.artifacts_pruned,
                         (unsigned long long) st.nodes_missing);
                sdlive_notify_status(t->d, "leader (generation %llu): pass %llu took %s over %llu items; "
                                     "next in %s", (unsigned long long) t->fence.generation,
                                     (unsigned long long) number, took, (unsigned long long) st.items,
                                     duration_format(next, sizeof(next), t->maintenance_interval_usec));
                return -1;
        case MAINTENANCE_STOPPED:
                log_info("maintenance pass %llu interrupted by the stop request after %llu items",
                         (unsigned long long) number, (unsigned long long) st.items);
                return LEADER_STOPPED;
        case MAINTENANCE_LEASE_LOST:
                log_warning("maintenance pass %llu stopped after %llu items: lease lost",
                            (unsigned long long) number, (unsigned long long) st.items);
                if (st.rejected > 0)
                        lease_holder_mark_lost(t->lease, "a fenced write was rejected");
                return LEADER_LEASE_LOST;
        default:
                log_warning("maintenance pass %llu aborted after %llu items: %s; retrying at the next pass",
                            (unsigned long long) number, (unsigned long long) st.items, strerror(-r));
                sdlive_notify_status(t->d, "leader (generation %llu): pass %llu aborted, store unavailable",
                                     (unsigned long long) t->fence.generation, (unsigned long long) number);
                return -1;
        }
}

static int lead(const struct leader_term *t, struct leader_loop *loop) {
        uint64_t cap = sdlive_pet_interval(t->d), next_pass = lease_now_usec(), passes = 0;

        for (;;) {
                uint64_t now, timeout;
                int r;

                if (t->wedge)
                        fault_switch_check(t->wedge);
                if (sdlive_stopping(t->d) > 0)
                        return LEADER_STOPPED;
                if (lease_holder_lost(t->lease))
                        return LEADER_LEASE_LOST;

                now = lease_now_usec();
                if (now >= next_pass) {
                        r = run_pass(t, ++passes);
                        if (r >= 0)
                                return r;
                        now = lease_now_usec();
                        next_pass = now + t->maintenance_interval_usec;
                }

                timeout = next_pass - now;
                if (cap > 0 && timeout > cap)
                        timeout = cap;
                r = sdlive_wait_fd(t->d, loop->epfd, POLLIN, timeout);
                if (r == SDLIVE_WAKE_STOP)
                        return LEADER_STOPPED;
                if (r < 0)
                        return r;
                if (r == SDLIVE_WAKE_FD && (r = dispatch(loop)) < 0)
                        return r;
        }
}

int leader_run(const struct leader_term *t) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
        struct leader_loop loop = { .epfd = epoll_create1(EPOLL_CLOEXEC) };
        size_t started = 0;
        int r;

        if (loop.epfd < 0)
                return -errno;
        if (epoll_ctl(loop.epfd, EPOLL_CTL_ADD, lease_holder_fd(t->lease), &ev) < 0) {
                r = -errno;
                goto out;
        }

        log_notice("elected: leading with generation %llu (the fencing token)",
                   (unsigned long long) t->fence.generation);
        sdlive_notify_status(t->d, "leader (generation %llu)", (unsigned long long) t->fence.generation);
        r = start_services(t, &loop, &started);
        if (r >= 0)
                r = lead(t, &loop);
        stop_services(t, started);
        if (r == LEADER_LEASE_LOST)
                log_warning("lease lost (%s): no longer leader, back to standby",
                            lease_holder_reason(t->lease));
out:
        close(loop.epfd);
        return r;
}
