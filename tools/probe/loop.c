/* SPDX-License-Identifier: MIT */
#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "monotonic.h"
#include "printable.h"
#include "probes.h"

#define STATUS_MAX 1024

enum probe_verdict probe_loop_verdict(probe_loop *l) {
        return (enum probe_verdict) atomic_load(&l->verdict);
}

int probe_keepalive(sdlive *d, enum probe_verdict v) {
        return v == VERDICT_HEALTHY ? sdlive_pet_watchdog(d) : 0;
}

static void append(char *out, size_t size, size_t *len, const char *format, ...)
        __attribute__((format(printf, 4, 5)));
static void append(char *out, size_t size, size_t *len, const char *format, ...) {
        va_list ap;
        int n;

        if (*len >= size - 1)
                return;
        va_start(ap, format);
        n = vsnprintf(out + *len, size - *len, format, ap);
        va_end(ap);
        if (n > 0)
                *len += (size_t) n < size - *len ? (size_t) n : size - *len - 1;
}

const char *probe_loop_describe(const struct probe_config *c, const struct probe_health *h,
                                enum probe_verdict v, char *out, size_t size) {
        char name[PRINTABLE_SIZE(96)], error[PRINTABLE_SIZE(PROBE_ERROR_MAX)], took[DURATION_FORMAT_MAX];
        const char *sep = " "; /* "; " between the probes named */
        size_t len = 0;

        out[0] = '\0';
        if (v == VERDICT_FAILING || v == VERDICT_START_FAILED) {
                append(out, size, &len, "%s", v == VERDICT_FAILING ? "keepalives withheld:" : "start failed:");
                for (size_t i = 0; i < c->n_probes; i++) {
                        if (h[i].passed)
                                continue;
                        printable(c->probes[i].name, name, sizeof(name));
                        printable(h[i].last_error, error, sizeof(error));
                        append(out, size, &len, "%s%s failed %u time%s in a row: %s", sep, name, h[i].failures,
                               h[i].failures == 1 ? "" : "s", h[i].has_run ? error : "never ran");
                        sep = "; ";
                }
                return out;
        }
        append(out, size, &len, "%s", v == VERDICT_STARTING ? "starting:" : "healthy:");
        for (size_t i = 0; i < c->n_probes; i++, sep = "; ") {
                printable(c->probes[i].name, name, sizeof(name));
                if (!h[i].has_run) {
                        append(out, size, &len, "%s%s not run yet", sep, name);
                        continue;
                }
                duration_format(took, sizeof(took), h[i].last_latency_usec);
                if (h[i].last_ok)
                        append(out, size, &len, "%s%s ok in %s", sep, name, took);
                else
                        append(out, size, &len, "%s%s failed (%u) in %s: %s", sep, name, h[i].failures, took,
                               printable(h[i].last_error, error, sizeof(error)));
        }
        return out;
}

static uint64_t longest_timeout(const struct probe_config *c) {
        uint64_t t = 0;

        for (size_t i = 0; i < c->n_probes; i++)
                if (c->probes[i].s.timeout_usec > t)
                        t = c->probes[i].s.timeout_usec;
        return t;
}

/* Logs one run: a failed run at warning, a probe crossing its failure
 * threshold at error, one passing again at notice; passing runs of a
 * passing probe are not logged. */
static void log_run(const struct probe_spec *p, const struct probe_health *before, const struct probe_health *h) {
        char name[PRINTABLE_SIZE(96)], error[PRINTABLE_SIZE(PROBE_ERROR_MAX)], took[DURATION_FORMAT_MAX];

        printable(p->name, name, sizeof(name));
        duration_format(took, sizeof(took), h->last_latency_usec);
        if (!h->last_ok) {
                printable(h->last_error, error, sizeof(error));
                if (before->passed && !h->passed)
                        daemon_log(SD_ERR, "probe %s failed %u times in a row (threshold %u): %s", name,
                                   h->failures, p->s.failure_threshold, error);
                else
                        daemon_log(SD_WARNING, "probe %s failed (%u in a row) in %s: %s", name, h->failures,
                                   took, error);
        } else if (!before->passed && h->passed)
                daemon_log(before->ever_passed ? SD_NOTICE : SD_INFO, "probe %s passes (in %s)", name, took);
}

static void publish(probe_loop *l, enum probe_verdict v) {
        char status[STATUS_MAX];
        uint64_t one = 1;
        enum probe_verdict old = probe_loop_verdict(l);

        probe_loop_describe(l->config, l->health, v, status, sizeof(status));
        sdlive_notify_status(l->d, "%s", status);
        if (v == old)
                return;
        if (v == VERDICT_HEALTHY && !l->ready) {
                l->ready = true;
                daemon_log(SD_INFO, "every probe passed: ready");
                sdlive_notify_ready(l->d);
        } else if (v == VERDICT_HEALTHY)
                daemon_log(SD_NOTICE, "every probe passes again: keepalives resume");
        else if (v == VERDICT_FAILING)
                daemon_log(SD_ERR, "%s", status);
        else if (v == VERDICT_START_FAILED)
                daemon_log(SD_ERR, "%s (startup grace ran out)", status);
        atomic_store(&l->verdict, (int) v);
        (void) !write(l->wake_fd, &one, sizeof(one));
}

/* Sleeps until usec (CLOCK_MONOTONIC) or a stop; true when stopped. */
static bool sleep_until(probe_loop *l, uint64_t usec) {
        for (;;) {
                uint64_t now = monotonic_usec();
                struct pollfd pfd = { .fd = l->stop_fd, .events = POLLIN };

                if (now >= usec)
                        return false;
                int n = poll(&pfd, 1, (int) ((usec - now + 999) / 1000));
                if (n > 0)
                        return true;
        }
}

static void *loop_main(void *userdata) {
        probe_loop *l = userdata;
        const struct probe_config *c = l->config;
        char error[PROBE_ERROR_MAX];

        for (;;) {
                size_t i = probe_next_due(l->health, c->n_probes);
                uint64_t due = l->health[i].next_run_usec;

                if (!l->ready && due > l->start_usec + c->startup_grace_usec)
                        due = l->start_usec + c->startup_grace_usec;
                sdlive_progress_park(l->progress);
                if (sleep_until(l, due))
                        return NULL;
                sdlive_progress_beat(l->progress);
                fault_switch_check(&l->wedge);

                uint64_t started = monotonic_usec();
                if (l->health[i].next_run_usec <= started) {
                        struct probe_health before = l->health[i];
                        bool ok;

                        error[0] = '\0';
                        ok = probe_run(&c->probes[i], error, sizeof(error));
                        probe_health_record(&l->health[i], &c->probes[i].s, started, monotonic_usec() - started,
                                            ok, error);
                        sdlive_progress_beat(l->progress);
                        log_run(&c->probes[i], &before, &l->health[i]);
                }
                enum probe_verdict v = probe_verdict(l->health, c->n_probes, l->ready, l->start_usec,
                                                     c->startup_grace_usec, monotonic_usec());
                publish(l, v);
                if (v == VERDICT_START_FAILED)
                        return NULL;
        }
}

int probe_loop_start(probe_loop *l, const struct probe_config *c, sdlive *d, uint64_t start_usec) {
        int r;

        *l = (probe_loop) { .config = c, .d = d, .start_usec = start_usec, .wake_fd = -1, .stop_fd = -1 };
        atomic_init(&l->verdict, (int) VERDICT_STARTING);
        for (size_t i = 0; i < c->n_probes; i++)
                probe_health_init(&l->health[i], start_usec);
        fault_switch_init(&l->wedge, "probe loop", c->wedge_file, "SDLIVE_WEDGE_FILE");
        l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        l->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (l->wake_fd < 0 || l->stop_fd < 0) {
                r = -errno;
                goto fail;
        }
        r = sdlive_progress_register(d, "probe loop", longest_timeout(c) + PROBE_LOOP_SLACK_USEC, &l->progress);
        if (r < 0)
                goto fail;
        r = -pthread_create(&l->thread, NULL, loop_main, l);
        if (r < 0) {
                l->progress = sdlive_progress_unregister(l->progress);
                goto fail;
        }
        return 0;
fail:
        daemon_log(SD_ERR, "cannot start the probe loop: %s", strerror(-r));
        if (l->wake_fd >= 0)
                close(l->wake_fd);
        if (l->stop_fd >= 0)
                close(l->stop_fd);
        return r;
}
