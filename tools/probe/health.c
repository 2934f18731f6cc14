/* SPDX-License-Identifier: MIT */
#include "health.h"

#include <stdio.h>
#include <string.h>

void probe_health_init(struct probe_health *h, uint64_t now) {
        *h = (struct probe_health) { .next_run_usec = now };
}

void probe_health_record(struct probe_health *h, const struct probe_settings *s, uint64_t started,
                         uint64_t latency_usec, bool ok, const char *error) {
        h->has_run = true;
        h->last_ok = ok;
        h->last_latency_usec = latency_usec;
        if (ok) {
                h->failures = 0;
                if (h->successes < s->success_threshold)
                        h->successes++;
                if (h->successes >= s->success_threshold) {
                        h->passed = true;
                        h->ever_passed = true;
                }
                h->last_error[0] = '\0';
        } else {
                h->successes = 0;
                if (h->failures < UINT32_MAX)
                        h->failures++;
                if (h->failures >= s->failure_threshold)
                        h->passed = false;
                snprintf(h->last_error, sizeof(h->last_error), "%s", error ? error : "failed");
        }
        h->next_run_usec = latency_usec < s->period_usec ? started + s->period_usec : started + latency_usec;
}

enum probe_verdict probe_verdict(const struct probe_health *h, size_t n, bool ready, uint64_t start,
                                 uint64_t grace_usec, uint64_t now) {
        bool all_passed = true;

        for (size_t i = 0; i < n; i++)
                if (!h[i].passed)
                        all_passed = false;
        if (ready)
                return all_passed ? VERDICT_HEALTHY : VERDICT_FAILING;
        if (all_passed)
                return VERDICT_HEALTHY;
        return now - start >= grace_usec ? VERDICT_START_FAILED : VERDICT_STARTING;
}

size_t probe_next_due(const struct probe_health *h, size_t n) {
        size_t first = 0;

        for (size_t i = 1; i < n; i++)
                if (h[i].next_run_usec < h[first].next_run_usec)
                        first = i;
        return first;
}
