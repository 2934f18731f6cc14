/* SPDX-License-Identifier: MIT */
/*
 * sdlive-adapter-libuv: sdlive in a daemon built on libuv, with work handed
 * to libuv's thread pool.
 *
 * The loop: a 100 ms work tick, SIGTERM and SIGINT as uv_signal_t handles,
 * and the watchdog: a uv_poll_t on sdlive_watchdog_fd(), the timerfd that
 * turns readable when a keepalive is due. Its callback pets, which re-arms
 * the timerfd. Keepalives go out only while the loop runs callbacks.
 *
 * The worker: each tick with no job in flight queues one with
 * uv_queue_work(). The job runs on a pool thread, where no loop pets, so it
 * is a progress loop ("worker"): beaten when queued (the pool must pick it
 * up in time too), after each step, and parked when done. A job stuck in
 * the pool withholds the keepalives (STATUS= names "worker") and systemd
 * restarts the daemon, although the loop itself keeps running.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "adapter.h"
#include "log.h"

typedef struct daemon_state {
        adapter a;
        uv_loop_t *loop;
        uv_timer_t tick;
        uv_signal_t sigterm, sigint;
        uv_poll_t watchdog;
        bool watchdog_open;
        uv_work_t job;
        bool job_queued;     /* loop thread only */
        uint32_t job_output; /* written by the pool thread running the job */
        uint32_t job_result; /* loop thread only */
        sdlive_progress *worker;
        unsigned long long ticks, jobs_done;
} daemon_state;

/* The timerfd is readable: a keepalive is due. */
static void on_watchdog(uv_poll_t *handle, int status, int events) {
        daemon_state *s = handle->data;

        if (status < 0)
                log_warning("watchdog timerfd: %s", uv_strerror(status));
        (void) sdlive_pet_watchdog(s->a.sd);
}

/* Pool thread. */
static void run_job(uv_work_t *req) {
        daemon_state *s = req->data;

        s->job_output = adapter_job_run(&s->a, s->worker);
}

/* Loop thread, once the job has returned (or was cancelled). */
static void on_job_done(uv_work_t *req, int status) {
        daemon_state *s = req->data;

        s->job_queued = false;
        if (status == 0) {
                s->job_result = s->job_output;
                s->jobs_done++;
        }
}

/* The daemon's work. The wedge switch hangs it here, in the loop thread,
 * while the pool threads run on. */
static void on_tick(uv_timer_t *handle) {
        daemon_state *s = handle->data;

        fault_switch_check(&s->a.wedge);
        if (!s->job_queued) {
                int r;

                sdlive_progress_beat(s->worker);
                r = uv_queue_work(s->loop, &s->job, run_job, on_job_done);
                if (r < 0)
                        log_warning("uv_queue_work: %s", uv_strerror(r));
                s->job_queued = r == 0;
        }
        /* While the worker is stalled, STATUS= names it (the library sent
         * that): an update would cover it. */
        if (++s->ticks % ADAPTER_TICKS_PER_STATUS == 0 && sdlive_progress_stalled(s->a.sd, NULL, 0) <= 0)
                (void) sdlive_notify_status(s->a.sd, "libuv loop: %llu ticks, %llu jobs done (checksum %08x)",
                                            s->ticks, s->jobs_done, (unsigned) s->job_result);
}

static void close_handle(uv_handle_t *handle) {
        if (!uv_is_closing(handle))
                uv_close(handle, NULL);
}

static void close_each(uv_handle_t *handle, void *userdata) {
        close_handle(handle);
}

/* Called from the loop. STOPPING=1, then every handle is closed: uv_run()
 * returns once they are and the job in flight, if any, has reported. */
static void on_signal(uv_signal_t *handle, int signo) {
        daemon_state *s = handle->data;

        log_info("%s received, stopping", strsignal(signo));
        (void) sdlive_notify_stopping(s->a.sd);
        close_handle((uv_handle_t *) &s->tick);
        close_handle((uv_handle_t *) &s->sigterm);
        close_handle((uv_handle_t *) &s->sigint);
        if (s->watchdog_open)
                close_handle((uv_handle_t *) &s->watchdog);
}

static int start_signal(daemon_state *s, uv_signal_t *handle, int signo) {
        int r = uv_signal_init(s->loop, handle);

        handle->data = s;
        if (r == 0)
                r = uv_signal_start(handle, on_signal, signo);
        return r;
}

/* Sets up the handles; 0 or a libuv error (negative errno). */
static int start(daemon_state *s) {
        int fd, r;

        s->tick.data = s->job.data = s;
        r = uv_timer_init(s->loop, &s->tick);
        if (r == 0)
                r = uv_timer_start(&s->tick, on_tick, ADAPTER_TICK_USEC / SDLIVE_USEC_PER_MSEC,
                                   ADAPTER_TICK_USEC / SDLIVE_USEC_PER_MSEC);
        if (r == 0)
                r = start_signal(s, &s->sigterm, SIGTERM);
        if (r == 0)
                r = start_signal(s, &s->sigint, SIGINT);
        if (r < 0)
                return r;

        /* -ENODATA: pets are not tracked (no watchdog armed), nothing to poll. */
        fd = sdlive_watchdog_fd(s->a.sd);
        if (fd == -ENODATA)
                return 0;
        if (fd < 0)
                return fd;
        s->watchdog.data = s;
        r = uv_poll_init(s->loop, &s->watchdog, fd);
        if (r < 0)
                return r;
        s->watchdog_open = true;
        return uv_poll_start(&s->watchdog, UV_READABLE, on_watchdog);
}

int main(int argc, char **argv) {
        daemon_state s = { 0 };
        int r, status = EXIT_FAILURE;

        if (adapter_start(&s.a, argc, argv, "libuv",
                          " Jobs run on libuv's thread pool, watched as a progress loop.") < 0)
                return EXIT_FAILURE;
        if (adapter_worker_register(&s.a, &s.worker) < 0)
                goto out;

        s.loop = uv_default_loop();
        r = start(&s);
        if (r < 0) {
                log_error("cannot set up the libuv loop: %s", uv_strerror(r));
                uv_walk(s.loop, close_each, NULL);
                (void) uv_run(s.loop, UV_RUN_DEFAULT);
                goto out;
        }

        log_info("libuv %s loop up", uv_version_string());
        (void) sdlive_notify_status(s.a.sd, "libuv loop up");
        (void) sdlive_notify_ready(s.a.sd);
        (void) uv_run(s.loop, UV_RUN_DEFAULT);
        status = EXIT_SUCCESS;

out:
        if (s.loop && uv_loop_close(s.loop) < 0) {
                log_error("libuv loop still busy at exit");
                status = EXIT_FAILURE;
        }
        sdlive_progress_unregister(s.worker);
        adapter_finish(&s.a);
        return status;
}
