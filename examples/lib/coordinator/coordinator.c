/* SPDX-License-Identifier: MIT */
/* Coordinator lifecycle: start (requeue, resume), adopt, stop. */
#include "coordinator-internal.h"

#include <errno.h>
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
        pthread_cond_destroy(&c->wdone);
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
        pthread_cond_init(&c->wcond, NULL);
        pthread_cond_init(&c->wdone, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
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

int coordinator_adopt(struct coordinator *c, int fd, const char *origin) {
        return coordinator_adopt_conn(c, fd, origin, false, NULL);
}

int coordinator_adopt_conn(struct coordinator *c, int fd, const char *origin, bool tls, const char *source) {
        struct conn *k;
        int r;

        if (!c || fd < 0) {
                if (fd >= 0)
                        close(fd);
                return -EINVAL;
        }
        k = calloc(1, sizeof(*k));
        if (!k) {
                close(fd);
                return -ENOMEM;
        }
        k->c = c;
        k->fd = fd;
        k->tls = tls;
        k->since_ms = monotonic_ms();
        snprintf(k->origin, sizeof(k->origin), "%s", origin ? origin : "adopted");
        snprintf(k->source, sizeof(k->source), "%s", source ? source : "");
        k->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (k->kick_fd < 0) {
                r = -errno;
                goto fail;
        }

        /* Connections that ended since the last reap do not count. */
        coordinator_reap_finished(c);
        pthread_mutex_lock(&c->lock);
        k->id = ++c->next_id;
        r = conn_admit(c, k);
        if (r == 0)
                r = -pthread_create(&k->thread, NULL, conn_main, k);
        if (r == 0) {
                k->next = c->conns;
                c->conns = k;
                c->n_conns++;
        } else
                conn_release_locked(c, k);
        pthread_mutex_unlock(&c->lock);
        if (r < 0)
                goto fail;
        atomic_fetch_add(&c->stats.connections, 1);
        return 0;
fail:
        if (k->kick_fd >= 0)
                close(k->kick_fd);
        close(fd);
        free(k);
        return r;
}

static void free_conn(struct conn *k) {
        pthread_join(k->thread, NULL);
        close(k->kick_fd);
        free(k);
}

void coordinator_reap_finished(struct coordinator *c) {
        struct conn **p, *done = NULL;

        pthread_mutex_lock(&c->lock);
        for (p = &c->conns; *p;) {
                struct conn *k = *p;
                if (atomic_load(&k->finished)) {
                        *p = k->next;
                        c->n_conns--;
                        k->next = done;
                        done = k;
                } else
                        p = &k->next;
        }
        pthread_mutex_unlock(&c->lock);
        while (done) {
                struct conn *k = done;
                done = k->next;
                free_conn(k);
        }
}

void coordinator_kick_all(struct coordinator *c) {
        uint64_t one = 1;

        pthread_mutex_lock(&c->lock);
        for (struct conn *k = c->conns; k; k = k->next)
                (void) !write(k->kick_fd, &one, sizeof(one));
        pthread_mutex_unlock(&c->lock);
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
        if (!c || !ret)
                return;
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

struct coordinator *coordinator_stop_final(struct coordinator *c, struct coordinator_stats *final) {
        uint64_t one = 1, wait;
        struct conn *k;

        if (!c)
                return NULL;
        wait = c->cfg.caller_wait_usec;
        atomic_store(&c->stop_deadline_usec,
                     wait && wait < INT64_MAX / 2 ? (int64_t) (monotonic_usec() + wait) : INT64_MAX);
        (void) !write(c->stop_fd, &one, sizeof(one));
        if (c->listener_running)
                pthread_join(c->listener, NULL);
        pthread_mutex_lock(&c->lock);
        k = c->conns;
        c->conns = NULL;
        pthread_mutex_unlock(&c->lock);
        while (k) {
                struct conn *next = k->next;
                free_conn(k);
                k = next;
        }
        stop_writer(c);
        /* Every connection's last batch is applied or dropped by now. */
        coordinator_stats(c, final);
        free_coordinator(c);
        return NULL;
}

struct coordinator *coordinator_stop(struct coordinator *c) {
        return coordinator_stop_final(c, NULL);
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
