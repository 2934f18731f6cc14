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
        pthread_cond_t changed;        /* batch queued, stop, or thread exited */
        /* The batch: jobs[0, n_jobs), of which n_done have run (their
         * results in results[]) and n_taken were collected. The thread
         * reads jobs[n_done] (never written while n_done < n_jobs) and
         * writes results[n_done] outside the lock before counting it. */
        job jobs[EXECUTOR_BATCH_MAX];
        job_result results[EXECUTOR_BATCH_MAX];
        size_t n_jobs, n_done, n_taken;
        bool signalled;                /* result_fd written, not yet collected */
        uint64_t running_since_usec;   /* 0: idle */
        bool stop;
        bool exited;
};

/* Runs jobs[n_done] and counts it; e->lock is held on entry and exit. */
static void run_job(executor *e) {
        size_t at = e->n_done;
        const job *j = &e->jobs[at];
        job_result *result = &e->results[at];
        uint64_t start = monotonic_usec();
        bool signal;

        e->running_since_usec = start;
        pthread_mutex_unlock(&e->lock);
        *result = (job_result) { 0 };
        sdlive_progress_beat(e->progress);
        fault_switch_check(e->hang);
        e->fn(j, result);
        result->duration_usec = monotonic_usec() - start;
        sdlive_progress_beat(e->progress);

        pthread_mutex_lock(&e->lock);
        e->n_done++;
        e->running_since_usec = 0;
        /* One wake-up for every result the collector has not yet seen: the
         * results finished before it looks are taken together. */
        signal = !e->signalled;
        e->signalled = true;
        pthread_mutex_unlock(&e->lock);
        if (signal && eventfd_write(e->result_fd, 1) < 0)
                log_error("executor: cannot signal a result: %s", strerror(errno));
        pthread_mutex_lock(&e->lock);
}

static void *executor_thread(void *userdata) {
        executor *e = userdata;

        pthread_mutex_lock(&e->lock);
        while (!e->stop) {
                if (e->n_done == e->n_jobs) {
                        /* Waiting for work is not being stuck. */
                        sdlive_progress_park(e->progress);
                        pthread_cond_wait(&e->changed, &e->lock);
                        continue;
                }
                run_job(e);
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

int executor_submit_batch(executor *e, const job *jobs, size_t n) {
        int r = 0;

        if (n == 0 || n > EXECUTOR_BATCH_MAX)
                return -EINVAL;
        pthread_mutex_lock(&e->lock);
        if (e->n_taken < e->n_jobs)
                r = -EBUSY;
        else {
                memcpy(e->jobs, jobs, n * sizeof(jobs[0]));
                e->n_jobs = n;
                e->n_done = e->n_taken = 0;
                pthread_cond_signal(&e->changed);
        }
        pthread_mutex_unlock(&e->lock);
        return r;
}

int executor_submit(executor *e, const job *j) {
        return executor_submit_batch(e, j, 1);
}

int executor_result_fd(const executor *e) {
        return e->result_fd;
}

size_t executor_take_results(executor *e, job_result *out, size_t max) {
        eventfd_t ignored;
        size_t n;

        /* Drained before the results are read: a result counted after this
         * read either is taken below or writes the eventfd again. */
        (void) eventfd_read(e->result_fd, &ignored);
        pthread_mutex_lock(&e->lock);
        e->signalled = false;
        n = e->n_done - e->n_taken;
        if (n > max)
                n = max;
        memcpy(out, e->results + e->n_taken, n * sizeof(out[0]));
        e->n_taken += n;
        pthread_mutex_unlock(&e->lock);
        return n;
}

size_t executor_cancel_rest(executor *e) {
        size_t n;

        pthread_mutex_lock(&e->lock);
        n = e->n_done + (e->running_since_usec != 0);
        if (n < e->n_jobs)
                e->n_jobs = n;
        n = e->n_jobs;
        pthread_mutex_unlock(&e->lock);
        return n;
}

uint64_t executor_collect(executor *e, job_result *last) {
        job_result results[EXECUTOR_BATCH_MAX];
        size_t n = executor_take_results(e, results, EXECUTOR_BATCH_MAX);

        if (n)
                *last = results[n - 1];
        return n;
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
