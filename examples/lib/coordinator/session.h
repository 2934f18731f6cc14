/* SPDX-License-Identifier: MIT */
/* The state of one worker connection's loop, shared by conn.c (the loop)
 * and conn_end.c (its last batch); private to the coordinator. */
#ifndef SDLIVE_EXAMPLE_COORDINATOR_SESSION_H
#define SDLIVE_EXAMPLE_COORDINATOR_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "coordinator_internal.h"
#include "frame.h"
#include "frame_reader.h"
#include "stream.h"

/* After a batch failed for a transient reason, claims pause this long. */
#define CLAIM_RETRY_MS 100
/* A loop whose claim came back short waits for the writer to wake it (new
 * jobs, requeued ones), and asks again on its own after this long,
 * doubling up to the most while claims keep finding nothing: jobs can
 * also turn pending unseen (a batch given up on that the server rolls
 * back later, a run created by another holder of the fence). */
#define IDLE_RECHECK_MIN_MS 250
#define IDLE_RECHECK_MAX_MS 4000
/* Frames handled per wake-up before the loop looks at its other duties. */
#define RECEIVE_BUDGET 64
/* RESULTs received and not yet recorded; a full list is recorded at once. */
#define PENDING_MAX (2 * COORDINATOR_WINDOW_MAX)
/* RESULTs that change nothing (replays of a counted one, stale attempts,
 * unknown jobs) a connection may send over its life. A worker that
 * reconnects resends at most the RESULTs it finished while disconnected;
 * a peer that keeps replaying is cut off. */
#define USELESS_RESULTS_MAX (4 * COORDINATOR_WINDOW_MAX)

/* Requests a loop may have queued to the writer at once: while the writer
 * applies one, the RESULTs that arrive go in the next, so a store
 * transaction takes the RESULTs of every connection, not only of those
 * whose last request is done. */
#define REQUESTS_MAX 2

/* A request queued to the writer, with its own copy of the RESULTs it
 * records (those arriving meanwhile wait in session.pending). */
struct request_slot {
        struct job_request q;
        struct store_result results[PENDING_MAX];
        bool ours[PENDING_MAX];
};

struct inflight {
        uint64_t run;
        uint32_t job;
        uint32_t attempt;
};

struct session {
        struct conn *k;
        struct coordinator *c;
        struct stream st; /* the connection, through TLS when k->tls */
        sdlive_peer *peer;
        frame_decoder *dec;
        struct frame_reader reader; /* the frames read, in the clear */
        char worker[STORE_NAME_MAX + 1]; /* HELLO identity, "" before it */
        struct inflight inflight[COORDINATOR_WINDOW_MAX];
        unsigned n_inflight;
        struct store_result pending[PENDING_MAX];
        bool pending_ours[PENDING_MAX]; /* the RESULT's job was in our window */
        unsigned n_pending;
        /* Queued to the writer, oldest first (the writer completes them in
         * that order): n_queued_results RESULTs, which with n_pending never
         * exceed PENDING_MAX, and claims of up to n_queued_claims jobs,
         * which with n_inflight never exceed the window. */
        struct request_slot req[REQUESTS_MAX];
        unsigned req_first, n_req, n_queued_results, n_queued_claims;
        uint8_t *out;             /* the ASSIGNs of one claim, encoded */
        size_t out_size;
        unsigned useless; /* RESULTs that changed nothing */
        int64_t claim_retry_at_ms; /* 0: claims allowed */
        int64_t last_received_ms;  /* bounds how long a send may wait */
        bool idle;                 /* nothing pending at the last claim */
        int64_t idle_recheck_at_ms; /* when an idle loop asks again */
        int64_t idle_recheck_ms;    /* the wait after the next short claim; 0: the least */
        bool more;                 /* receive() stopped at its budget: read again */
        uint64_t heartbeat_seq;
        char reason[160]; /* why the connection ended */
};

static inline const char *session_name(const struct session *s) {
        return s->worker[0] ? s->worker : "(no HELLO yet)";
}

/* The RESULTs of slot, from its i-th on, go back to pending (with
 * answered, not those the store counted): the next request, or the last
 * batch, records them (and requeues their jobs). Room is kept for them:
 * n_pending + n_queued_results <= PENDING_MAX. */
void session_return_results(struct session *s, const struct request_slot *slot, size_t i, bool answered);
/* Once the loop returned (conn_end.c): waits for every request it queued,
 * their claimed jobs joining the window and their RESULTs not counted
 * going back to pending, for the last batch to requeue and record. */
void session_settle(struct session *s);

/* The connection's last batch (conn_end.c), once its loop returned. */
void session_finish(struct session *s);

#endif
