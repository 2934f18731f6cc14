/* SPDX-License-Identifier: MIT */
/*
 * One worker connection: HELLO, a window of claimed jobs in flight,
 * RESULTs recorded (fenced, idempotent, token-guarded) through the writer
 * (the loop goes on serving while the writer applies its requests),
 * heartbeats both ways and the worker's inactivity deadline. However the
 * connection ends, its in-flight jobs are requeued for another worker. A
 * RESULT without its assignment's token, or a stream of RESULTs that
 * change nothing, ends the connection as a protocol violation.
 */
#include "session.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"
#include "stream.h"
#include "tls.h"
#include "monotonic.h"

/* How long a send may wait for socket buffer space: the worker's
 * remaining inactivity window, so a frozen worker whose buffer is full
 * cannot hold us past its deadline. */
static int send_timeout_ms(const struct session *s) {
        int64_t left = s->last_received_ms + (int64_t) (s->c->cfg.worker_timeout_usec / 1000) - monotonic_ms();

        return left > 1 ? (int) (left > INT32_MAX ? INT32_MAX : left) : 1;
}

/* Sends one frame. */
static int send_frame(struct session *s, const frame *f) {
        int r = stream_send_frame(&s->st, f, send_timeout_ms(s));

        if (r < 0) {
                snprintf(s->reason, sizeof(s->reason), "sending %s: %s", frame_type_name(f->type),
                         frame_strerror(r));
                return r;
        }
        sdlive_peer_sent(s->peer);
        return 0;
}

/* Sends the ASSIGNs of n claimed jobs in one write. */
static int send_assigns(struct session *s, const struct store_claim *jobs, unsigned n) {
        const char *payload = s->c->cfg.job_payload;
        frame f = { .type = FRAME_ASSIGN,
                    .assign = { .payload = (const uint8_t *) payload, .payload_len = strlen(payload) } };
        size_t used = 0;
        int size = frame_encoded_size(&f), r = size;

        if (size > 0 && s->out_size < (size_t) size * n) {
                uint8_t *p = realloc(s->out, (size_t) size * COORDINATOR_WINDOW_MAX);
                r = p ? size : -ENOMEM;
                if (p) {
                        s->out = p;
                        s->out_size = (size_t) size * COORDINATOR_WINDOW_MAX;
                }
        }
        for (unsigned i = 0; i < n && r > 0; i++) {
                f.assign.run = jobs[i].run;
                f.assign.job = jobs[i].job;
                f.assign.attempt = jobs[i].attempt;
                memcpy(f.assign.token, jobs[i].token, FRAME_TOKEN_SIZE);
                r = frame_encode(&f, s->out + used, s->out_size - used);
                used += r > 0 ? (size_t) r : 0;
        }
        if (r > 0)
                r = stream_send(&s->st, s->out, used, send_timeout_ms(s));
        if (r < 0) {
                snprintf(s->reason, sizeof(s->reason), "sending ASSIGN: %s", frame_strerror(r));
                return r;
        }
        sdlive_peer_sent(s->peer);
        atomic_fetch_add(&s->c->stats.assigned, n);
        return 0;
}

/* What the store said about one RESULT. < 0 ends the connection. */
static int result_done(struct session *s, const struct store_result *x) {
        switch (x->status) {
        case STORE_RECORD_COUNTED:
                atomic_fetch_add(&s->c->stats.counted, 1);
                return 0;
        case STORE_RECORD_DUPLICATE:
                atomic_fetch_add(&s->c->stats.duplicates, 1);
                break;
        case STORE_RECORD_STALE_ATTEMPT:
                atomic_fetch_add(&s->c->stats.stale, 1);
                break;
        case -EPERM:
                atomic_fetch_add(&s->c->stats.refused, 1);
                atomic_fetch_add(&s->c->stats.protocol_errors, 1);
                snprintf(s->reason, sizeof(s->reason), "RESULT for %" PRIu64 "/%u attempt %u without "
                         "its assignment's token", x->run, x->job, x->attempt);
                return -EPERM;
        default: /* -ENOENT, -EINVAL: names no assignment we made */
                atomic_fetch_add(&s->c->stats.refused, 1);
                log_info("coordinator: worker %s: RESULT for %" PRIu64 "/%u attempt %u refused: %s",
                         session_name(s), x->run, x->job, x->attempt,
                         x->status == -ENOENT ? "no such job" : "attempt never assigned");
                break;
        }
        if (++s->useless > USELESS_RESULTS_MAX) {
                atomic_fetch_add(&s->c->stats.protocol_errors, 1);
                snprintf(s->reason, sizeof(s->reason), "more than %d RESULTs that change nothing: cut off",
                         USELESS_RESULTS_MAX);
                return -EBADMSG;
        }
        return 0;
}

/* After a short claim: no more claims until the writer wakes the loop or
 * the recheck is due, sooner when the claim found some jobs. */
static void go_idle(struct session *s, unsigned got) {
        if (got || !s->idle_recheck_ms)
                s->idle_recheck_ms = IDLE_RECHECK_MIN_MS;
        s->idle = true;
        s->idle_recheck_at_ms = monotonic_ms() + s->idle_recheck_ms;
        s->idle_recheck_ms = s->idle_recheck_ms * 2 > IDLE_RECHECK_MAX_MS ? IDLE_RECHECK_MAX_MS
                                                                          : s->idle_recheck_ms * 2;
}

/* Woken by the writer, or the recheck is due: the next request claims. */
static void wake_from_idle(struct session *s, bool kicked) {
        if (kicked)
                s->idle_recheck_ms = 0;
        s->idle = false;
}

/* Takes the writer's answer r to the request of slot: its claims join the
 * window and are sent, each RESULT's status (written by the store) is
 * taken. A transient store failure returns the RESULTs to pending for the
 * next try and pauses claims; the lease lost ends the connection. */
static int take_answers(struct session *s, const struct request_slot *slot, int r) {
        const struct job_request *q = &slot->q;

        s->n_queued_results -= (unsigned) q->part.n_results;
        s->n_queued_claims -= q->claim.want;
        if (r < 0) {
                session_return_results(s, slot, 0, false);
                if (r == -ESTALE || r == -ESHUTDOWN || atomic_load(&s->c->result)) {
                        snprintf(s->reason, sizeof(s->reason), "%s",
                                 r == -ESTALE ? "lease lost" : "coordinator stopping");
                        return r;
                }
                s->claim_retry_at_ms = monotonic_ms() + CLAIM_RETRY_MS;
                return 0;
        }
        /* The claims join the window before any verdict is taken: however
         * a verdict ends the connection, finish() requeues them, and the
         * RESULTs from the one that ended it on (a refused RESULT's job
         * included). */
        for (unsigned i = 0; i < q->claim.got; i++) {
                const struct store_claim *j = &q->claims[i];
                s->inflight[s->n_inflight++] = (struct inflight) { j->run, j->job, j->attempt };
        }
        /* Completions after a verdict that ends the connection are counted
         * too, so the statistics follow what the store recorded. */
        int verdict = 0;
        for (size_t i = 0; i < q->part.n_results; i++) {
                if (verdict < 0) {
                        if (slot->results[i].status == STORE_RECORD_COUNTED)
                                atomic_fetch_add(&s->c->stats.counted, 1);
                        continue;
                }
                verdict = result_done(s, &slot->results[i]);
                if (verdict < 0)
                        session_return_results(s, slot, i, true);
        }
        if (verdict < 0)
                return verdict;
        if (q->claim.want && q->claim.got < q->claim.want)
                go_idle(s, q->claim.got);
        if (q->claim.got && !store_fence_may_act(&s->c->cfg.fence)) {
                /* The batch began in time but returned after the leader's
                 * deadline for acting: its jobs are not handed out (they
                 * stay assigned in the store, and the next term requeues
                 * them). */
                snprintf(s->reason, sizeof(s->reason), "lease lost (the leader's time to act ran out)");
                return -ESTALE;
        }
        if (q->claim.got && coordinator_stopping(s->c)) {
                /* Nor once the coordinator stops: the stop says no job is
                 * handed out from then on (the jobs are requeued as the
                 * connection ends, or by the next term). */
                snprintf(s->reason, sizeof(s->reason), "coordinator stopping");
                return -ESHUTDOWN;
        }
        return q->claim.got ? send_assigns(s, q->claims, q->claim.got) : 0;
}

/* Takes the answers of the queued requests the writer completed, oldest
 * first; with wait, of every queued request, waiting for each. */
static int collect(struct session *s, bool wait) {
        while (s->n_req) {
                struct request_slot *slot = &s->req[s->req_first];
                if (!wait && !writer_done(s->c, &slot->q))
                        return 0;
                int r = writer_wait(s->c, &slot->q);
                s->req_first = (s->req_first + 1) % REQUESTS_MAX;
                s->n_req--;
                r = take_answers(s, slot, r);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Queues the pending RESULTs and the claims that fill the window as one
 * request to the writer, when a slot is free; the loop goes on serving
 * the connection meanwhile. */
static void queue_next(struct session *s) {
        int64_t now = monotonic_ms();
        struct request_slot *slot;
        unsigned want = 0;

        if (!s->worker[0] || s->n_req == REQUESTS_MAX)
                return;
        if (s->claim_retry_at_ms && now < s->claim_retry_at_ms)
                return;
        s->claim_retry_at_ms = 0;
        if (s->idle && now >= s->idle_recheck_at_ms)
                wake_from_idle(s, false);
        if (!s->idle)
                want = s->c->cfg.window - s->n_inflight - s->n_queued_claims;
        if (!s->n_pending && !want)
                return;
        slot = &s->req[(s->req_first + s->n_req) % REQUESTS_MAX];
        memcpy(slot->results, s->pending, s->n_pending * sizeof(s->pending[0]));
        memcpy(slot->ours, s->pending_ours, s->n_pending * sizeof(s->pending_ours[0]));
        job_request_init(&slot->q, slot->results, s->n_pending, NULL, 0, s->worker, want);
        slot->q.notify_fd = s->k->done_fd;
        s->n_queued_results += s->n_pending;
        s->n_queued_claims += want;
        s->n_pending = 0;
        s->n_req++;
        /* A writer that quit completes it at once: collect() says so. */
        (void) writer_queue(s->c, &slot->q);
}

/* Takes what the writer answered and queues what is pending. */
static int exchange(struct session *s) {
        int r = collect(s, false);

        if (r >= 0)
                queue_next(s);
        return r;
}

static bool take_inflight(struct session *s, uint64_t run, uint64_t job, uint32_t attempt) {
        for (unsigned i = 0; i < s->n_inflight; i++)
                if (s->inflight[i].run == run && s->inflight[i].job == job &&
                    s->inflight[i].attempt == attempt) {
                        s->inflight[i] = s->inflight[--s->n_inflight];
                        return true;
                }
        return false;
}

static int handle_result(struct session *s, const frame *f) {
        struct store_result *x;
        bool ours;

        if (f->result.job > UINT32_MAX) {
                snprintf(s->reason, sizeof(s->reason), "RESULT for job %" PRIu64 " out of range", f->result.job);
                return -EBADMSG;
        }
        ours = take_inflight(s, f->result.run, f->result.job, f->result.attempt);
        if (!ours)
                log_debug("coordinator: worker %s: late RESULT for %" PRIu64 "/%" PRIu64
                         " attempt %u (not in flight here)", session_name(s), f->result.run, f->result.job,
                         f->result.attempt);
        if (s->n_pending + s->n_queued_results == PENDING_MAX) {
                /* Full: what is queued is waited for, and a full list
                 * recorded at once. */
                int r = collect(s, true);
                if (r >= 0 && s->n_pending == PENDING_MAX) {
                        queue_next(s);
                        r = collect(s, true);
                }
                if (r < 0)
                        return r;
                if (s->n_pending + s->n_queued_results == PENDING_MAX) {
                        snprintf(s->reason, sizeof(s->reason), "RESULTs cannot be recorded now");
                        return -EAGAIN;
                }
        }
        s->pending_ours[s->n_pending] = ours;
        x = &s->pending[s->n_pending++];
        *x = (struct store_result) { .run = f->result.run, .job = (uint32_t) f->result.job,
                                     .attempt = f->result.attempt, .outcome = f->result.outcome };
        memcpy(x->token, f->result.token, FRAME_TOKEN_SIZE);
        return 0;
}

static int handle_frame(struct session *s, const frame *f) {
        if (!s->worker[0]) {
                if (f->type != FRAME_HELLO) {
                        snprintf(s->reason, sizeof(s->reason), "%s before HELLO", frame_type_name(f->type));
                        return -EBADMSG;
                }
                if (f->hello.protocol != FRAME_PROTOCOL_VERSION) {
                        snprintf(s->reason, sizeof(s->reason), "job protocol %u, we serve %u",
                                 f->hello.protocol, (unsigned) FRAME_PROTOCOL_VERSION);
                        return -EPROTONOSUPPORT;
                }
                /* Over TLS the name is the one the certificate proves. */
                if (s->st.ssl && !tls_peer_is(s->st.ssl, f->hello.identity)) {
                        char proven[STORE_NAME_MAX + 1];
                        snprintf(s->reason, sizeof(s->reason), "HELLO as '%.64s' but the certificate is '%s'",
                                 f->hello.identity, tls_peer_name(s->st.ssl, proven, sizeof(proven)));
                        return -EACCES;
                }
                /* The store keeps at most STORE_NAME_MAX bytes and a database
                 * may insist on valid UTF-8: keep the name ASCII. */
                snprintf(s->worker, sizeof(s->worker), "%s", f->hello.identity);
                for (char *p = s->worker; *p; p++)
                        if ((unsigned char) *p >= 0x80)
                                *p = '?';
                log_info("coordinator: worker %s connected (%s, connection %" PRIu64 ")",
                         s->worker, s->k->origin, s->k->id);
                return 0;
        }
        switch (f->type) {
        case FRAME_RESULT:
                return handle_result(s, f);
        case FRAME_HEARTBEAT:
                return 0;
        default:
                snprintf(s->reason, sizeof(s->reason), "unexpected %s", frame_type_name(f->type));
                return -EBADMSG;
        }
}

/* Reads what is there and handles the complete frames, at most
 * RECEIVE_BUDGET per call so a peer that never stops sending cannot keep
 * the loop from its stop fd and deadlines; s->more then says to come back
 * without waiting (over TLS a decrypted frame may wait while the socket
 * is quiet, and in the clear frames wait read in s->reader). 1 when the worker closed cleanly, 0 to go on, < 0 to end the
 * connection (reason set). */
static int receive(struct session *s) {
        frame f;

        s->more = false;
        for (unsigned n = 0;; n++) {
                if (n == RECEIVE_BUDGET) {
                        s->more = true;
                        return 0;
                }
                int r = frame_reader_next(&s->reader, &s->st, s->dec, &f);
                if (r == -EAGAIN)
                        return 0;
                if (r == 0) {
                        snprintf(s->reason, sizeof(s->reason), "closed by the worker");
                        return 1;
                }
                if (r == FRAME_ETRUNCATED) {
                        snprintf(s->reason, sizeof(s->reason), "closed inside a frame");
                        return r;
                }
                if (r < 0 && r > -4096) {
                        snprintf(s->reason, sizeof(s->reason), "receiving: %s", strerror(-r));
                        return r;
                }
                if (r < 0) {
                        atomic_fetch_add(&s->c->stats.protocol_errors, 1);
                        snprintf(s->reason, sizeof(s->reason), "malformed frame: %s (%s)",
                                 frame_strerror(r), frame_decoder_reason(s->dec));
                        return r;
                }
                sdlive_peer_received(s->peer);
                s->last_received_ms = monotonic_ms();
                r = handle_frame(s, &f);
                if (r < 0)
                        return r;
        }
}

static int heartbeat(struct session *s) {
        frame f = { .type = FRAME_HEARTBEAT, .heartbeat = { .has_seq = true, .seq = ++s->heartbeat_seq } };

        return send_frame(s, &f);
}

/* The lesser of t and the milliseconds to at_ms (0: none set). */
static int until(int64_t at_ms, int t) {
        int64_t left;

        if (!at_ms)
                return t;
        left = at_ms - monotonic_ms();
        if (left < 0)
                left = 0;
        return t < 0 || left < t ? (int) left : t;
}

static int poll_timeout(const struct session *s) {
        int t = sdlive_peer_poll_timeout(s->peer);

        if (s->more)
                return 0;
        /* With every request slot taken nothing can be queued: the writer's
         * answer (done_fd) wakes the loop first. */
        if (!s->worker[0] || s->n_req == REQUESTS_MAX)
                return t;
        t = until(s->claim_retry_at_ms, t);
        return s->idle ? until(s->idle_recheck_at_ms, t) : t;
}

static void drain(int fd) {
        uint64_t v;

        (void) !read(fd, &v, sizeof(v));
}

/* The connection loop. Returns when the connection must end; s->reason
 * says why. */
static void serve(struct session *s) {
        struct pollfd p[4] = {
                { .fd = s->k->fd, .events = POLLIN },
                { .fd = s->c->stop_fd, .events = POLLIN },
                { .fd = s->k->kick_fd, .events = POLLIN },
                { .fd = s->k->done_fd, .events = POLLIN },
        };

        for (;;) {
                if (exchange(s) < 0)
                        return;
                if (sdlive_peer_expired(s->peer)) {
                        atomic_fetch_add(&s->c->stats.reaped, 1);
                        snprintf(s->reason, sizeof(s->reason), "silent for %" PRIu64 " ms: reaped",
                                 s->c->cfg.worker_timeout_usec / 1000);
                        return;
                }
                if (sdlive_peer_heartbeat_due(s->peer) && heartbeat(s) < 0)
                        return;
                int r = poll(p, 4, poll_timeout(s));
                if (r < 0 && errno != EINTR) {
                        snprintf(s->reason, sizeof(s->reason), "poll: %s", strerror(errno));
                        return;
                }
                if (r <= 0)
                        continue;
                if (p[1].revents) {
                        snprintf(s->reason, sizeof(s->reason), "coordinator stopping");
                        return;
                }
                if (p[2].revents) {
                        drain(s->k->kick_fd);
                        wake_from_idle(s, true);
                }
                if (p[3].revents)
                        drain(s->k->done_fd); /* exchange() takes the answers */
                if ((p[0].revents || s->more) && receive(s) != 0)
                        return;
        }
}


void *conn_main(void *userdata) {
        struct conn *k = userdata;
        struct session s = { .k = k, .c = k->c, .st = { .fd = k->fd } };

        snprintf(s.reason, sizeof(s.reason), "setup failed");
        if (k->tls && conn_handshake(k, &s.st.ssl) < 0)
                goto out;
        if (sdlive_peer_new(k->c->sdlive, k->c->cfg.worker_timeout_usec, k->c->cfg.heartbeat_usec,
                            &s.peer) < 0 ||
            frame_decoder_new(&s.dec) < 0)
                goto out;
        s.last_received_ms = monotonic_ms();
        serve(&s);
        session_settle(&s);
        session_finish(&s);
out:
        /* Before the close: an eviction shuts down only a socket still open. */
        conn_release(k->c, k);
        tls_close(s.st.ssl);
        close(k->fd);
        frame_decoder_free(s.dec);
        sdlive_peer_free(s.peer);
        free(s.out);
        atomic_store(&k->finished, true);
        return NULL;
}
