/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_COORDINATOR_LINK_H
#define SDLIVE_EXAMPLE_COORDINATOR_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sdlive.h>

#include "frame.h"

/*
 * The worker's end of the job protocol (docs/protocol.md, docs/jobs.md):
 * one connection to whichever coordinator address answers — only the
 * elected leader listens — with HELLO, ASSIGNs in, RESULTs and HEARTBEATs
 * out, and an inactivity deadline on the coordinator so a frozen leader is
 * noticed and the worker reconnects. Driven by the caller's loop: the link
 * has no thread and never sleeps except in connect (bounded).
 */
typedef struct coordinator_link coordinator_link;

#define COORDINATOR_LINK_ADDRESSES_MAX 8
/* The TLS handshake's default bound, as the coordinator's
 * (COORDINATOR_PREAUTH_HANDSHAKE_MS, coordinator.h, has the derivation:
 * a handshake with client certificates that loses a segment twice at a
 * 500 ms round trip). */
#define COORDINATOR_LINK_HANDSHAKE_DEFAULT_MS 6000

typedef struct coordinator_link_config {
        /* Unix socket paths ("/...") or "host:port" / "[v6]:port". */
        const char *addresses[COORDINATOR_LINK_ADDRESSES_MAX];
        size_t n_addresses;
        const char *identity;           /* HELLO identity, non-empty */
        uint64_t timeout_usec;          /* coordinator silent this long: reconnect. 0: 30 s */
        uint64_t heartbeat_usec;        /* our heartbeat interval. 0: 10 s */
        /* How long a TLS handshake may take (the worker's loop waits for
         * it). 0: COORDINATOR_LINK_HANDSHAKE_DEFAULT_MS. */
        uint64_t handshake_timeout_usec;
        /* TCP addresses go through TLS with this client context (see
         * tls.h: the coordinator must prove the name or IP dialled). NULL:
         * in the clear, only with tcp_insecure and to a loopback literal. */
        struct ssl_ctx_st *tls;
        bool tcp_insecure;
} coordinator_link_config;

typedef struct coordinator_assign {
        uint64_t run, job;
        uint32_t attempt;
        /* A RESULT echoes its ASSIGN's token, the proof that it answers
         * that assignment (FRAME_TOKEN_SIZE, frame.h). */
        uint8_t token[FRAME_TOKEN_SIZE];
        char payload[256]; /* NUL-terminated; longer payloads are refused */
} coordinator_assign;

/* d provides the clock of the deadlines. 0 or -errno. */
int coordinator_link_new(coordinator_link **ret, sdlive *d, const coordinator_link_config *cfg);
coordinator_link *coordinator_link_free(coordinator_link *l);

/* Tries each address once, starting with the one that answered last, and
 * says HELLO on the first that accepts. 0 when connected, else the last
 * -errno (-EPERM: TCP in the clear not allowed to that address). Waits at
 * most a second per address for the connection and two for the TLS
 * handshake. */
int coordinator_link_connect(coordinator_link *l);

/* The connected socket, -1 when not connected. */
int coordinator_link_fd(const coordinator_link *l);

/* Ends the connection (logs reason); no-op when not connected. */
void coordinator_link_close(coordinator_link *l, const char *reason);

/* Takes the next ASSIGN already received, passing HEARTBEATs by. 1 with
 * every field of *ret filled, 0 when nothing more is queued (call it until then: over
 * TLS a frame may wait decrypted while the socket is quiet), < 0 when the
 * connection ended (closed, malformed frame: logged, and the link is
 * closed). *ret is written only when it returns 1. */
int coordinator_link_receive(coordinator_link *l, coordinator_assign *ret);

/* Sends the RESULT of assignment a (its run, job, attempt and token). 0,
 * or < 0 when the connection ended (link closed). */
int coordinator_link_send_result(coordinator_link *l, const coordinator_assign *a, int32_t outcome,
                                 const char *text);

/* One RESULT to send: the assignment it answers, its outcome and text. */
typedef struct coordinator_link_result {
        const coordinator_assign *a;
        int32_t outcome;
        const char *text;
} coordinator_link_result;

/* Sends the RESULTs of n assignments together: their frames encoded one
 * after the other and written in as few writes as they fill (each frame
 * whole; the peer reads them as if sent one by one). 0, or < 0 when the
 * connection ended (link closed; any of them may then be unsent). */
int coordinator_link_send_results(coordinator_link *l, const coordinator_link_result *results, size_t n);

/* > 0 when a heartbeat is due. */
int coordinator_link_heartbeat_due(const coordinator_link *l);
/* Sends a HEARTBEAT now. 0, or < 0 when the connection ended. */
int coordinator_link_heartbeat(coordinator_link *l);

/* > 0 when nothing arrived from the coordinator for the whole window. */
int coordinator_link_expired(const coordinator_link *l);

/* Microseconds until the next heartbeat or the inactivity deadline; 0
 * while frames already read wait to be received. */
uint64_t coordinator_link_wait_usec(const coordinator_link *l);

/* The address of the current (or last) connection, for logs. */
const char *coordinator_link_address(const coordinator_link *l);

#endif
