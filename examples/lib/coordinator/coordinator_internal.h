/* SPDX-License-Identifier: MIT */
/* Shared between the coordinator's files; not part of its interface. */
#ifndef SDLIVE_EXAMPLE_COORDINATOR_INTERNAL_H
#define SDLIVE_EXAMPLE_COORDINATOR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "coordinator.h"

struct conn;
struct ssl_st;

/* What a connection loop asks of the writer (writer.c): its part of the
 * writer's next batch, which the writer chains to the parts of the other
 * loops and the store applies in one fenced transaction, writing every
 * answer into the part (job_request_init()). The arrays are the caller's;
 * the answers are valid once writer_submit() returned >= 0. */
struct job_request {
        struct store_job_batch part; /* results' statuses, requeues' requeued set */
        struct store_claim_request claim; /* part.claims when it claims */
        struct store_claim claims[COORDINATOR_WINDOW_MAX]; /* claim.out: claim.got of them */
        int r;
        bool done;         /* guarded by wlock */
        pthread_cond_t wake; /* done was set: only this request's loop wakes */
        int notify_fd;     /* -1, or an eventfd the writer writes once done is set */
};

/* A request to record n_results RESULTs of results, requeue n_requeues
 * jobs of requeues and claim want (at most COORDINATOR_WINDOW_MAX) jobs
 * for worker. */
static inline void job_request_init(struct job_request *q, struct store_result *results, size_t n_results,
                                    struct store_requeue *requeues, size_t n_requeues, const char *worker,
                                    unsigned want) {
        *q = (struct job_request) {
                .part = { .results = results, .n_results = n_results, .requeues = requeues,
                          .n_requeues = n_requeues, .claims = &q->claim, .n_claims = want > 0 },
                .claim = { .worker = worker, .out = q->claims, .want = want },
                .wake = PTHREAD_COND_INITIALIZER,
                .notify_fd = -1,
        };
}

/* Runs being created whose jobs the writer still adds. */
#define COORDINATOR_FILLING_MAX 16

struct coordinator {
        sdlive *sdlive;
        struct coordinator_config cfg; /* strings below are owned copies */
        char *store_url, *lease, *holder, *store_id, *unix_path, *tcp_address, *job_payload,
                *pause_batch_file;
        uid_t *allowed_uids;
        gid_t *allowed_gids;

        int stop_fd;  /* eventfd, written once, never read: level-triggered stop */
        int event_fd; /* eventfd, written when it stops by itself */
        _Atomic int result;

        int unix_fd, tcp_fd; /* listeners, -1 when absent */
        bool listener_running;
        pthread_t listener;

        /* The coordinator's only store connection, opened and used by the
         * writer thread alone. */
        struct store *store;
        pthread_t writer;
        bool writer_running;
        /* Set once by coordinator_stop(): the monotonic time (usec) after
         * which the writer drops what it is asked, INT64_MAX without a
         * bound; 0 while serving. */
        _Atomic int64_t stop_deadline_usec;
        pthread_mutex_t wlock; /* guards the queue, the requests' done, writer_quit, filling and start_* */
        pthread_cond_t wcond;  /* a request was queued, or quit (CLOCK_MONOTONIC) */
        pthread_cond_t wstarted; /* the start-up is over (CLOCK_MONOTONIC) */
        /* The parts of the requests queued, chained: the writer's next batch. */
        struct store_job_batch *queue, **queue_tail;
        bool writer_quit;
        uint64_t filling[COORDINATOR_FILLING_MAX];
        size_t n_filling;
        bool start_done;      /* the writer's start-up is over, start_result says how */
        int start_result;
        bool start_abandoned; /* coordinator_start() stopped waiting for it */

        pthread_mutex_t lock; /* guards conns, the counts below, next_id and conn budgets */
        struct conn *conns;
        size_t n_conns;   /* threads in the list, served or handshaking or ending */
        size_t n_serving; /* authenticated: at most COORDINATOR_CONNECTIONS_MAX */
        size_t n_preauth; /* handshaking, not evicted: at most COORDINATOR_PREAUTH_MAX */
        uint64_t next_id;

        /* Guarded by stall_lock (coordinator_stalled()): since when
         * (CLOCK_MONOTONIC usec, 0: the last attempt succeeded) the
         * writer's store work has kept failing, and the first failure's
         * message. */
        pthread_mutex_t stall_lock;
        uint64_t failing_since_usec;
        char failing_why[160];

        struct {
                _Atomic uint64_t connections, assigned, counted, duplicates, stale,
                        requeued, reaped, protocol_errors, refused, batches;
        } stats;
};

/* A worker connection: its thread runs conn_main(). */
struct conn {
        struct coordinator *c;
        struct conn *next;
        uint64_t id;
        int fd;
        bool tls;    /* TCP through TLS: conn_main() does the handshake first */
        int kick_fd; /* eventfd: jobs may have become pending (the writer writes it) */
        int done_fd; /* eventfd: a request the loop queued is done (the writer writes it) */
        char origin[64];
        char source[48]; /* the budget key of a TLS peer: IPv4 address or IPv6 /64 */
        int64_t since_ms; /* when it was adopted */
        /* Guarded by c->lock: which budget the connection holds. */
        bool preauth, evicted, serving;
        pthread_t thread;
        _Atomic bool finished; /* conn_main returned; the thread can be joined */
};

/* conn.c */
void *conn_main(void *userdata);

/* connections.c */
/* coordinator_adopt() for a connection the listener accepted; tls: over
 * TCP with the configured TLS context, source its budget key (see
 * COORDINATOR_PREAUTH_MAX). Such a connection holds a handshake place
 * until conn_authenticated(). -EMFILE (caps) or -EAGAIN (its source's
 * share of the handshake budget is taken) are refusals. */
int coordinator_adopt_conn(struct coordinator *c, int fd, const char *origin, bool tls, const char *source);
/* Joins the connection threads that have returned, so finished
 * connections do not pile up; the listener calls it between accepts. */
void coordinator_reap_finished(struct coordinator *c);
/* At the stop, once the listener is joined: empties the set, joining every
 * connection thread (each ends on c->stop_fd after its last batch). */
void coordinator_join_all(struct coordinator *c);

/* budget.c */
/* With c->lock held: gives k the place it needs (a handshake place for a
 * TLS peer, else a served one), perhaps evicting another handshake. 0,
 * -EMFILE or -EAGAIN as coordinator_adopt_conn(). */
int conn_admit(struct coordinator *c, struct conn *k);
/* Takes c->lock: whether a TLS newcomer on fd from source would be
 * refused only because no byte of it has arrived yet (conn_admit() would
 * admit it talking), so that it is worth looking at again once its first
 * bytes had time to arrive. */
bool conn_admit_wants_talk(struct coordinator *c, int fd, const char *source);
/* With c->lock held: conn_release(). */
void conn_release_locked(struct coordinator *c, struct conn *k);
/* The TLS handshake of k (a TCP connection), bounded in time (a silent or
 * slow client is cut off) and before anything else is spent on it; a
 * certificate proven trades k's handshake place for a served one (a
 * refusal is logged). 0 with *ret set, or -errno. */
int conn_handshake(struct conn *k, struct ssl_st **ret);
/* The handshake of k proved its certificate: it trades its handshake place
 * for a served one. -EMFILE when every served place is taken. */
int conn_authenticated(struct coordinator *c, struct conn *k);
/* k ends: whatever place it holds is free for another. */
void conn_release(struct coordinator *c, struct conn *k);

/* writer.c */
/* Opens the store and resumes (see coordinator_start()), then serves the
 * queue until told to quit. */
void *writer_main(void *userdata);
/* Queues q and waits until the writer applied it: 0 or the batch's
 * -errno (nothing of it committed); -ESHUTDOWN once the writer quit (or
 * never started); -ECANCELED when the coordinator is stopping and its time
 * for store work is over. */
int writer_submit(struct coordinator *c, struct job_request *q);
/* writer_submit() in two steps, so a loop can go on serving its
 * connection while the writer applies q: writer_queue() queues it and
 * returns at once (-ESHUTDOWN, q then done, once the writer quit);
 * writer_done() says whether the writer completed it (and wrote
 * q->notify_fd); writer_wait() waits for that and returns as
 * writer_submit(). A queued request must be waited for with writer_wait()
 * before its memory (or its notify_fd) goes. */
int writer_queue(struct coordinator *c, struct job_request *q);
bool writer_done(struct coordinator *c, struct job_request *q);
int writer_wait(struct coordinator *c, struct job_request *q);

/* listen.c */
/* Creates the unix listener at path, mode 0666, in a trusted directory
 * (trusted_dir.h; refused otherwise, logged), replacing only a stale socket
 * of ours and never following a link. Returns the fd or -errno. */
int listen_unix(const char *path);
/* Removes path if it is still a socket of ours in a trusted directory. */
void listen_unix_remove(const char *path);
/* The TCP listener of c->cfg: -EPERM (logged) when it would serve in the
 * clear without tcp_insecure, or in the clear on a non-loopback address. */
int listen_tcp(const struct coordinator *c);
/* 0 when the unix peer's credentials are allowed, else -EPERM with a
 * reason in why; -errno when they cannot be read. */
int listen_peer_allowed(const struct coordinator *c, int fd, char *why, size_t size);
void *listener_main(void *userdata);

/* status.c: calls nothing else of the coordinator. */
/* True once coordinator_stop() began. */
bool coordinator_stopping(const struct coordinator *c);
/* Stops the coordinator by itself with result r (first caller wins). */
void coordinator_fail(struct coordinator *c, int r);
/* The writer's account of one attempt at store work: r < 0 other than
 * -ESTALE starts (or continues) a stall, r >= 0 ends it. */
void coordinator_note_store_work(struct coordinator *c, int r);
/* Logs "coordinator: <message>" at warning level for a connection refused
 * before HELLO, at most 10 per 10 s across the process: a peer cannot grow
 * the log by reconnecting. The lines not logged are counted in the next. */
void coordinator_log_refusal(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
