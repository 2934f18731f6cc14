/* SPDX-License-Identifier: MIT */
/*
 * The job coordinator, run by the elected cluster leader: it hands the jobs
 * of the store's unfinished runs to connected workers and records their
 * outcomes, at least once and counted once. docs/jobs.md has the rules.
 *
 * Shape: one listener thread (unix socket, optionally TCP), one thread
 * per worker connection and one writer thread that owns the coordinator's
 * only store connection: the connection loops queue their RESULTs,
 * requeues and claims to it, and it applies everything queued in one
 * fenced transaction. A connection costs no store resources. A loop
 * keeps up to `window` claimed jobs in flight on its worker, restarts the
 * worker's inactivity window only on frames received from it, heartbeats
 * the worker on schedule, and polls with sdlive_peer_poll_timeout(). Clean
 * close, a malformed frame or inactivity ends the connection and requeues
 * its in-flight jobs, which then go to another worker.
 *
 * Every store write is fenced by the leader's lease generation. When the
 * store refuses the fence (-ESTALE) the coordinator stops by itself and its
 * event fd becomes readable; coordinator_result() then says -ESTALE.
 *
 * Threads: start/stop/adopt from the leader's thread; coordinator_event_fd(),
 * coordinator_result() and coordinator_stats() from any thread.
 */
#ifndef SDLIVE_EXAMPLE_COORDINATOR_H
#define SDLIVE_EXAMPLE_COORDINATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sdlive.h>

#include "store.h"

#define COORDINATOR_WINDOW_DEFAULT 16
#define COORDINATOR_WINDOW_MAX 64
/* Worker connections served at once; more are refused (logged). Only a
 * connection whose peer is authenticated takes one: a unix peer whose
 * credentials are allowed, a TCP peer once its TLS handshake proved a
 * certificate (or any TCP peer in the explicit clear-text mode). */
#define COORDINATOR_CONNECTIONS_MAX 256
/* TLS handshakes in progress, the budget of peers not yet authenticated:
 * at most this many at once, at most COORDINATOR_PREAUTH_PER_SOURCE from
 * one source (an IPv4 address, an IPv6 /64), each for at most the
 * handshake timeout (coordinator_config.handshake_timeout_usec, by
 * default COORDINATOR_PREAUTH_HANDSHAKE_MS, never past the worker
 * timeout). When the budget is full a newcomer
 * that already talks takes the place of a silent handshake (no byte
 * received); otherwise a newcomer takes the place of one at least 100 ms
 * old of a source holding more places than its own, or is refused
 * (budget.c has the order). When its source holds its share, a newcomer
 * that already talks takes the place of a silent handshake of that
 * source; any other is refused. */
#define COORDINATOR_PREAUTH_MAX 64
#define COORDINATOR_PREAUTH_PER_SOURCE 16
/* The default handshake timeout, of both ends of a job link: a TLS 1.3
 * handshake with client certificates is 1.5 round trips, 0.75 s at a
 * 500 ms round trip (200 ms +- 50 ms each way); a lost segment waits out
 * a retransmission timeout, about 3 round trips (1.5 s) on a young
 * connection, then twice that: one segment lost twice in a row still
 * completes by 0.75 + 1.5 + 3 = 5.25 s. */
#define COORDINATOR_PREAUTH_HANDSHAKE_MS 6000
#define COORDINATOR_JOB_PAYLOAD_DEFAULT "noop"
/* Where the cluster daemon listens unless told otherwise. */
#define COORDINATOR_SOCKET_DEFAULT "/run/sdlive/coordinator.sock"

struct coordinator_config {
        const char *store_url;     /* the writer's one store connection */
        struct store_fence fence;  /* the leader's lease; strings are copied */

        /* Unix listener: the path is unlinked before bind (a stale socket of
         * an earlier leader) and on stop. NULL: none (tests adopt fds). */
        const char *unix_path;
        /* Optional TCP listener, "IP:port" or "[v6]:port". Its peers are
         * authenticated by TLS with client certificates (tls, kept with a
         * reference; each worker's HELLO name must be one its certificate
         * proves). Without tls the listener is in the clear, which is
         * allowed only with tcp_insecure and on a loopback address. */
        const char *tcp_address;
        struct ssl_ctx_st *tls; /* SSL_CTX from tls_context_new(), server side */
        bool tcp_insecure;
        /* Unix peers are accepted when SO_PEERCRED shows our own uid, root,
         * one of these uids, or one of these primary gids. */
        const uid_t *allowed_uids;
        size_t n_allowed_uids;
        const gid_t *allowed_gids;
        size_t n_allowed_gids;

        /* How long a TCP peer's TLS handshake may take, its place in the
         * pre-authentication budget held meanwhile (at most the worker
         * timeout). 0: COORDINATOR_PREAUTH_HANDSHAKE_MS. */
        uint64_t handshake_timeout_usec;
        /* A worker silent this long is reaped. 0: 30 s. */
        uint64_t worker_timeout_usec;
        /* We owe each worker a frame this often (at most a third of the
         * worker's own timeout on us). 0: 10 s. */
        uint64_t heartbeat_usec;
        /* Jobs in flight per worker. 0: COORDINATOR_WINDOW_DEFAULT. */
        unsigned window;
        /* > 0: at start, when no run is unfinished, create a run of this
         * many jobs. 0: only resume what the store has. */
        uint32_t run_jobs;
        /* ASSIGN payload of every job (see worker_link.h). NULL: "noop". */
        const char *job_payload;
        /* Fault injection, NULL: off. While this file exists, a batch that
         * records RESULTs and claims jobs logs "batch paused inside its
         * transaction" and waits (at most 10 s) before it commits, so a
         * test can kill the leader between claim and commit and between a
         * RESULT's receipt and its record. */
        const char *pause_batch_file;
        /* The lock timeout of the coordinator's store connection (SQLite
         * busy timeout, PostgreSQL lock_timeout). 0: the store's default. */
        uint64_t lock_timeout_usec;
        /* The longest coordinator_start() and coordinator_stop() keep their
         * caller waiting on the store; a leader's main loop passes its own
         * lock timeout (at most WatchdogSec/4). 0: no bound. A start not
         * done by then goes on in the background (its failure is then
         * reported through the event fd); a stop drops the final batches it
         * has no time for: their jobs stay in flight in the store until the
         * next start requeues them. */
        uint64_t caller_wait_usec;
};

struct coordinator_stats {
        uint64_t connections;     /* accepted or adopted */
        uint64_t assigned;        /* ASSIGN frames sent */
        uint64_t counted;         /* RESULTs that completed a job */
        uint64_t duplicates;      /* RESULTs for a job already done by that attempt */
        uint64_t stale;           /* RESULTs of an attempt superseded by a newer one */
        uint64_t requeued;        /* in-flight jobs put back when a connection ended */
        uint64_t reaped;          /* connections ended by the inactivity deadline */
        uint64_t protocol_errors; /* connections ended by a malformed frame, a
                                   * RESULT with a wrong token or replays */
        uint64_t refused;         /* RESULTs refused: wrong token, unknown job or attempt */
        uint64_t batches;         /* store transactions that recorded RESULTs or claimed
                                   * jobs: assigned / batches is the batch size achieved */
};

struct coordinator;

/* Opens the listeners, then (on the writer's thread) opens the store,
 * requeues every job left in flight by an earlier leader, lists the
 * unfinished runs it resumes (creating one if configured) and starts
 * serving. d provides the clock of the peer deadlines; it must outlive the
 * coordinator. 0 or -errno (logged): -ESTALE when the fence is already
 * refused, -EADDRINUSE, -EACCES ... With cfg.caller_wait_usec, 0 may also
 * mean "still starting": a later failure stops the coordinator by itself
 * (event fd, coordinator_result()). */
int coordinator_start(struct coordinator **ret, sdlive *d, const struct coordinator_config *cfg);

/* Serves an already connected stream socket as a worker connection and
 * takes ownership of fd (closed on failure too). No credential check:
 * the caller vouches for the peer. 0 or -errno (-EMFILE beyond
 * COORDINATOR_CONNECTIONS_MAX connections). */
int coordinator_adopt(struct coordinator *c, int fd, const char *origin);

/* Polls readable once the coordinator stopped by itself (lease lost or a
 * failure it cannot recover from). Owned by the coordinator. */
int coordinator_event_fd(const struct coordinator *c);

/* 0 while serving; -ESTALE after the lease was lost; another -errno after
 * a failure. A failed coordinator is stopped and started again by the
 * leader: a new start requeues and resumes from the store. */
int coordinator_result(const struct coordinator *c);

/* Every field of *ret (when ret is not NULL); all zero for a NULL c. */
void coordinator_stats(const struct coordinator *c, struct coordinator_stats *ret);

/* How long the writer's store work may keep failing before the
 * coordinator counts as stalled. */
#define COORDINATOR_STALL_USEC (2 * 1000000ULL)
/* 1 while every attempt at store work (job batches, creating runs) has
 * failed for COORDINATOR_STALL_USEC or more for a reason other than the
 * fence (a table locked by another client, the store unreachable), with a
 * one-line reason in why; 0 while it makes progress (or c is NULL). Never
 * blocks on the store: safe from the main loop. */
int coordinator_stalled(struct coordinator *c, char *why, size_t size);

/* Closes the listeners and every connection (requeuing their in-flight
 * jobs while the fence holds and cfg.caller_wait_usec lasts), joins the
 * threads and frees. Accepts NULL; returns NULL. */
struct coordinator *coordinator_stop(struct coordinator *c);
/* coordinator_stop() that also fills *final (when not NULL) with the
 * statistics taken once every connection ended and its last batch was
 * applied or dropped: the figures of the whole term, which agree with
 * what the store recorded (stats read while serving may trail the store
 * by the batches being committed). Every field, all zero for a NULL c. */
struct coordinator *coordinator_stop_final(struct coordinator *c, struct coordinator_stats *final);

#endif
