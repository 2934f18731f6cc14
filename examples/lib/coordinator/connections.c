/* SPDX-License-Identifier: MIT */
/* The connection set (c->conns, under c->lock): a connection adopted with
 * the place its budget gives it and its own thread (conn_main()), the
 * threads that returned joined, and at the stop every connection joined.
 * (The writer wakes the loops itself, through each one's kick_fd: it
 * calls nothing here.) */
#include "coordinator_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "monotonic.h"

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
        k->done_fd = -1;
        k->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (k->kick_fd >= 0)
                k->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (k->kick_fd < 0 || k->done_fd < 0) {
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
        if (k->done_fd >= 0)
                close(k->done_fd);
        close(fd);
        free(k);
        return r;
}

static void free_conn(struct conn *k) {
        pthread_join(k->thread, NULL);
        close(k->kick_fd);
        close(k->done_fd);
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

void coordinator_join_all(struct coordinator *c) {
        struct conn *k;

        pthread_mutex_lock(&c->lock);
        k = c->conns;
        c->conns = NULL;
        pthread_mutex_unlock(&c->lock);
        while (k) {
                struct conn *next = k->next;
                free_conn(k);
                k = next;
        }
}
