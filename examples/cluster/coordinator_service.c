/* SPDX-License-Identifier: MIT */
#include "coordinator_service.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "log.h"

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
        coordinator_stats(s->running, &st);
        log_info("coordinator: term over: %llu jobs assigned, %llu counted, %llu duplicate and "
                 "%llu stale RESULTs, %llu requeued, %llu workers reaped",
                 (unsigned long long) st.assigned, (unsigned long long) st.counted,
                 (unsigned long long) st.duplicates, (unsigned long long) st.stale,
                 (unsigned long long) st.requeued, (unsigned long long) st.reaped);
        s->running = coordinator_stop(s->running);
}

struct leader_service coordinator_service(struct coordinator_service *s) {
        return (struct leader_service) { .name = "coordinator", .start = start, .stop = stop, .userdata = s };
}
