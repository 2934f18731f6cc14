/* SPDX-License-Identifier: MIT */
/*
 * sdlive-adapter-glib: sdlive in a daemon built on a GLib main loop, with
 * work handed to a GThreadPool.
 *
 * The loop: a 100 ms work tick (g_timeout_add), SIGTERM and SIGINT through
 * g_unix_signal_add(), and the watchdog: g_unix_fd_add() on
 * sdlive_watchdog_fd(), the timerfd that turns readable when a keepalive is
 * due. Its callback pets, which re-arms the timerfd. Keepalives go out only
 * while the main loop dispatches.
 *
 * The worker: each tick with no job in flight pushes one to a one-thread
 * pool. The pool thread is a progress loop ("worker"): beaten when the job
 * is pushed, after each step, and parked when done. A job stuck there
 * withholds the keepalives (STATUS= names "worker") although the main loop
 * keeps running.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <glib-unix.h>
#include <glib.h>

#include "adapter.h"
#include "log.h"

typedef struct daemon_state {
        adapter a;
        GMainLoop *loop;
        GThreadPool *pool;
        sdlive_progress *worker;
        gint job_queued;       /* set by the loop, cleared by the pool thread */
        gint jobs_done;        /* atomic */
        guint job_result;      /* atomic */
        unsigned long long ticks;
} daemon_state;

/* The timerfd is readable: a keepalive is due. */
static gboolean on_watchdog(gint fd, GIOCondition condition, gpointer userdata) {
        daemon_state *s = userdata;

        (void) sdlive_pet_watchdog(s->a.sd);
        return G_SOURCE_CONTINUE;
}

/* Pool thread. */
static void run_job(gpointer job, gpointer userdata) {
        daemon_state *s = userdata;

        g_atomic_int_set((gint *) &s->job_result, (gint) adapter_job_run(&s->a, s->worker));
        g_atomic_int_inc(&s->jobs_done);
        g_atomic_int_set(&s->job_queued, 0);
}

/* The daemon's work. The wedge switch hangs it here, in the loop thread,
 * while the pool thread runs on. */
static gboolean on_tick(gpointer userdata) {
        daemon_state *s = userdata;
        GError *error = NULL;

        fault_switch_check(&s->a.wedge);
        if (g_atomic_int_compare_and_exchange(&s->job_queued, 0, 1)) {
                sdlive_progress_beat(s->worker);
                if (!g_thread_pool_push(s->pool, s, &error)) {
                        log_warning("g_thread_pool_push: %s", error->message);
                        g_clear_error(&error);
                        g_atomic_int_set(&s->job_queued, 0);
                }
        }
        /* While the worker is stalled, STATUS= names it (the library sent
         * that): an update would cover it. */
        if (++s->ticks % ADAPTER_TICKS_PER_STATUS == 0 && sdlive_progress_stalled(s->a.sd, NULL, 0) <= 0)
                (void) sdlive_notify_status(s->a.sd, "GLib loop: %llu ticks, %d jobs done (checksum %08x)",
                                            s->ticks, g_atomic_int_get(&s->jobs_done),
                                            (unsigned) g_atomic_int_get((gint *) &s->job_result));
        return G_SOURCE_CONTINUE;
}

/* GLib runs this from the main loop, not from the signal handler. */
static gboolean on_signal(gpointer userdata) {
        daemon_state *s = userdata;

        log_info("stop requested by signal");
        (void) sdlive_notify_stopping(s->a.sd);
        g_main_loop_quit(s->loop);
        return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv) {
        daemon_state s = { 0 };
        guint sources[4] = { 0 };
        GError *error = NULL;
        int fd, status = EXIT_FAILURE;

        if (adapter_start(&s.a, argc, argv, "GLib",
                          " Jobs run on a GThreadPool, watched as a progress loop.") < 0)
                return EXIT_FAILURE;
        if (adapter_worker_register(&s.a, &s.worker) < 0)
                goto out;

        s.pool = g_thread_pool_new(run_job, &s, 1, TRUE, &error);
        if (!s.pool) {
                log_error("g_thread_pool_new: %s", error->message);
                g_clear_error(&error);
                goto out;
        }
        s.loop = g_main_loop_new(NULL, FALSE);
        sources[0] = g_timeout_add(ADAPTER_TICK_USEC / SDLIVE_USEC_PER_MSEC, on_tick, &s);
        sources[1] = g_unix_signal_add(SIGTERM, on_signal, &s);
        sources[2] = g_unix_signal_add(SIGINT, on_signal, &s);

        /* -ENODATA: pets are not tracked (no watchdog armed), nothing to add. */
        fd = sdlive_watchdog_fd(s.a.sd);
        if (fd >= 0) {
                sources[3] = g_unix_fd_add(fd, G_IO_IN, on_watchdog, &s);
        } else if (fd != -ENODATA) {
                log_error("sdlive_watchdog_fd: %s", strerror(-fd));
                goto out;
        }

        log_info("GLib %u.%u.%u main loop up", glib_major_version, glib_minor_version, glib_micro_version);
        (void) sdlive_notify_status(s.a.sd, "GLib loop up");
        (void) sdlive_notify_ready(s.a.sd);
        g_main_loop_run(s.loop);
        status = EXIT_SUCCESS;

out:
        for (size_t i = 0; i < G_N_ELEMENTS(sources); i++)
                if (sources[i])
                        g_source_remove(sources[i]);
        /* Waits for the job in flight; queued ones are dropped. */
        if (s.pool) {
                g_thread_pool_free(s.pool, TRUE, TRUE);
                /* That wait is made of GLib's own locks, which
                 * ThreadSanitizer does not see: this load, paired with the
                 * job's last store, states the order where it can. */
                (void) g_atomic_int_get(&s.job_queued);
        }
        if (s.loop)
                g_main_loop_unref(s.loop);
        sdlive_progress_unregister(s.worker);
        adapter_finish(&s.a);
        return status;
}
