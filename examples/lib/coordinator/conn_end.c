/* SPDX-License-Identifier: MIT */
/* The last batch of a worker connection whose loop returned: the requests
 * it queued waited for, its pending RESULTs recorded, its jobs in flight
 * requeued. */
#include "session.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>

#include "log.h"

/* The final batch of an ending connection is retried this often before
 * the coordinator gives up and fails (a restart requeues everything). */
#define REQUEUE_TRIES 5

/* Waits ms for a retry, or less when the coordinator stops meanwhile. */
static void retry_pause(struct session *s, int ms) {
        (void) poll(&(struct pollfd) { .fd = s->c->stop_fd, .events = POLLIN }, 1, ms);
}

void session_return_results(struct session *s, const struct request_slot *slot, size_t i, bool answered) {
        for (; i < slot->q.part.n_results; i++) {
                if (answered && slot->results[i].status == STORE_RECORD_COUNTED)
                        continue;
                s->pending_ours[s->n_pending] = slot->ours[i];
                s->pending[s->n_pending++] = slot->results[i];
        }
}

void session_settle(struct session *s) {
        while (s->n_req) {
                struct request_slot *slot = &s->req[s->req_first];
                const struct job_request *q = &slot->q;
                int r = writer_wait(s->c, &slot->q);
                s->req_first = (s->req_first + 1) % REQUESTS_MAX;
                s->n_req--;
                s->n_queued_results -= (unsigned) q->part.n_results;
                s->n_queued_claims -= q->claim.want;
                for (unsigned i = 0; r >= 0 && i < q->claim.got; i++)
                        s->inflight[s->n_inflight++] = (struct inflight) { q->claims[i].run, q->claims[i].job,
                                                                           q->claims[i].attempt };
                for (size_t i = 0; r >= 0 && i < q->part.n_results; i++)
                        if (slot->results[i].status == STORE_RECORD_COUNTED)
                                atomic_fetch_add(&s->c->stats.counted, 1);
                session_return_results(s, slot, 0, r >= 0);
        }
}

/* The connection's last batch: RESULTs still pending are recorded and
 * every job still in flight here (and any of our window whose RESULT
 * could not be recorded) goes back to pending; a job another connection
 * holds is never requeued for a RESULT naming it here. While serving, a
 * batch the store will not take is retried a few times, then fails the
 * coordinator (a restart requeues everything). Once the coordinator stops
 * there is one try, within the stop's time for store work: what it could
 * not do stays in flight in the store, and the next start (of this leader
 * or the next) requeues it; RESULTs not recorded are work done again. */
void session_finish(struct session *s) {
        struct store_requeue rq[COORDINATOR_WINDOW_MAX + PENDING_MAX];
        struct job_request q;
        size_t n_requeues = 0;
        unsigned requeued = 0;
        int r = 0;

        for (unsigned i = 0; i < s->n_inflight; i++)
                rq[n_requeues++] = (struct store_requeue) { s->inflight[i].run, s->inflight[i].job,
                                                            s->inflight[i].attempt, false };
        for (unsigned i = 0; i < s->n_pending; i++)
                if (s->pending_ours[i])
                        rq[n_requeues++] = (struct store_requeue) { s->pending[i].run, s->pending[i].job,
                                                                    s->pending[i].attempt, false };
        for (int attempt = 0; attempt < REQUEUE_TRIES && (s->n_pending || n_requeues); attempt++) {
                job_request_init(&q, s->pending, s->n_pending, rq, n_requeues, s->worker, 0);
                r = writer_submit(s->c, &q);
                if (r >= 0 || r == -ESTALE || r == -ESHUTDOWN || r == -ECANCELED || atomic_load(&s->c->result) ||
                    coordinator_stopping(s->c))
                        break;
                retry_pause(s, CLAIM_RETRY_MS << attempt);
        }
        bool ending = r == -ESTALE || r == -ESHUTDOWN || atomic_load(&s->c->result) || coordinator_stopping(s->c);
        if (r < 0 && !ending) {
                log_error("coordinator: cannot requeue the jobs of worker %s: %s", session_name(s), strerror(-r));
                coordinator_fail(s->c, r);
        }
        if (r >= 0) {
                for (size_t i = 0; i < s->n_pending; i++)
                        if (s->pending[i].status == STORE_RECORD_COUNTED)
                                atomic_fetch_add(&s->c->stats.counted, 1);
                for (size_t i = 0; i < n_requeues; i++)
                        requeued += rq[i].requeued;
        }
        if (requeued)
                atomic_fetch_add(&s->c->stats.requeued, requeued);
        if (r < 0 && r != -ESTALE && n_requeues)
                log_notice("coordinator: worker %s disconnected (%s); %zu in-flight job(s) left in flight in "
                           "the store (%s): the next start requeues them",
                           session_name(s), s->reason, n_requeues, strerror(-r));
        else if (s->worker[0])
                log_notice("coordinator: worker %s disconnected (%s); %u in-flight job(s) requeued",
                           session_name(s), s->reason, requeued);
        else
                log_info("coordinator: connection %" PRIu64 " (%s) ended before HELLO (%s)", s->k->id,
                         s->k->origin, s->reason);
}
