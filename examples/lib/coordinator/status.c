/* SPDX-License-Identifier: MIT */
/* What the coordinator reports and every one of its threads reads: how it
 * stopped (coordinator_fail(), coordinator_stopping()), its counts, the
 * stall of its store work, and the rate-limited log of the connections it
 * refused. Calls nothing else of the coordinator: the other files all
 * depend on it. */
#include "coordinator_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "monotonic.h"

/* At most this many refused connections are logged per window. */
#define REFUSALS_LOGGED 10
#define REFUSAL_WINDOW_MS 10000

static struct {
        pthread_mutex_t lock;
        int64_t window_start_ms;
        unsigned logged, suppressed;
} refusals = { .lock = PTHREAD_MUTEX_INITIALIZER };

void coordinator_log_refusal(const char *format, ...) {
        unsigned earlier = 0;
        bool log = false;
        int64_t now = monotonic_ms();
        char line[512];
        va_list ap;

        pthread_mutex_lock(&refusals.lock);
        if (now - refusals.window_start_ms >= REFUSAL_WINDOW_MS) {
                refusals.window_start_ms = now;
                refusals.logged = 0;
        }
        if (refusals.logged < REFUSALS_LOGGED) {
                refusals.logged++;
                earlier = refusals.suppressed;
                refusals.suppressed = 0;
                log = true;
        } else
                refusals.suppressed++;
        pthread_mutex_unlock(&refusals.lock);
        if (!log)
                return;
        va_start(ap, format);
        vsnprintf(line, sizeof(line), format, ap);
        va_end(ap);
        if (earlier)
                log_warning("coordinator: %u more refused connection(s) not logged", earlier);
        log_warning("coordinator: %s", line);
}

void coordinator_fail(struct coordinator *c, int r) {
        uint64_t one = 1;
        int expected = 0;

        if (r >= 0)
                r = -EIO;
        if (!atomic_compare_exchange_strong(&c->result, &expected, r))
                return;
        if (r == -ESTALE)
                log_warning("coordinator: the lease is no longer ours (generation %llu): stopping",
                            (unsigned long long) c->cfg.fence.generation);
        else
                log_error("coordinator: stopping after a failure: %s", strerror(-r));
        (void) !write(c->stop_fd, &one, sizeof(one));
        (void) !write(c->event_fd, &one, sizeof(one));
}

int coordinator_event_fd(const struct coordinator *c) {
        return c ? c->event_fd : -EINVAL;
}

int coordinator_result(const struct coordinator *c) {
        return c ? atomic_load(&c->result) : -EINVAL;
}

void coordinator_stats(const struct coordinator *c, struct coordinator_stats *ret) {
        if (!ret)
                return;
        if (!c) {
                *ret = (struct coordinator_stats) { 0 };
                return;
        }
        *ret = (struct coordinator_stats) {
                .connections = atomic_load(&c->stats.connections),
                .assigned = atomic_load(&c->stats.assigned),
                .counted = atomic_load(&c->stats.counted),
                .duplicates = atomic_load(&c->stats.duplicates),
                .stale = atomic_load(&c->stats.stale),
                .requeued = atomic_load(&c->stats.requeued),
                .reaped = atomic_load(&c->stats.reaped),
                .protocol_errors = atomic_load(&c->stats.protocol_errors),
                .refused = atomic_load(&c->stats.refused),
                .batches = atomic_load(&c->stats.batches),
        };
}

bool coordinator_stopping(const struct coordinator *c) {
        return atomic_load(&c->stop_deadline_usec) != 0;
}

void coordinator_note_store_work(struct coordinator *c, int r) {
        pthread_mutex_lock(&c->stall_lock);
        if (r >= 0 || r == -ESTALE)
                c->failing_since_usec = 0;
        else if (!c->failing_since_usec) {
                c->failing_since_usec = monotonic_usec();
                snprintf(c->failing_why, sizeof(c->failing_why), "%s", store_errmsg(c->store));
        }
        pthread_mutex_unlock(&c->stall_lock);
}

int coordinator_stalled(struct coordinator *c, char *why, size_t size) {
        uint64_t since, now = monotonic_usec();
        int stalled;

        if (!c)
                return 0;
        pthread_mutex_lock(&c->stall_lock);
        since = c->failing_since_usec;
        stalled = since && now - since >= COORDINATOR_STALL_USEC;
        if (stalled && why && size)
                snprintf(why, size, "job batches failing for %llu s: %s",
                         (unsigned long long) ((now - since) / 1000000), c->failing_why);
        pthread_mutex_unlock(&c->stall_lock);
        return stalled;
}
