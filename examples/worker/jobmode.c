/* SPDX-License-Identifier: MIT */
#include "jobmode.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "job.h"
#include "log.h"
#include "monotonic.h"

#define QUEUE_MAX 64  /* ASSIGNs received, not started (the coordinator's window is smaller) */
#define UNSENT_MAX 64 /* RESULTs finished while disconnected */
#define STATUS_EVERY 100
#define STUCK_INTERVALS 2

struct late_result {
        coordinator_assign a; /* payload unused */
        int32_t outcome;
};

typedef struct jobmode {
        sdlive *d;
        executor *e;
        const fault_switch *wedge;
        jobmode_options o;
        coordinator_link *link;
        int epfd;

        coordinator_assign queue[QUEUE_MAX];
        size_t q_head, q_len;
        /* The batch handed to the executor: batch[0, n_batch), whose first
         * n_reported results were taken (in order); running while some
         * are not. */
        coordinator_assign batch[EXECUTOR_BATCH_MAX];
        size_t n_batch, n_reported;
        uint64_t started_usec; /* when the current batch was handed to the executor */
        bool stuck;            /* the executor has not moved for a heartbeat interval */
        struct late_result unsent[UNSENT_MAX];
        size_t n_unsent;

        uint64_t backoff_usec, next_connect_usec;
        unsigned failed_connects;
        uint64_t done;
} jobmode;

static bool connected(const jobmode *m) {
        return coordinator_link_fd(m->link) >= 0;
}

static bool running(const jobmode *m) {
        return m->n_reported < m->n_batch;
}

/* The job of the batch running or next to report; only while running(). */
static const coordinator_assign *current(const jobmode *m) {
        return &m->batch[m->n_reported];
}

static void report_status(jobmode *m) {
        if (sdlive_progress_stalled(m->d, NULL, 0) > 0)
                return; /* STATUS= names the stalled loop: keep it */
        if (m->stuck)
                sdlive_notify_status(m->d, "executor stuck on job %" PRIu64 "/%" PRIu64 ": taking no work until "
                                     "it moves; %" PRIu64 " jobs done", current(m)->run, current(m)->job, m->done);
        else if (connected(m))
                sdlive_notify_status(m->d, "serving the coordinator at %s; %" PRIu64 " jobs done",
                                     coordinator_link_address(m->link), m->done);
        else
                sdlive_notify_status(m->d, "looking for a coordinator; %" PRIu64 " jobs done", m->done);
}

/* The connection ended: jobs not started (queued, or in the executor's
 * batch behind the one running) were requeued by the coordinator. */
static void disconnected(jobmode *m) {
        size_t batched = m->n_batch;

        m->n_batch = executor_cancel_rest(m->e);
        batched -= m->n_batch;
        if (m->q_len + batched)
                log_info("dropping %zu job(s) not started: the coordinator requeues them", m->q_len + batched);
        m->q_len = 0;
        m->backoff_usec = m->o.backoff_min_usec;
        m->next_connect_usec = monotonic_usec() + m->backoff_usec;
        report_status(m);
}

static void send_late_results(jobmode *m) {
        size_t sent = 0;

        while (sent < m->n_unsent && connected(m)) {
                const struct late_result *r = &m->unsent[sent];
                if (coordinator_link_send_result(m->link, &r->a, r->outcome, "late") < 0)
                        break;
                sent++;
        }
        if (sent)
                log_info("sent %zu late RESULT(s) finished while disconnected", sent);
        memmove(m->unsent, m->unsent + sent, (m->n_unsent - sent) * sizeof(m->unsent[0]));
        m->n_unsent -= sent;
}

static void try_connect(jobmode *m) {
        char delay[DURATION_FORMAT_MAX];
        struct epoll_event ev = { .events = EPOLLIN };
        int r = coordinator_link_connect(m->link);

        if (r < 0) {
                duration_format(delay, sizeof(delay), m->backoff_usec);
                if (m->failed_connects++ == 0)
                        log_warning("no coordinator answers (%s); retrying with backoff", strerror(-r));
                else
                        log_debug("no coordinator answers (%s); next try in %s", strerror(-r), delay);
                m->next_connect_usec = monotonic_usec() + m->backoff_usec;
                m->backoff_usec *= 2;
                if (m->backoff_usec > m->o.backoff_max_usec)
                        m->backoff_usec = m->o.backoff_max_usec;
                return;
        }
        m->failed_connects = 0;
        m->backoff_usec = m->o.backoff_min_usec;
        ev.data.fd = coordinator_link_fd(m->link);
        if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0) {
                coordinator_link_close(m->link, strerror(errno));
                disconnected(m);
                return;
        }
        send_late_results(m);
        report_status(m);
}

static void check_stuck(jobmode *m);

/* Sends the RESULTs of the jobs finished since the last look, together
 * (one write); kept for the next connection when they cannot be sent. */
static void results_ready(jobmode *m) {
        job_result res[EXECUTOR_BATCH_MAX];
        coordinator_link_result out[EXECUTOR_BATCH_MAX];
        size_t n = executor_take_results(m->e, res, m->n_batch - m->n_reported);

        if (n == 0)
                return;
        for (size_t i = 0; i < n; i++)
                out[i] = (coordinator_link_result) { &m->batch[m->n_reported + i], res[i].outcome,
                                                res[i].outcome ? "failed" : "" };
        m->n_reported += n;
        check_stuck(m);
        m->done += n;
        if (connected(m) && coordinator_link_send_results(m->link, out, n) == 0) {
                if (m->done / STATUS_EVERY != (m->done - n) / STATUS_EVERY)
                        report_status(m);
                return;
        }
        if (connected(m))
                disconnected(m);
        for (size_t i = 0; i < n && m->n_unsent < UNSENT_MAX; i++)
                m->unsent[m->n_unsent++] = (struct late_result) { *out[i].a, out[i].outcome };
}

static void receive_all(jobmode *m) {
        coordinator_assign a;
        int r;

        while (connected(m)) {
                r = coordinator_link_receive(m->link, &a);
                if (r < 0) {
                        disconnected(m);
                        return;
                }
                if (r == 0)
                        return;
                if (m->q_len == QUEUE_MAX) {
                        coordinator_link_close(m->link, "more jobs in flight than this worker queues");
                        disconnected(m);
                        return;
                }
                m->queue[(m->q_head + m->q_len++) % QUEUE_MAX] = a;
        }
}

/* Hands every job queued (up to EXECUTOR_BATCH_MAX) to the executor as
 * one batch once the previous batch is reported: the executor runs them
 * one after the other and the loop wakes for their results, not for
 * each job. */
static void start_next(jobmode *m) {
        job jobs[EXECUTOR_BATCH_MAX];
        size_t n = 0;

        if (running(m))
                return;
        while (m->q_len && n < EXECUTOR_BATCH_MAX) {
                coordinator_assign *a = &m->queue[m->q_head];
                job j = { 0 };
                m->q_head = (m->q_head + 1) % QUEUE_MAX;
                m->q_len--;
                if (job_from_payload(a->payload, &j) < 0) {
                        log_warning("job %" PRIu64 "/%" PRIu64 ": unknown payload '%s'", a->run, a->job,
                                    a->payload);
                        (void) coordinator_link_send_result(m->link, a, EINVAL, "unknown job");
                        if (!connected(m)) {
                                disconnected(m);
                                return; /* the jobs taken so far were requeued with the rest */
                        }
                        continue;
                }
                j.id = a->job;
                j.seed = (a->run << 32) ^ a->job;
                m->batch[n] = *a;
                jobs[n++] = j;
        }
        if (n == 0)
                return;
        if (executor_submit_batch(m->e, jobs, n) < 0) {
                /* Cannot happen: the previous batch is reported. */
                log_error("the executor refused a batch of %zu job(s): leaving the coordinator", n);
                coordinator_link_close(m->link, "the executor refused its jobs");
                disconnected(m);
                return;
        }
        m->n_batch = n;
        m->n_reported = 0;
        m->started_usec = monotonic_usec();
}

/* Heartbeats prove this worker moves: while idle the main loop itself is
 * the progress; during a job, only a job that stamped progress (or
 * started) within the last interval is vouched for. */
static bool heartbeat_withheld(const jobmode *m) {
        uint64_t last = job_last_progress_usec();

        if (last < m->started_usec)
                last = m->started_usec;
        return running(m) && monotonic_usec() - last >= m->o.link.heartbeat_usec;
}

/* An executor that stopped moving (no progress for STUCK_INTERVALS
 * heartbeat intervals: past a heartbeat withheld, before the coordinator's
 * timeout of at least three intervals) takes no work: the worker leaves the
 * coordinator (which requeues the jobs of its window at once rather than
 * after reaping it) and does not connect again until the job moves or
 * ends. Without this, each reconnect would take a window of jobs the
 * executor never starts, pinned for a worker timeout every time. */
static void check_stuck(jobmode *m) {
        char silent[DURATION_FORMAT_MAX];
        uint64_t last = job_last_progress_usec();

        if (last < m->started_usec)
                last = m->started_usec;
        bool stuck = running(m) && monotonic_usec() - last >= STUCK_INTERVALS * m->o.link.heartbeat_usec;

        if (stuck == m->stuck)
                return;
        m->stuck = stuck;
        if (stuck) {
                duration_format(silent, sizeof(silent), STUCK_INTERVALS * m->o.link.heartbeat_usec);
                log_warning("executor stuck on job %" PRIu64 "/%" PRIu64 " (no progress for %s): taking no work "
                            "until it moves", current(m)->run, current(m)->job, silent);
                if (connected(m)) {
                        coordinator_link_close(m->link, "executor stuck: jobs left for other workers");
                        disconnected(m);
                }
        } else {
                log_notice("executor moving again: asking for work");
                m->next_connect_usec = monotonic_usec();
        }
        report_status(m);
}

static void maybe_heartbeat(jobmode *m) {
        if (!coordinator_link_heartbeat_due(m->link) || heartbeat_withheld(m))
                return;
        if (coordinator_link_heartbeat(m->link) < 0)
                disconnected(m);
}

static uint64_t wait_usec(const jobmode *m) {
        uint64_t now = monotonic_usec(), w;

        /* Stuck: look again at the heartbeat pace whether it moves. */
        if (m->stuck)
                return m->o.link.heartbeat_usec / 8;
        if (!connected(m)) {
                w = m->next_connect_usec > now ? m->next_connect_usec - now : 0;
                /* A job running meanwhile may get stuck before we connect. */
                if (running(m) && w > m->o.link.heartbeat_usec / 8)
                        w = m->o.link.heartbeat_usec / 8;
                return w;
        }
        w = coordinator_link_wait_usec(m->link);
        /* A withheld heartbeat stays due: look again soon, not at once. */
        if (coordinator_link_heartbeat_due(m->link) && heartbeat_withheld(m))
                w = m->o.link.heartbeat_usec / 8;
        return w;
}

static int loop(jobmode *m) {
        char silent[DURATION_FORMAT_MAX];

        for (;;) {
                fault_switch_check(m->wedge);
                check_stuck(m);
                if (!connected(m) && !m->stuck && monotonic_usec() >= m->next_connect_usec)
                        try_connect(m);
                int r = sdlive_wait_fd(m->d, m->epfd, POLLIN, wait_usec(m));
                if (r == SDLIVE_WAKE_STOP)
                        return EXIT_SUCCESS;
                if (r < 0) {
                        log_error("waiting for work failed: %s", strerror(-r));
                        return EXIT_FAILURE;
                }
                results_ready(m);
                receive_all(m);
                if (coordinator_link_expired(m->link)) {
                        duration_format(silent, sizeof(silent), m->o.link.timeout_usec);
                        char reason[64];
                        snprintf(reason, sizeof(reason), "coordinator silent for %s", silent);
                        coordinator_link_close(m->link, reason);
                        disconnected(m);
                }
                start_next(m);
                if (connected(m))
                        maybe_heartbeat(m);
                /* One iteration done: that is the progress the keepalive vouches for. */
                sdlive_pet_watchdog(m->d);
        }
}

int jobmode_run(sdlive *d, executor *e, const fault_switch *wedge, const jobmode_options *o) {
        struct epoll_event ev = { .events = EPOLLIN };
        jobmode *m = calloc(1, sizeof(*m));
        int status = EXIT_FAILURE;

        if (!m) {
                log_error("out of memory");
                return EXIT_FAILURE;
        }
        m->d = d;
        m->e = e;
        m->wedge = wedge;
        m->o = *o;
        if (!m->o.link.timeout_usec)
                m->o.link.timeout_usec = SDLIVE_PEER_TIMEOUT_DEFAULT_USEC;
        if (!m->o.link.heartbeat_usec)
                m->o.link.heartbeat_usec = SDLIVE_HEARTBEAT_INTERVAL_DEFAULT_USEC;
        if (!m->o.backoff_min_usec)
                m->o.backoff_min_usec = 100 * SDLIVE_USEC_PER_MSEC;
        if (!m->o.backoff_max_usec)
                m->o.backoff_max_usec = 5 * SDLIVE_USEC_PER_SEC;
        m->backoff_usec = m->o.backoff_min_usec;

        m->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (m->epfd < 0) {
                log_error("epoll: %s", strerror(errno));
                goto out;
        }
        ev.data.fd = executor_result_fd(e);
        if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0) {
                log_error("epoll: %s", strerror(errno));
                goto out;
        }
        if (coordinator_link_new(&m->link, d, &m->o.link) < 0) {
                log_error("bad coordinator link configuration");
                goto out;
        }
        report_status(m);
        status = loop(m);
out:
        coordinator_link_free(m->link);
        if (m->epfd >= 0)
                close(m->epfd);
        free(m);
        return status;
}
