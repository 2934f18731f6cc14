/* SPDX-License-Identifier: MIT */
#include "executor.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "monotonic.h"

struct executor {
        sdlive *d;
        job_fn fn;
        const fault_switch *hang;
        sdlive_progress *progress;     /* NULL: not registered */
        int result_fd;                 /* eventfd counting finished jobs */
        pthread_t thread;

        pthread_mutex_t lock;
        pthread_cond_t changed;        /* job queued, stop, or thread exited */
        job pending;
        bool has_pending;
        uint64_t running_since_usec;   /* 0: idle */
        job_result last;
        bool stop;
        bool exited;
};

static void run_job(executor *e, const job *j) {
        job_result result = { 0 };
        uint64_t start = monotonic_usec();

        sdlive_progress_beat(e->progress);
        fault_switch_check(e->hang);
        e->fn(j, &result);
        result.duration_usec = monotonic_usec() - start;
        sdlive_progress_beat(e->progress);

        pthread_mutex_lock(&e->lock);
        e->last = result;
        e->running_since_usec = 0;
        pthread_mutex_unlock(&e->lock);
        if (eventfd_write(e->result_fd, 1) < 0)
                log_error("executor: cannot signal a result: %s", strerror(errno));
}

static void *executor_thread(void *userdata) {
        executor *e = userdata;

        pthread_mutex_lock(&e->lock);
        while (!e->stop) {
                if (!e->has_pending) {
                        /* Waiting for work is not being stuck. */
                        sdlive_progress_park(e->progress);
                        pthread_cond_wait(&e->changed, &e->lock);
                        continue;
                }
                job j = e->pending;
                e->has_pending = false;
                e->running_since_usec = monotonic_usec();
                pthread_mutex_unlock(&e->lock);
                run_job(e, &j);
                pthread_mutex_lock(&e->lock);
        }
        e->exited = true;
        pthread_cond_broadcast(&e->changed);
        pthread_mutex_unlock(&e->lock);
        return NULL;
}

static void executor_destroy(executor *e) {
        sdlive_progress_unregister(e->progress);
        if (e->result_fd >= 0)
                close(e->result_fd);
        pthread_cond_destroy(&e->changed);
        pthread_mutex_destroy(&e->lock);
        free(e);
}

int executor_start(executor **ret, sdlive *d, job_fn fn, uint64_t max_silence_usec,
                   const fault_switch *hang) {
        pthread_condattr_t attr;
        executor *e = calloc(1, sizeof(*e));
        int r;

        if (!e) {
                log_error("executor: out of memory");
                return -ENOMEM;
        }
        e->d = d;
        e->fn = fn;
        e->hang = hang;
        pthread_mutex_init(&e->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&e->changed, &attr);
        pthread_condattr_destroy(&attr);

        e->result_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (e->result_fd < 0) {
                r = -errno;
                log_error("executor: eventfd: %s", strerror(-r));
                executor_destroy(e);
                return r;
        }
        if (max_silence_usec > 0) {
                r = sdlive_progress_register(d, "executor", max_silence_usec, &e->progress);
                if (r < 0) {
                        log_error("executor: cannot register progress loop: %s", strerror(-r));
                        executor_destroy(e);
                        return r;
                }
        }
        r = pthread_create(&e->thread, NULL, executor_thread, e);
        if (r != 0) {
                log_error("executor: cannot start thread: %s", strerror(r));
                executor_destroy(e);
                return -r;
        }
        *ret = e;
        return 0;
}

int executor_submit(executor *e, const job *j) {
        int r = 0;

        pthread_mutex_lock(&e->lock);
        if (e->has_pending || e->running_since_usec != 0)
                r = -EBUSY;
        else {
                e->pending = *j;
                e->has_pending = true;
                pthread_cond_signal(&e->changed);
        }
        pthread_mutex_unlock(&e->lock);
        return r;
}

int executor_result_fd(const executor *e) {
        return e->result_fd;
}

uint64_t executor_collect(executor *e, job_result *last) {
        eventfd_t finished;

        if (eventfd_read(e->result_fd, &finished) < 0)
                return 0;
        pthread_mutex_lock(&e->lock);
        *last = e->last;
        pthread_mutex_unlock(&e->lock);
        return finished;
}

uint64_t executor_busy_usec(executor *e) {
        uint64_t since;

        pthread_mutex_lock(&e->lock);
        since = e->running_since_usec;
        pthread_mutex_unlock(&e->lock);
        return since ? monotonic_usec() - since : 0;
}

int executor_stop(executor *e, uint64_t timeout_usec) {
        struct timespec deadline;
        bool exited;

        if (!e)
                return 0;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += (time_t) (timeout_usec / SDLIVE_USEC_PER_SEC);
        deadline.tv_nsec += (long) (timeout_usec % SDLIVE_USEC_PER_SEC) * 1000;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }

        pthread_mutex_lock(&e->lock);
        e->stop = true;
        pthread_cond_broadcast(&e->changed);
        while (!e->exited && pthread_cond_timedwait(&e->changed, &e->lock, &deadline) != ETIMEDOUT)
                ;
        exited = e->exited;
        pthread_mutex_unlock(&e->lock);

        if (!exited) {
                pthread_detach(e->thread);
                return -ETIMEDOUT;
        }
        pthread_join(e->thread, NULL);
        executor_destroy(e);
        return 0;
}
