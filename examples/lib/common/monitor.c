/* SPDX-License-Identifier: MIT */
#include "monitor.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "log.h"

/* Keepalives count as stopped once the last one is this many pet intervals
 * old: half of WatchdogSec with the default interval, so the warning comes
 * before systemd's kill. */
#define MONITOR_STALE_INTERVALS 3
#define MONITOR_MAX_PERIOD_USEC SDLIVE_USEC_PER_SEC
#define MONITOR_MIN_PERIOD_USEC (50 * SDLIVE_USEC_PER_MSEC)

struct monitor {
        sdlive *d;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool stop;
};

static struct timespec deadline_after(uint64_t usec) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += (time_t) (usec / SDLIVE_USEC_PER_SEC);
        ts.tv_nsec += (long) (usec % SDLIVE_USEC_PER_SEC) * 1000;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        return ts;
}

/* Logs transitions between "keepalives flowing" and "stopped". */
static void monitor_sample(monitor *m, bool *stale) {
        char age_text[DURATION_FORMAT_MAX], loop[SDLIVE_PROGRESS_NAME_MAX + 1];
        uint64_t age;

        if (sdlive_last_pet_age(m->d, &age) < 0)
                return;
        bool now_stale = age > MONITOR_STALE_INTERVALS * sdlive_pet_interval(m->d);
        if (now_stale == *stale)
                return;
        *stale = now_stale;
        duration_format(age_text, sizeof(age_text), age);
        if (!now_stale)
                log_notice("monitor: keepalives resumed");
        else if (sdlive_progress_stalled(m->d, loop, sizeof(loop)) > 0)
                log_warning("monitor: keepalives withheld for %s: progress loop '%s' is stalled",
                            age_text, loop);
        else
                log_warning("monitor: no keepalive for %s: the main loop is not petting", age_text);
}

static void *monitor_thread(void *userdata) {
        monitor *m = userdata;
        bool stale = false;

        pthread_mutex_lock(&m->lock);
        while (!m->stop) {
                uint64_t period = sdlive_pet_interval(m->d);
                if (period == 0 || period > MONITOR_MAX_PERIOD_USEC)
                        period = MONITOR_MAX_PERIOD_USEC;
                if (period < MONITOR_MIN_PERIOD_USEC)
                        period = MONITOR_MIN_PERIOD_USEC;
                struct timespec deadline = deadline_after(period);
                while (!m->stop && pthread_cond_timedwait(&m->wake, &m->lock, &deadline) != ETIMEDOUT)
                        ;
                if (m->stop)
                        break;
                pthread_mutex_unlock(&m->lock);
                monitor_sample(m, &stale);
                pthread_mutex_lock(&m->lock);
        }
        pthread_mutex_unlock(&m->lock);
        return NULL;
}

int monitor_start(monitor **ret, sdlive *d) {
        pthread_condattr_t attr;
        monitor *m = calloc(1, sizeof(*m));
        int r;

        if (!m) {
                log_error("monitor: out of memory");
                return -ENOMEM;
        }
        m->d = d;
        pthread_mutex_init(&m->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&m->wake, &attr);
        pthread_condattr_destroy(&attr);

        r = pthread_create(&m->thread, NULL, monitor_thread, m);
        if (r != 0) {
                log_error("monitor: cannot start thread: %s", strerror(r));
                pthread_cond_destroy(&m->wake);
                pthread_mutex_destroy(&m->lock);
                free(m);
                return -r;
        }
        *ret = m;
        return 0;
}

monitor *monitor_stop(monitor *m) {
        if (!m)
                return NULL;
        pthread_mutex_lock(&m->lock);
        m->stop = true;
        pthread_cond_signal(&m->wake);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
        pthread_cond_destroy(&m->wake);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return NULL;
}
