/* SPDX-License-Identifier: MIT */
/* Coordinator lifecycle: start (requeue, resume), stop. */
#include "coordinator_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "log.h"
#include "monotonic.h"

static int dup_string(const char *src, char **dst) {
        *dst = NULL;
        if (!src)
                return 0;
        *dst = strdup(src);
        return *dst ? 0 : -ENOMEM;
}

static int copy_config(struct coordinator *c, const struct coordinator_config *cfg) {
        c->cfg = *cfg;
        if (dup_string(cfg->store_url, &c->store_url) < 0 ||
            dup_string(cfg->fence.lease, &c->lease) < 0 ||
            dup_string(cfg->fence.holder, &c->holder) < 0 ||
            dup_string(cfg->fence.store_id, &c->store_id) < 0 ||
            dup_string(cfg->unix_path, &c->unix_path) < 0 ||
            dup_string(cfg->tcp_address, &c->tcp_address) < 0 ||
            dup_string(cfg->job_payload ? cfg->job_payload : COORDINATOR_JOB_PAYLOAD_DEFAULT,
                       &c->job_payload) < 0 ||
            dup_string(cfg->pause_batch_file, &c->pause_batch_file) < 0)
                return -ENOMEM;
        if (cfg->n_allowed_uids) {
                c->allowed_uids = calloc(cfg->n_allowed_uids, sizeof(uid_t));
                if (!c->allowed_uids)
                        return -ENOMEM;
                memcpy(c->allowed_uids, cfg->allowed_uids, cfg->n_allowed_uids * sizeof(uid_t));
        }
        if (cfg->n_allowed_gids) {
                c->allowed_gids = calloc(cfg->n_allowed_gids, sizeof(gid_t));
                if (!c->allowed_gids)
                        return -ENOMEM;
                memcpy(c->allowed_gids, cfg->allowed_gids, cfg->n_allowed_gids * sizeof(gid_t));
        }
        c->cfg.store_url = c->store_url;
        c->cfg.fence.lease = c->lease;
        c->cfg.fence.holder = c->holder;
        c->cfg.fence.store_id = c->store_id;
        c->cfg.unix_path = c->unix_path;
        c->cfg.tcp_address = c->tcp_address;
        if (c->cfg.tls)
                SSL_CTX_up_ref(c->cfg.tls);
        c->cfg.job_payload = c->job_payload;
        c->cfg.pause_batch_file = c->pause_batch_file;
        c->cfg.allowed_uids = c->allowed_uids;
        c->cfg.allowed_gids = c->allowed_gids;
        if (!c->cfg.worker_timeout_usec)
                c->cfg.worker_timeout_usec = SDLIVE_PEER_TIMEOUT_DEFAULT_USEC;
        if (!c->cfg.heartbeat_usec)
                c->cfg.heartbeat_usec = SDLIVE_HEARTBEAT_INTERVAL_DEFAULT_USEC;
        if (!c->cfg.window)
                c->cfg.window = COORDINATOR_WINDOW_DEFAULT;
        return 0;
}

static int validate(const struct coordinator_config *cfg) {
        if (!cfg->store_url || !cfg->fence.lease || !cfg->fence.holder || !cfg->fence.generation)
                return -EINVAL;
        if (cfg->window > COORDINATOR_WINDOW_MAX)
                return -EINVAL;
        if ((cfg->n_allowed_uids && !cfg->allowed_uids) || (cfg->n_allowed_gids && !cfg->allowed_gids))
                return -EINVAL;
        return 0;
}

/* Once no connection loop is left to ask it anything. */
static void stop_writer(struct coordinator *c) {
        if (!c->writer_running)
                return;
        pthread_mutex_lock(&c->wlock);
        c->writer_quit = true;
        pthread_cond_signal(&c->wcond);
        pthread_mutex_unlock(&c->wlock);
        pthread_join(c->writer, NULL);
        c->writer_running = false;
}

static void free_coordinator(struct coordinator *c) {
        if (!c)
                return;
        if (c->unix_fd >= 0) {
                close(c->unix_fd);
                listen_unix_remove(c->unix_path);
        }
        if (c->tcp_fd >= 0)
                close(c->tcp_fd);
        if (c->stop_fd >= 0)
                close(c->stop_fd);
        if (c->event_fd >= 0)
                close(c->event_fd);
        store_close(c->store);
        pthread_mutex_destroy(&c->stall_lock);
        pthread_mutex_destroy(&c->lock);
        pthread_mutex_destroy(&c->wlock);
        pthread_cond_destroy(&c->wcond);
        pthread_cond_destroy(&c->wstarted);
        free(c->store_url);
        free(c->lease);
        free(c->holder);
        free(c->store_id);
        free(c->unix_path);
        free(c->tcp_address);
        SSL_CTX_free(c->cfg.tls);
        free(c->job_payload);
        free(c->pause_batch_file);
        free(c->allowed_uids);
        free(c->allowed_gids);
        free(c);
}

/* Waits for the writer's start-up, at most cfg.caller_wait_usec when set:
 * its result, or 0 when it goes on in the background (it then reports a
 * failure through coordinator_fail()). */
static int wait_start_up(struct coordinator *c) {
        uint64_t wait = c->cfg.caller_wait_usec;
        struct timespec until;
        int r = 0;

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t) (wait / SDLIVE_USEC_PER_SEC);
        until.tv_nsec += (long) (wait % SDLIVE_USEC_PER_SEC) * 1000;
        if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&c->wlock);
        while (!c->start_done && r == 0)
                r = wait ? pthread_cond_timedwait(&c->wstarted, &c->wlock, &until)
                         : pthread_cond_wait(&c->wstarted, &c->wlock);
        bool done = c->start_done;
        if (done)
                r = c->start_result;
        else {
                c->start_abandoned = true;
                r = 0;
        }
        pthread_mutex_unlock(&c->wlock);
        if (!done)
                log_notice("coordinator: the store is slow to answer: still starting, without keeping the "
                           "caller waiting longer than %llu ms", (unsigned long long) (wait / 1000));
        return r;
}

int coordinator_start(struct coordinator **ret, sdlive *d, const struct coordinator_config *cfg) {
        struct coordinator *c;
        pthread_condattr_t attr;
        int r;

        if (!ret || !d || !cfg || validate(cfg) < 0)
                return -EINVAL;
        *ret = NULL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->sdlive = d;
        c->unix_fd = c->tcp_fd = c->stop_fd = c->event_fd = -1;
        pthread_mutex_init(&c->stall_lock, NULL);
        pthread_mutex_init(&c->lock, NULL);
        pthread_mutex_init(&c->wlock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&c->wcond, &attr);
        pthread_cond_init(&c->wstarted, &attr);
        pthread_condattr_destroy(&attr);
        c->queue_tail = &c->queue;
        r = copy_config(c, cfg);
        if (r < 0)
                goto fail;
        c->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        c->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->stop_fd < 0 || c->event_fd < 0) {
                r = -errno;
                goto fail;
        }

        /* The listeners first: they cost no store call, and a connection
         * accepted while the writer still starts waits for it. */
        if (c->unix_path) {
                r = c->unix_fd = listen_unix(c->unix_path);
                if (r < 0) {
                        log_error("coordinator: cannot listen on %s: %s", c->unix_path, strerror(-r));
                        goto fail;
                }
        }
        if (c->tcp_address) {
                r = c->tcp_fd = listen_tcp(c);
                if (r < 0) {
                        log_error("coordinator: cannot listen on %s: %s", c->tcp_address, strerror(-r));
                        goto fail;
                }
        }
        r = -pthread_create(&c->writer, NULL, writer_main, c);
        if (r < 0)
                goto fail;
        c->writer_running = true;
        r = wait_start_up(c);
        if (r < 0)
                goto fail;
        if (c->unix_fd >= 0 || c->tcp_fd >= 0) {
                r = -pthread_create(&c->listener, NULL, listener_main, c);
                if (r < 0)
                        goto fail;
                c->listener_running = true;
        }
        log_info("coordinator: serving as %s generation %llu%s%s%s%s", c->holder,
                 (unsigned long long) c->cfg.fence.generation, c->unix_path ? " on " : "",
                 c->unix_path ? c->unix_path : "", c->tcp_address ? " and " : "",
                 c->tcp_address ? c->tcp_address : "");
        *ret = c;
        return 0;
fail:
        /* A start-up still going on stops between its store calls. */
        atomic_store(&c->stop_deadline_usec, (int64_t) monotonic_usec());
        stop_writer(c);
        free_coordinator(c);
        return r;
}

/* The threads' end, after the stop request: the listener, the connection
 * loops (each waits for its last batch), then the writer. */
static void join_threads(struct coordinator *c) {
        if (c->listener_running)
                pthread_join(c->listener, NULL);
        coordinator_join_all(c);
        stop_writer(c);
}

struct stop_joiner {
        struct coordinator *c;
        int done_fd; /* eventfd: readable once every thread is joined */
};

static void *joiner_main(void *userdata) {
        struct stop_joiner *j = userdata;
        uint64_t one = 1;

        join_threads(j->c);
        if (write(j->done_fd, &one, sizeof(one)) < 0)
                log_error("coordinator: cannot signal the threads' end: %s", strerror(errno));
        return NULL;
}

/* Joins the threads petting the caller's watchdog meanwhile: their last
 * store calls (a batch, the writer's, each bounded by the lock timeout and
 * the store's answer deadline) can take seconds on a slow network, and
 * the main loop that ends its term waits for them without being stale.
 * Joined on the caller's thread when no joiner thread can start. */
static void join_threads_petting(struct coordinator *c) {
        struct stop_joiner j = { .c = c, .done_fd = eventfd(0, EFD_CLOEXEC) };
        uint64_t interval = sdlive_pet_interval(c->sdlive);
        int timeout_ms = interval > 0 && interval < 100 * SDLIVE_USEC_PER_MSEC ? (int) (interval / 1000) : 100;
        struct pollfd p = { .fd = j.done_fd, .events = POLLIN };
        pthread_t joiner;

        if (j.done_fd < 0 || pthread_create(&joiner, NULL, joiner_main, &j) != 0) {
                if (j.done_fd >= 0)
                        close(j.done_fd);
                join_threads(c);
                return;
        }
        while (poll(&p, 1, timeout_ms) == 0 || (p.revents & POLLIN) == 0)
                sdlive_pet_watchdog(c->sdlive);
        pthread_join(joiner, NULL);
        close(j.done_fd);
}

struct coordinator *coordinator_stop_final(struct coordinator *c, struct coordinator_stats *final) {
        uint64_t one = 1, wait;

        if (!c) {
                coordinator_stats(NULL, final);
                return NULL;
        }
        wait = c->cfg.caller_wait_usec;
        atomic_store(&c->stop_deadline_usec,
                     wait && wait < INT64_MAX / 2 ? (int64_t) (monotonic_usec() + wait) : INT64_MAX);
        (void) !write(c->stop_fd, &one, sizeof(one));
        /* From here on a batch that returns hands out no job (conn.c), so
         * a leader stepping down stops acting here, not when the threads'
         * last store calls return. */
        log_info("coordinator: stopping: no job is handed out from now on");
        join_threads_petting(c);
        /* Every connection's last batch is applied or dropped by now. */
        coordinator_stats(c, final);
        free_coordinator(c);
        return NULL;
}

struct coordinator *coordinator_stop(struct coordinator *c) {
        return coordinator_stop_final(c, NULL);
}
