/* SPDX-License-Identifier: MIT */
/* The state of one worker connection's loop, shared by conn.c (the loop)
 * and conn_end.c (its last batch); private to the coordinator. */
#ifndef SDLIVE_EXAMPLE_COORDINATOR_SESSION_H
#define SDLIVE_EXAMPLE_COORDINATOR_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "coordinator-internal.h"
#include "frame.h"
#include "frame_reader.h"
#include "stream.h"

/* After a batch failed for a transient reason, claims pause this long. */
#define CLAIM_RETRY_MS 100
/* Frames handled per wake-up before the loop looks at its other duties. */
#define RECEIVE_BUDGET 64
/* RESULTs received and not yet recorded; a full list is recorded at once. */
#define PENDING_MAX (2 * COORDINATOR_WINDOW_MAX)
/* RESULTs that change nothing (replays of a counted one, stale attempts,
 * unknown jobs) a connection may send over its life. A worker that
 * reconnects resends at most the RESULTs it finished while disconnected;
 * a peer that keeps replaying is cut off. */
#define USELESS_RESULTS_MAX (4 * COORDINATOR_WINDOW_MAX)

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
        uint8_t *out;             /* the ASSIGNs of one claim, encoded */
        size_t out_size;
        unsigned useless; /* RESULTs that changed nothing */
        int64_t claim_retry_at_ms; /* 0: claims allowed */
        int64_t last_received_ms;  /* bounds how long a send may wait */
        bool idle;                 /* nothing pending at the last claim */
        bool more;                 /* receive() stopped at its budget: read again */
        uint64_t heartbeat_seq;
        char reason[160]; /* why the connection ended */
};

static inline const char *session_name(const struct session *s) {
        return s->worker[0] ? s->worker : "(no HELLO yet)";
}

/* The connection's last batch (conn_end.c), once its loop returned. */
void session_finish(struct session *s);

#endif
