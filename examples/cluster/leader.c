/* SPDX-License-Identifier: MIT */
#include "leader.h"

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "monotonic.h"
#include "maintenance.h"

#define EVENTS_PER_WAKE 16
/* A leader service that fails (to start, or later) is retried after
 * SERVICE_RETRY_FIRST_USEC, doubling up to SERVICE_RETRY_MAX_USEC; the
 * term and its lease go on meanwhile (docs/cluster.md, "Leader services"). */
#define SERVICE_RETRY_FIRST_USEC SDLIVE_USEC_PER_SEC
#define SERVICE_RETRY_MAX_USEC (60 * SDLIVE_USEC_PER_SEC)

struct service_state {
        bool running;
        bool stalled;           /* said so in STATUS= */
        unsigned failures;      /* consecutive */
        int error;              /* of the last failure */
        uint64_t retry_at_usec; /* not running: the next start attempt */
        uint64_t backoff_usec;  /* the delay after the next failure */
};

/* How often the main loop asks the running services whether they stall. */
#define STALL_CHECK_USEC SDLIVE_USEC_PER_SEC

struct leader_loop {
        int epfd;
        uint64_t next_stall_check_usec;
        size_t starting; /* the service whose start() runs: owner of new watches */
        int64_t blobs_resume; /* where an aborted pass left the blobs (maintenance.h) */
        struct service_state state[LEADER_SERVICES_MAX];
};

int leader_loop_watch(struct leader_loop *loop, struct leader_watch *w, uint32_t events) {
        struct epoll_event ev = { .events = events, .data.ptr = w };

        if (!w || w->fd < 0 || !w->ready)
                return -EINVAL;
        w->service = loop->starting;
        return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

/* The maintenance pass stops once the term may no longer act. */
static bool lease_lost(void *userdata) {
        return !lease_holder_may_act(userdata);
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

/* Says (log and STATUS=) that service i is down and when it is retried. */
static void report_down(const struct leader_term *t, const struct leader_loop *loop, size_t i) {
        const struct service_state *st = &loop->state[i];
        char delay[DURATION_FORMAT_MAX];
        uint64_t now = monotonic_usec();

        duration_format(delay, sizeof(delay), st->retry_at_usec > now ? st->retry_at_usec - now : 0);
        sdlive_notify_status(t->d, "leader (generation %llu): %s down (%s), attempt %u failed; "
                             "retrying in %s", (unsigned long long) t->fence.generation,
                             t->services[i].name, strerror(-st->error), st->failures, delay);
}

static void service_failed(const struct leader_term *t, struct leader_loop *loop, size_t i, int r,
                           const char *what) {
        struct service_state *st = &loop->state[i];
        char delay[DURATION_FORMAT_MAX];

        st->running = false;
        st->failures++;
        st->error = r;
        st->retry_at_usec = monotonic_usec() + st->backoff_usec;
        log_error("leader service %s %s: %s; keeping the lease, retrying in %s (attempt %u)",
                  t->services[i].name, what, strerror(-r),
                  duration_format(delay, sizeof(delay), st->backoff_usec), st->failures);
        report_down(t, loop, i);
        st->backoff_usec = min_u64(2 * st->backoff_usec, SERVICE_RETRY_MAX_USEC);
}

static void start_service(const struct leader_term *t, struct leader_loop *loop, size_t i) {
        const struct leader_service *s = &t->services[i];
        struct service_state *st = &loop->state[i];
        int r;

        loop->starting = i;
        r = s->start(s->userdata, loop, &t->fence);
        if (r == -ESTALE) { /* the fence is refused: the term is over */
                lease_holder_mark_lost(t->lease, "a leader service's fenced write was rejected");
                return;
        }
        if (r < 0) {
                service_failed(t, loop, i, r, "failed to start");
                return;
        }
        if (st->failures)
                log_notice("leader service %s started after %u failed attempt(s)", s->name, st->failures);
        *st = (struct service_state) { .running = true, .backoff_usec = SERVICE_RETRY_FIRST_USEC };
        sdlive_notify_status(t->d, "leader (generation %llu)", (unsigned long long) t->fence.generation);
}

static void stop_service(const struct leader_term *t, struct leader_loop *loop, size_t i) {
        if (!loop->state[i].running)
                return;
        loop->state[i].running = false;
        t->services[i].stop(t->services[i].userdata);
}

/* Starts the services whose retry time has come; returns the earliest
 * retry time still ahead (UINT64_MAX: none). */
static uint64_t start_due_services(const struct leader_term *t, struct leader_loop *loop) {
        uint64_t next = UINT64_MAX;

        for (size_t i = 0; i < t->n_services; i++) {
                if (loop->state[i].running)
                        continue;
                if (loop->state[i].retry_at_usec <= monotonic_usec())
                        start_service(t, loop, i);
                if (!loop->state[i].running)
                        next = min_u64(next, loop->state[i].retry_at_usec);
        }
        return next;
}

/* Asks each running service with a stalled() whether it makes progress;
 * says so in STATUS= (and the log) when one starts or stops stalling. */
static void check_stalled(const struct leader_term *t, struct leader_loop *loop) {
        for (size_t i = 0; i < t->n_services; i++) {
                struct service_state *st = &loop->state[i];
                char why[256] = "";
                bool stalled;

                if (!st->running || !t->services[i].stalled)
                        continue;
                stalled = t->services[i].stalled(t->services[i].userdata, why, sizeof(why)) > 0;
                if (stalled) {
                        if (!st->stalled)
                                log_warning("leader service %s stalled: %s; keeping the lease", t->services[i].name,
                                            why[0] ? why : "no progress");
                        sdlive_notify_status(t->d, "leader (generation %llu): %s stalled: %s",
                                             (unsigned long long) t->fence.generation, t->services[i].name,
                                             why[0] ? why : "no progress");
                } else if (st->stalled) {
                        log_notice("leader service %s makes progress again", t->services[i].name);
                        sdlive_notify_status(t->d, "leader (generation %llu)",
                                             (unsigned long long) t->fence.generation);
                }
                st->stalled = stalled;
        }
}

/* Re-says which service is down, after a pass overwrote STATUS=. */
static void report_services_down(const struct leader_term *t, const struct leader_loop *loop) {
        for (size_t i = 0; i < t->n_services; i++)
                if (!loop->state[i].running) {
                        report_down(t, loop, i);
                        return;
                }
}

/* Dispatches what epoll has ready. The lease-lost fd is registered with a
 * NULL pointer; the loop notices the lost flag itself. A service whose
 * watch fails is stopped and retried later, except for -ESTALE: its fenced
 * write was refused, so the lease is gone and so is the term. */
static int dispatch(const struct leader_term *t, struct leader_loop *loop) {
        struct epoll_event events[EVENTS_PER_WAKE];
        int n = epoll_wait(loop->epfd, events, EVENTS_PER_WAKE, 0);

        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        for (int i = 0; i < n; i++) {
                struct leader_watch *w = events[i].data.ptr;
                int r;

                if (!w || !loop->state[w->service].running)
                        continue;
                r = w->ready(w, events[i].events);
                if (r == -ESTALE) {
                        lease_holder_mark_lost(t->lease, "a leader service's fenced write was rejected");
                        return 0;
                }
                if (r < 0) {
                        stop_service(t, loop, w->service);
                        service_failed(t, loop, w->service, r, "failed");
                }
        }
        return 0;
}

/* Runs one pass; returns LEADER_* to end the term, or -1 to go on. A pass
 * after an aborted one goes on among the blobs where that one stopped. */
static int run_pass(const struct leader_term *t, struct leader_loop *loop, uint64_t number) {
        char took[DURATION_FORMAT_MAX], next[DURATION_FORMAT_MAX];
        struct maintenance m = {
                .store = t->store,
                .fence = &t->fence,
                .d = t->d,
                .lease_lost = lease_lost,
                .userdata = t->lease,
                .max_rate = t->maintenance_rate,
                .wedge = t->wedge,
                .blobs_resume = &loop->blobs_resume,
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
                         "%llu artifact versions pruned, %llu nodes marked missing; %llu transactions, "
                         "lists of up to %llu",
                         (unsigned long long) number, took, (unsigned long long) st.items,
                         (unsigned long long) st.blobs_deleted, (unsigned long long) st.artifacts_pruned,
                         (unsigned long long) st.nodes_missing, (unsigned long long) st.transactions,
                         (unsigned long long) st.longest_list);
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
        uint64_t cap = sdlive_pet_interval(t->d), next_pass = monotonic_usec(), passes = 0;

        for (;;) {
                uint64_t now, timeout, next_start, deadline;
                int r;

                if (t->wedge)
                        fault_switch_check(t->wedge);
                if (sdlive_stopping(t->d) > 0)
                        return LEADER_STOPPED;
                if (!lease_holder_may_act(t->lease))
                        return LEADER_LEASE_LOST;

                next_start = start_due_services(t, loop);
                now = monotonic_usec();
                if (now >= loop->next_stall_check_usec) {
                        check_stalled(t, loop);
                        loop->next_stall_check_usec = now + STALL_CHECK_USEC;
                }
                next_start = min_u64(next_start, loop->next_stall_check_usec);
                if (now >= next_pass) {
                        r = run_pass(t, loop, ++passes);
                        if (r >= 0)
                                return r;
                        report_services_down(t, loop);
                        now = monotonic_usec();
                        next_pass = now + t->maintenance_interval_usec;
                }

                /* Wake at the deadline for acting too: the main loop stops
                 * there whatever the refresher is waiting on. */
                deadline = min_u64(min_u64(next_pass, next_start), atomic_load(t->fence.act_until_usec));
                timeout = deadline > now ? deadline - now : 0;
                if (cap > 0 && timeout > cap)
                        timeout = cap;
                r = sdlive_wait_fd(t->d, loop->epfd, POLLIN, timeout);
                if (r == SDLIVE_WAKE_STOP)
                        return LEADER_STOPPED;
                if (r < 0)
                        return r;
                if (r == SDLIVE_WAKE_FD && (r = dispatch(t, loop)) < 0)
                        return r;
        }
}

int leader_run(const struct leader_term *term) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
        struct leader_loop loop = { .epfd = -1 };
        /* Every write of the term, the services' too, stops at the lease
         * holder's deadline for acting. */
        struct leader_term own = *term;
        const struct leader_term *t = &own;
        int r;

        own.fence.act_until_usec = lease_holder_act_until(term->lease);
        if (t->n_services > LEADER_SERVICES_MAX)
                return -E2BIG;
        loop.epfd = epoll_create1(EPOLL_CLOEXEC);
        if (loop.epfd < 0)
                return -errno;
        if (epoll_ctl(loop.epfd, EPOLL_CTL_ADD, lease_holder_fd(t->lease), &ev) < 0) {
                r = -errno;
                goto out;
        }
        for (size_t i = 0; i < t->n_services; i++)
                loop.state[i] = (struct service_state) { .backoff_usec = SERVICE_RETRY_FIRST_USEC };

        log_notice("elected: leading with generation %llu (the fencing token)",
                   (unsigned long long) t->fence.generation);
        sdlive_notify_status(t->d, "leader (generation %llu)", (unsigned long long) t->fence.generation);
        r = lead(t, &loop);
        if (r == LEADER_LEASE_LOST) {
                /* Said before the services stop: stopping them may wait
                 * for their last store calls, and ending the term for the
                 * refresher's, while nothing of the term acts any more. */
                log_warning("lease lost (%s): no longer leader, back to standby",
                            lease_holder_reason(t->lease));
                sdlive_notify_status(t->d, "lease lost (%s): stepping down", lease_holder_reason(t->lease));
        }
        for (size_t i = t->n_services; i-- > 0;)
                stop_service(t, &loop, i);
out:
        close(loop.epfd);
        return r;
}
