/* SPDX-License-Identifier: MIT */
/*
 * sdlive-adapter-libevent: sdlive in a daemon built on libevent.
 *
 * One thread, one event_base: a 100 ms work tick, SIGTERM and SIGINT as
 * libevent signal events, and the watchdog: a persistent read event on
 * sdlive_watchdog_fd(), the timerfd that turns readable when a keepalive is
 * due. Its callback pets; the pet re-arms the timerfd, so the level-triggered
 * event does not fire again until the next keepalive is due. A keepalive thus
 * goes out only while the loop dispatches: a wedged callback stops them and
 * systemd kills the daemon after WatchdogSec=.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "adapter.h"
#include "log.h"

typedef struct daemon_state {
        adapter a;
        struct event_base *base;
        unsigned long long ticks;
} daemon_state;

/* The timerfd is readable: a keepalive is due. A failed send is retried at
 * the next interval, when the timerfd fires again. */
static void on_watchdog(evutil_socket_t fd, short what, void *userdata) {
        daemon_state *s = userdata;

        (void) sdlive_pet_watchdog(s->a.sd);
}

/* The daemon's work. The wedge switch hangs it here, in the loop thread. */
static void on_tick(evutil_socket_t fd, short what, void *userdata) {
        daemon_state *s = userdata;

        fault_switch_check(&s->a.wedge);
        if (++s->ticks % ADAPTER_TICKS_PER_STATUS == 0)
                (void) sdlive_notify_status(s->a.sd, "libevent loop: %llu ticks", s->ticks);
}

/* libevent runs this from the loop, not from the signal handler: any call
 * is allowed. STOPPING=1 first, then the loop ends after this callback. */
static void on_signal(evutil_socket_t signo, short what, void *userdata) {
        daemon_state *s = userdata;

        log_info("%s received, stopping", strsignal((int) signo));
        (void) sdlive_notify_stopping(s->a.sd);
        (void) event_base_loopbreak(s->base);
}

/* Adds a new event to the base (timeout NULL: no timeout); NULL and logged
 * on failure. */
static struct event *add_event(daemon_state *s, evutil_socket_t fd, short what,
                               event_callback_fn callback, const struct timeval *timeout) {
        struct event *ev = event_new(s->base, fd, what, callback, s);

        if (!ev || event_add(ev, timeout) < 0) {
                log_error("cannot add a libevent event");
                if (ev)
                        event_free(ev);
                return NULL;
        }
        return ev;
}

int main(int argc, char **argv) {
        const struct timeval tick = { .tv_usec = ADAPTER_TICK_USEC };
        struct event *events[4] = { NULL };
        daemon_state s = { 0 };
        int fd, status = EXIT_FAILURE;

        if (adapter_start(&s.a, argc, argv, "libevent", "") < 0)
                return EXIT_FAILURE;
        s.base = event_base_new();
        if (!s.base) {
                log_error("event_base_new failed");
                goto out;
        }

        events[0] = add_event(&s, -1, EV_PERSIST, on_tick, &tick);
        events[1] = add_event(&s, SIGTERM, EV_SIGNAL | EV_PERSIST, on_signal, NULL);
        events[2] = add_event(&s, SIGINT, EV_SIGNAL | EV_PERSIST, on_signal, NULL);
        if (!events[0] || !events[1] || !events[2])
                goto out;

        /* -ENODATA: pets are not tracked (no watchdog armed), nothing to add. */
        fd = sdlive_watchdog_fd(s.a.sd);
        if (fd >= 0) {
                events[3] = add_event(&s, fd, EV_READ | EV_PERSIST, on_watchdog, NULL);
                if (!events[3])
                        goto out;
        } else if (fd != -ENODATA) {
                log_error("sdlive_watchdog_fd: %s", strerror(-fd));
                goto out;
        }

        log_info("libevent loop up (%s backend)", event_base_get_method(s.base));
        (void) sdlive_notify_status(s.a.sd, "libevent loop up");
        (void) sdlive_notify_ready(s.a.sd);
        if (event_base_dispatch(s.base) < 0)
                log_error("event_base_dispatch failed");
        else
                status = EXIT_SUCCESS;

out:
        for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
                if (events[i])
                        event_free(events[i]);
        if (s.base)
                event_base_free(s.base);
        adapter_finish(&s.a);
        return status;
}
