/* SPDX-License-Identifier: MIT */
/*
 * One worker connection: HELLO, a window of claimed jobs in flight,
 * RESULTs recorded (fenced, idempotent), heartbeats both ways and the
 * worker's inactivity deadline. However the connection ends, its in-flight
 * jobs are requeued for another worker.
 */
#include "coordinator-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"

/* After a store call failed for a transient reason, claims pause this long. */
#define CLAIM_RETRY_MS 100
/* Requeueing when the connection ends is retried this often before the
 * coordinator gives up and fails (a restart requeues everything). */
#define REQUEUE_TRIES 5
#define READ_CHUNK 4096

struct inflight {
        uint64_t run;
        uint32_t job;
        uint32_t attempt;
};

struct session {
        struct conn *k;
        struct coordinator *c;
        struct store *store;
        sdlive_peer *peer;
        frame_decoder *dec;
        char worker[STORE_NAME_MAX + 1]; /* HELLO identity, "" before it */
        struct inflight inflight[COORDINATOR_WINDOW_MAX];
        unsigned n_inflight;
        int64_t claim_retry_at_ms; /* 0: claims allowed */
        int64_t last_received_ms;  /* bounds how long a send may wait */
        bool idle;                 /* nothing pending at the last claim */
        uint64_t heartbeat_seq;
        char reason[160]; /* why the connection ended */
};

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *name(const struct session *s) {
        return s->worker[0] ? s->worker : "(no HELLO yet)";
}

/* A store error: the fence refused ends the whole coordinator; anything
 * else is this connection's problem. Returns r. */
static int store_trouble(struct session *s, int r, const char *what) {
        if (r == -ESTALE)
                coordinator_fail(s->c, r);
        else
                log_warning("coordinator: worker %s: %s: %s", name(s), what, store_errmsg(s->store));
        return r;
}

/* Sends one frame. The worker's remaining inactivity window bounds the
 * wait for socket buffer space, so a frozen worker whose buffer is full
 * cannot hold us past its deadline. */
static int send_frame(struct session *s, const frame *f) {
        int64_t left = s->last_received_ms + (int64_t) (s->c->cfg.worker_timeout_usec / 1000) - now_ms();
        int r = frame_send(s->k->fd, f, left > 1 ? (int) (left > INT32_MAX ? INT32_MAX : left) : 1);

        if (r < 0) {
                snprintf(s->reason, sizeof(s->reason), "sending %s: %s", frame_type_name(f->type),
                         frame_strerror(r));
                return r;
        }
        sdlive_peer_sent(s->peer);
        return 0;
}

static int assign_one(struct session *s) {
        struct store_job job;
        const char *payload = s->c->cfg.job_payload;
        int r;

        r = store_job_claim(s->store, &s->c->cfg.fence, 0, s->worker, &job);
        if (r < 0) {
                store_trouble(s, r, "claiming a job");
                if (r == -ESTALE) {
                        snprintf(s->reason, sizeof(s->reason), "lease lost");
                        return r;
                }
                s->claim_retry_at_ms = now_ms() + CLAIM_RETRY_MS;
                return 0;
        }
        if (r == 0) {
                s->idle = true;
                return 0;
        }
        s->inflight[s->n_inflight++] = (struct inflight) { job.run, job.job, job.attempt };
        frame f = { .type = FRAME_ASSIGN,
                    .assign = { .run = job.run, .job = job.job, .attempt = job.attempt,
                                .payload = (const uint8_t *) payload,
                                .payload_len = strlen(payload) } };
        r = send_frame(s, &f);
        if (r < 0)
                return r;
        atomic_fetch_add(&s->c->stats.assigned, 1);
        return 1;
}

static int fill_window(struct session *s) {
        int r;

        if (!s->worker[0] || s->idle)
                return 0;
        if (s->claim_retry_at_ms && now_ms() < s->claim_retry_at_ms)
                return 0;
        s->claim_retry_at_ms = 0;
        while (s->n_inflight < s->c->cfg.window && !s->idle && !s->claim_retry_at_ms) {
                r = assign_one(s);
                if (r < 0)
                        return r;
        }
        return 0;
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

/* The runs table alone says whether a run is still unfinished (one row per
 * run); store_run_read() aggregates over the jobs, so it is only called
 * once the run is complete. */
static void log_if_run_complete(struct session *s, uint64_t run) {
        uint64_t unfinished[16];
        struct store_run info;
        int n = store_runs_unfinished(s->store, unfinished, 16);

        if (n < 0 || n == 16)
                return;
        for (int i = 0; i < n; i++)
                if (unfinished[i] == run)
                        return;
        if (store_run_read(s->store, run, &info) >= 0 && info.done_count == info.total)
                log_notice("coordinator: run %" PRIu64 " complete: %u jobs, %u redelivered, "
                           "%u executed more than once",
                           run, info.total, info.jobs_redelivered, info.jobs_reexecuted);
}

static int handle_result(struct session *s, const frame *f) {
        uint64_t run = f->result.run, job = f->result.job;
        uint32_t attempt = f->result.attempt;
        bool ours = take_inflight(s, run, job, attempt);
        int r;

        if (job > UINT32_MAX) {
                snprintf(s->reason, sizeof(s->reason), "RESULT for job %" PRIu64 " out of range", job);
                return -EBADMSG;
        }
        r = store_job_record(s->store, &s->c->cfg.fence, run, (uint32_t) job, attempt,
                             f->result.outcome);
        if (r == -ENOENT || r == -EINVAL) {
                /* A worker's mistake, not ours: refuse it and go on. */
                log_warning("coordinator: worker %s: RESULT for %" PRIu64 "/%" PRIu64 " attempt %u "
                            "refused: %s", name(s), run, job, attempt, store_errmsg(s->store));
                return 0;
        }
        if (r < 0) {
                store_trouble(s, r, "recording a RESULT");
                if (ours) /* still in flight: requeued when we close */
                        s->inflight[s->n_inflight++] = (struct inflight) { run, (uint32_t) job, attempt };
                snprintf(s->reason, sizeof(s->reason), "recording failed");
                return r;
        }
        switch (r) {
        case STORE_RECORD_COUNTED:
                atomic_fetch_add(&s->c->stats.counted, 1);
                log_if_run_complete(s, run);
                break;
        case STORE_RECORD_DUPLICATE:
                atomic_fetch_add(&s->c->stats.duplicates, 1);
                log_info("coordinator: worker %s: duplicate RESULT for %" PRIu64 "/%" PRIu64
                         " attempt %u ignored", name(s), run, job, attempt);
                break;
        case STORE_RECORD_STALE_ATTEMPT:
                atomic_fetch_add(&s->c->stats.stale, 1);
                log_info("coordinator: worker %s: stale RESULT for %" PRIu64 "/%" PRIu64
                         " attempt %u refused (a newer attempt exists)", name(s), run, job, attempt);
                break;
        }
        if (!ours)
                log_info("coordinator: worker %s: late RESULT for %" PRIu64 "/%" PRIu64
                         " attempt %u (not in flight here)", name(s), run, job, attempt);
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
                                 f->hello.protocol, FRAME_PROTOCOL_VERSION);
                        return -EPROTONOSUPPORT;
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

/* Reads what is there and handles every complete frame. 1 when the worker
 * closed cleanly, 0 to go on, < 0 to end the connection (reason set). */
static int receive(struct session *s) {
        uint8_t buf[READ_CHUNK];
        ssize_t n;
        frame f;

        n = recv(s->k->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                snprintf(s->reason, sizeof(s->reason), "receiving: %s", strerror(errno));
                return -errno;
        }
        if (n == 0) {
                int r = frame_decoder_finish(s->dec);
                if (r < 0) {
                        snprintf(s->reason, sizeof(s->reason), "closed inside a frame");
                        return r;
                }
                snprintf(s->reason, sizeof(s->reason), "closed by the worker");
                return 1;
        }
        for (size_t off = 0; off < (size_t) n;) {
                size_t used = 0;
                int r = frame_decoder_feed(s->dec, buf + off, (size_t) n - off, &used, &f);
                off += used;
                if (r < 0) {
                        atomic_fetch_add(&s->c->stats.protocol_errors, 1);
                        snprintf(s->reason, sizeof(s->reason), "malformed frame: %s (%s)",
                                 frame_strerror(r), frame_decoder_reason(s->dec));
                        return r;
                }
                if (r == 0)
                        break;
                sdlive_peer_received(s->peer);
                s->last_received_ms = now_ms();
                r = handle_frame(s, &f);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int heartbeat(struct session *s) {
        frame f = { .type = FRAME_HEARTBEAT, .heartbeat = { .has_seq = true, .seq = ++s->heartbeat_seq } };

        return send_frame(s, &f);
}

static int poll_timeout(const struct session *s) {
        int t = sdlive_peer_poll_timeout(s->peer);

        if (s->claim_retry_at_ms && s->worker[0]) {
                int64_t left = s->claim_retry_at_ms - now_ms();
                if (left < 0)
                        left = 0;
                if (left < t)
                        t = (int) left;
        }
        return t;
}

static void drain(int fd) {
        uint64_t v;

        (void) !read(fd, &v, sizeof(v));
}

/* The connection loop. Returns when the connection must end; s->reason
 * says why. */
static void serve(struct session *s) {
        struct pollfd p[3] = {
                { .fd = s->k->fd, .events = POLLIN },
                { .fd = s->c->stop_fd, .events = POLLIN },
                { .fd = s->k->kick_fd, .events = POLLIN },
        };

        for (;;) {
                if (fill_window(s) < 0)
                        return;
                if (sdlive_peer_expired(s->peer)) {
                        atomic_fetch_add(&s->c->stats.reaped, 1);
                        snprintf(s->reason, sizeof(s->reason), "silent for %" PRIu64 " ms: reaped",
                                 s->c->cfg.worker_timeout_usec / 1000);
                        return;
                }
                if (sdlive_peer_heartbeat_due(s->peer) && heartbeat(s) < 0)
                        return;
                int r = poll(p, 3, poll_timeout(s));
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
                        s->idle = false;
                }
                if (p[0].revents && receive(s) != 0)
                        return;
        }
}

/* Puts every in-flight job back to pending. Fails the coordinator when the
 * store will not take them back (a restart requeues everything). */
static void requeue_inflight(struct session *s) {
        unsigned requeued = 0;
        int r = 0;

        for (unsigned i = 0; i < s->n_inflight; i++) {
                const struct inflight *j = &s->inflight[i];
                for (int attempt = 0; attempt < REQUEUE_TRIES; attempt++) {
                        r = store_job_requeue(s->store, &s->c->cfg.fence, j->run, j->job, j->attempt);
                        if (r >= 0 || r == -ESTALE)
                                break;
                        usleep(CLAIM_RETRY_MS * 1000 << attempt);
                }
                if (r == -ESTALE) /* the next leader requeues them all */
                        break;
                if (r < 0) {
                        log_error("coordinator: cannot requeue job %" PRIu64 "/%u: %s", j->run, j->job,
                                  store_errmsg(s->store));
                        coordinator_fail(s->c, r);
                        break;
                }
                requeued += (unsigned) r;
        }
        if (requeued) {
                atomic_fetch_add(&s->c->stats.requeued, requeued);
                coordinator_kick_all(s->c);
        }
        log_notice("coordinator: worker %s disconnected (%s); %u in-flight job(s) requeued",
                   name(s), s->reason, requeued);
}

void *conn_main(void *userdata) {
        struct conn *k = userdata;
        struct session s = { .k = k, .c = k->c };
        int r;

        snprintf(s.reason, sizeof(s.reason), "setup failed");
        r = store_open(k->c->cfg.store_url, &s.store);
        if (r < 0) {
                log_error("coordinator: connection %" PRIu64 ": cannot open store: %s", k->id,
                          store_errmsg(NULL));
                goto out;
        }
        if (sdlive_peer_new(k->c->sdlive, k->c->cfg.worker_timeout_usec, k->c->cfg.heartbeat_usec,
                            &s.peer) < 0 ||
            frame_decoder_new(&s.dec) < 0)
                goto out;
        s.last_received_ms = now_ms();
        serve(&s);
        requeue_inflight(&s);
out:
        close(k->fd);
        frame_decoder_free(s.dec);
        sdlive_peer_free(s.peer);
        store_close(s.store);
        atomic_store(&k->finished, true);
        return NULL;
}
