/* SPDX-License-Identifier: MIT */
/*
 * The places a connection may hold, all guarded by c->lock: a served place
 * (COORDINATOR_CONNECTIONS_MAX) for an authenticated peer, or a handshake
 * place (COORDINATOR_PREAUTH_MAX, COORDINATOR_PREAUTH_PER_SOURCE per
 * source) for a TLS peer that has not yet proved a certificate. A peer
 * without a certificate can therefore never take a served place, and
 * however many connections it opens it holds at most its share of the
 * handshake places, for at most the handshake timeout each (by default
 * COORDINATOR_PREAUTH_HANDSHAKE_MS, never past the worker timeout).
 * A newcomer whose source holds its share takes a place only from that
 * source: a talking newcomer the place of a silent handshake, so a
 * worker is served beside a silent flood from its own address.
 * The handshake itself is here too: the one thing a peer gets before it is
 * trusted.
 */
#include "coordinator_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>

#include "monotonic.h"
#include "tls.h"

/* Threads in the connection list at most: the served places, the handshake
 * places and as many evicted handshakes on their way out. */
#define THREADS_MAX (COORDINATOR_CONNECTIONS_MAX + 2 * COORDINATOR_PREAUTH_MAX)
/* A handshake younger than this is never evicted: at most
 * COORDINATOR_PREAUTH_MAX evictions per EVICT_AGE_MS, whatever arrives. */
#define EVICT_AGE_MS 100

static size_t handshakes_from(const struct coordinator *c, const char *source) {
        size_t n = 0;

        for (const struct conn *x = c->conns; x; x = x->next)
                n += x->preauth && !x->evicted && strcmp(x->source, source) == 0;
        return n;
}

/* True when the peer of a TCP socket never sent a byte. */
static bool silent(int fd) {
        struct tcp_info info;
        socklen_t len = sizeof(info);

        memset(&info, 0, sizeof(info));
        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0 ||
            len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received))
                return false;
        return info.tcpi_bytes_received == 0;
}

/* The oldest silent handshake of source, NULL: none. */
static struct conn *oldest_silent_from(struct coordinator *c, const char *source) {
        struct conn *oldest = NULL;

        for (struct conn *x = c->conns; x; x = x->next)
                if (x->preauth && !x->evicted && strcmp(x->source, source) == 0 &&
                    (!oldest || x->since_ms < oldest->since_ms) && silent(x->fd))
                        oldest = x;
        return oldest;
}

/* The handshake a newcomer whose source holds less than its share may
 * take the place of, NULL: none. A newcomer that already talks (its first
 * bytes arrived before it was accepted, as a worker's ClientHello does)
 * may take the place of any silent handshake (no byte received), the
 * oldest first. Otherwise, and when no handshake
 * is silent, only one of a source holding more places than the newcomer's
 * (`own`) and older than EVICT_AGE_MS (so that a flood cannot spin the
 * places): a silent one first, then of the source holding the most, then
 * the oldest. */
static struct conn *victim(struct coordinator *c, size_t own, bool talking) {
        int64_t young = monotonic_ms() - EVICT_AGE_MS;
        struct conn *best = NULL;
        size_t best_count = 0;
        bool best_silent = false;

        for (struct conn *x = c->conns; x; x = x->next) {
                if (!x->preauth || x->evicted)
                        continue;
                /* The cheap tests first: a silent newcomer is refused in
                 * microseconds while every place is young. */
                bool old_enough = x->since_ms <= young, quiet;
                size_t count = 0;
                if (!talking && !old_enough)
                        continue;
                if (old_enough) {
                        count = handshakes_from(c, x->source);
                        if (!talking && count <= own)
                                continue;
                }
                quiet = silent(x->fd);
                if (talking && !quiet && (!old_enough || count <= own))
                        continue;
                if (!best || quiet > best_silent ||
                    (quiet == best_silent && (count > best_count ||
                                              (count == best_count && x->since_ms < best->since_ms)))) {
                        best = x;
                        best_count = count;
                        best_silent = quiet;
                }
        }
        return best;
}

bool conn_admit_wants_talk(struct coordinator *c, int fd, const char *source) {
        bool wants = false;

        pthread_mutex_lock(&c->lock);
        size_t own = handshakes_from(c, source);
        if (own >= COORDINATOR_PREAUTH_PER_SOURCE)
                wants = silent(fd) && oldest_silent_from(c, source);
        else if (c->n_preauth >= COORDINATOR_PREAUTH_MAX)
                wants = silent(fd) && !victim(c, own, false) && victim(c, own, true);
        pthread_mutex_unlock(&c->lock);
        return wants;
}

int conn_admit(struct coordinator *c, struct conn *k) {
        if (c->n_conns >= THREADS_MAX)
                return -EMFILE;
        if (!k->tls) {
                if (c->n_serving >= COORDINATOR_CONNECTIONS_MAX)
                        return -EMFILE;
                c->n_serving++;
                k->serving = true;
                return 0;
        }
        size_t own = handshakes_from(c, k->source);
        bool full_share = own >= COORDINATOR_PREAUTH_PER_SOURCE;
        if (full_share || c->n_preauth >= COORDINATOR_PREAUTH_MAX) {
                bool talking = !silent(k->fd);
                /* A source at its share takes only a place of its own: a
                 * talking newcomer that of a silent one (a worker beside
                 * a flood from its own address), a silent one none. */
                struct conn *x = !full_share ? victim(c, own, talking)
                                 : talking   ? oldest_silent_from(c, k->source)
                                             : NULL;
                if (!x)
                        return -EAGAIN;
                /* Its handshake fails at once; its thread frees the rest. */
                (void) shutdown(x->fd, SHUT_RDWR);
                x->evicted = true;
                c->n_preauth--;
        }
        c->n_preauth++;
        k->preauth = true;
        return 0;
}

void conn_release_locked(struct coordinator *c, struct conn *k) {
        if (k->preauth && !k->evicted)
                c->n_preauth--;
        if (k->serving)
                c->n_serving--;
        k->preauth = k->serving = false;
}

void conn_release(struct coordinator *c, struct conn *k) {
        pthread_mutex_lock(&c->lock);
        conn_release_locked(c, k);
        pthread_mutex_unlock(&c->lock);
}

int conn_authenticated(struct coordinator *c, struct conn *k) {
        int r = 0;

        pthread_mutex_lock(&c->lock);
        conn_release_locked(c, k);
        if (c->n_serving >= COORDINATOR_CONNECTIONS_MAX)
                r = -EMFILE;
        else {
                c->n_serving++;
                k->serving = true;
        }
        pthread_mutex_unlock(&c->lock);
        return r;
}

int conn_handshake(struct conn *k, SSL **ret) {
        struct coordinator *c = k->c;
        uint64_t window_ms = c->cfg.worker_timeout_usec / 1000;
        uint64_t handshake_ms = c->cfg.handshake_timeout_usec ? c->cfg.handshake_timeout_usec / 1000
                                                              : COORDINATOR_PREAUTH_HANDSHAKE_MS;
        int timeout_ms = (int) (window_ms < handshake_ms ? window_ms : handshake_ms);
        char why[256];
        int r;

        r = tls_handshake(c->cfg.tls, k->fd, true, NULL, timeout_ms, c->stop_fd, ret, why, sizeof(why));
        if (r >= 0 && (r = conn_authenticated(c, k)) < 0)
                snprintf(why, sizeof(why), "all %d worker places are taken", COORDINATOR_CONNECTIONS_MAX);
        if (r < 0)
                coordinator_log_refusal("connection %" PRIu64 " (%s) refused: %s", k->id, k->origin, why);
        return r;
}
