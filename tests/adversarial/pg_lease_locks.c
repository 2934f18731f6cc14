/* SPDX-License-Identifier: MIT */
/*
 * A PostgreSQL leader against locks another client holds (the server of
 * tests/store/pg-server.sh). A leader term runs as the daemon runs it
 * (leader_run(), the lease refresher, a job service claiming and
 * recording jobs through its own connection, batch after batch):
 *
 *   table-lock PG_SCRIPT STATE_DIR
 *       `LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE` held for four lease
 *       times. The job batches wait and fail, but the lease is renewed
 *       all along and kept (same generation, never lost), the leader says
 *       in STATUS= that the service stalls, a store opened meanwhile does
 *       not queue behind the lock, and the jobs flow again afterwards.
 *   act-deadline PG_SCRIPT STATE_DIR
 *       The lease row locked FOR NO KEY UPDATE, so the refresher (with a
 *       lock timeout far beyond the lease) cannot renew while the fenced
 *       batches still can. The main loop and the service stop acting at
 *       the leader's deadline, before the lease expires on the store's
 *       clock: the margin of each is measured and asserted.
 */
#include <errno.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <sdlive.h>

#include "pg_server_url.h"
#include "soft_check.h"
#include "harness.h"
#include "leader.h"
#include "lease.h"
#include "monotonic.h"
#include "store.h"

#define LEASE "cluster"
#define HOLDER "leader"
#define MSEC UINT64_C(1000)
#define SEC UINT64_C(1000000)
#define RUN_JOBS 20000
#define CLAIM_WANT 4
/* The service calls itself stalled after this long without a batch. */
#define STALL_AFTER (700 * MSEC)


static char url[512];

static void sleep_for(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / SEC), .tv_nsec = (long) (usec % SEC) * 1000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static PGconn *raw_connect(void) {
        PGconn *c = PQconnectdb(url + strlen("postgresql:"));

        if (PQstatus(c) != CONNECTION_OK) {
                fprintf(stderr, "raw connection: %s", PQerrorMessage(c));
                exit(1);
        }
        PQclear(PQexec(c, "SET client_min_messages = warning"));
        return c;
}

/* Runs sql; the first column of its first row as an integer (0 if none). */
static long long raw_exec(PGconn *c, const char *sql) {
        PGresult *res = PQexec(c, sql);
        ExecStatusType st = PQresultStatus(res);
        long long v = 0;

        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
                fprintf(stderr, "raw SQL \"%s\": %s", sql, PQresultErrorMessage(res));
                exit(1);
        }
        if (st == PGRES_TUPLES_OK && PQntuples(res) > 0)
                v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        PQclear(res);
        return v;
}

/* ------------------------------------------------------------------ */
/* A job service: claims and records jobs, batch after batch            */
/* ------------------------------------------------------------------ */

struct jobs_service {
        struct store_fence fence; /* the term's, with its deadline for acting */
        struct store *store;
        int event_fd;
        struct leader_watch watch;
        pthread_t thread;
        bool running;
        atomic_bool quit;
        uint64_t lock_timeout_usec;
        /* What happened, for the checks. */
        atomic_uint_fast64_t ok, timeouts, stale, other;
        _Atomic uint64_t last_ok_usec, first_stale_usec, last_failure_usec;
        pthread_mutex_t lock;
        char last_error[256];
};

static void *jobs_loop(void *userdata) {
        struct jobs_service *j = userdata;
        struct store_claim claims[CLAIM_WANT];
        struct store_result results[CLAIM_WANT];
        size_t n_results = 0;
        uint64_t one = 1;

        while (!atomic_load(&j->quit)) {
                struct store_claim_request req = { .worker = "w1", .out = claims, .want = CLAIM_WANT };
                struct store_job_batch b = { .results = results, .n_results = n_results, .claims = &req,
                                             .n_claims = 1 };
                int r = store_jobs_batch(j->store, &j->fence, &b);

                if (r >= 0) {
                        /* Acting on what was claimed, as a coordinator sends it. */
                        if (!store_fence_may_act(&j->fence))
                                r = -ESTALE;
                }
                if (r >= 0) {
                        atomic_store(&j->last_ok_usec, monotonic_usec());
                        atomic_fetch_add(&j->ok, 1);
                        n_results = req.got;
                        for (unsigned i = 0; i < req.got; i++)
                                results[i] = (struct store_result) { .run = claims[i].run, .job = claims[i].job,
                                                                     .attempt = claims[i].attempt, .outcome = 1 };
                        for (unsigned i = 0; i < req.got; i++)
                                memcpy(results[i].token, claims[i].token, FRAME_TOKEN_SIZE);
                        sleep_for(3 * MSEC);
                        continue;
                }
                atomic_store(&j->last_failure_usec, monotonic_usec());
                pthread_mutex_lock(&j->lock);
                snprintf(j->last_error, sizeof j->last_error, "%s", store_errmsg(j->store));
                pthread_mutex_unlock(&j->lock);
                if (r == -ESTALE) {
                        atomic_store(&j->first_stale_usec, monotonic_usec());
                        atomic_fetch_add(&j->stale, 1);
                        if (write(j->event_fd, &one, sizeof one) < 0)
                                perror("eventfd");
                        break;
                }
                atomic_fetch_add(r == -ETIMEDOUT ? &j->timeouts : &j->other, 1);
                sleep_for(10 * MSEC);
        }
        return NULL;
}

static int jobs_ready(struct leader_watch *w, uint32_t events) {
        return -ESTALE; /* the service's fenced write was refused */
}

static int jobs_start(void *userdata, struct leader_loop *loop, const struct store_fence *fence) {
        struct jobs_service *j = userdata;
        int r;

        j->fence = *fence;
        r = store_open(url, &j->store);
        if (r < 0)
                return r;
        store_set_lock_timeout(j->store, j->lock_timeout_usec);
        j->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        j->watch = (struct leader_watch) { .fd = j->event_fd, .ready = jobs_ready, .userdata = j };
        if (j->event_fd < 0 || (r = leader_loop_watch(loop, &j->watch, EPOLLIN)) < 0 ||
            (r = -pthread_create(&j->thread, NULL, jobs_loop, j)) < 0) {
                r = r < 0 ? r : -errno;
                j->store = store_close(j->store);
                return r;
        }
        j->running = true;
        return 0;
}

static void jobs_stop(void *userdata) {
        struct jobs_service *j = userdata;

        atomic_store(&j->quit, true);
        pthread_join(j->thread, NULL);
        j->running = false;
        j->store = store_close(j->store);
        close(j->event_fd);
}

/* Stalled while no batch succeeded for STALL_AFTER and the last failed. */
static int jobs_stalled(void *userdata, char *why, size_t size) {
        struct jobs_service *j = userdata;
        uint64_t now = monotonic_usec(), ok = atomic_load(&j->last_ok_usec);

        if (now - ok < STALL_AFTER || atomic_load(&j->last_failure_usec) < ok)
                return 0;
        pthread_mutex_lock(&j->lock);
        snprintf(why, size, "no job batch for %llu ms: %s", (unsigned long long) ((now - ok) / 1000),
                 j->last_error);
        pthread_mutex_unlock(&j->lock);
        return 1;
}

/* ------------------------------------------------------------------ */
/* A term run as the daemon runs it                                    */
/* ------------------------------------------------------------------ */

struct term {
        sdlive *d;
        struct store *store;
        struct lease_config lease;
        struct lease_holder *holder;
        struct leader_service service;
        struct jobs_service jobs;
        struct leader_term t;
        pthread_t thread;
        int result;
        _Atomic uint64_t ended_usec;
        uint64_t generation;
};

static void *term_main(void *userdata) {
        struct term *x = userdata;

        x->result = leader_run(&x->t);
        atomic_store(&x->ended_usec, monotonic_usec());
        return NULL;
}

static void reset_schema(void) {
        PGconn *c = raw_connect();

        raw_exec(c, "DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
        PQfinish(c);
}

/* Opens a fresh store with a run of RUN_JOBS jobs, wins the lease and
 * starts the term with its service. */
static void term_start(struct term *x, uint64_t ttl, uint64_t refresher_lock_timeout) {
        struct store_fence f = { .lease = LEASE, .holder = "setup" };
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        uint64_t at, run;

        reset_schema();
        o.pet_interval_usec = 50 * MSEC;
        if (sdlive_new(&x->d, &o) < 0 || store_open(url, &x->store) < 0) {
                fprintf(stderr, "cannot open: %s\n", store_errmsg(NULL));
                exit(1);
        }
        /* The run is made under a lease of its own, given back at once. */
        if (store_lease_acquire(x->store, LEASE, "setup", 60 * SEC, &f.generation) < 0 ||
            store_run_create(x->store, &f, RUN_JOBS, &run) < 0 ||
            store_lease_release(x->store, LEASE, "setup", f.generation) < 0) {
                fprintf(stderr, "set-up: %s\n", store_errmsg(x->store));
                exit(1);
        }
        at = monotonic_usec();
        if (store_lease_acquire(x->store, LEASE, HOLDER, ttl, &x->generation) < 0) {
                fprintf(stderr, "acquire: %s\n", store_errmsg(x->store));
                exit(1);
        }
        x->lease = (struct lease_config) { .store_url = url, .name = LEASE, .holder = HOLDER, .ttl_usec = ttl,
                                           .lock_timeout_usec = refresher_lock_timeout };
        if (lease_holder_start(&x->lease, x->generation, at, &x->holder) < 0)
                exit(1);
        x->jobs.lock_timeout_usec = SEC; /* the coordinator's default */
        pthread_mutex_init(&x->jobs.lock, NULL);
        atomic_store(&x->jobs.last_ok_usec, monotonic_usec());
        x->service = (struct leader_service) { .name = "jobs", .start = jobs_start, .stop = jobs_stop,
                                               .userdata = &x->jobs, .stalled = jobs_stalled };
        x->t = (struct leader_term) {
                .d = x->d,
                .store = x->store,
                .lease = x->holder,
                .fence = { .lease = LEASE, .holder = HOLDER, .generation = x->generation },
                .maintenance_interval_usec = 3600 * SEC,
                .services = &x->service,
                .n_services = 1,
        };
        if (pthread_create(&x->thread, NULL, term_main, x) != 0)
                exit(1);
}

static void term_finish(struct term *x) {
        sdlive_request_stop(x->d);
        pthread_join(x->thread, NULL);
        x->holder = lease_holder_stop(x->holder, false);
        x->store = store_close(x->store);
        x->d = sdlive_free(x->d);
}

/* Drains the notify socket; true when a STATUS= line contained `text`. */
static bool status_seen(harness_manager *m, const char *text, char *example, size_t size) {
        char buf[HARNESS_DGRAM_MAX], status[1024];
        bool seen = false;

        while (harness_recv(m, buf, sizeof buf) > 0)
                if (harness_line_value(buf, "STATUS", status, sizeof status) && strstr(status, text) && !seen) {
                        seen = true;
                        snprintf(example, size, "%s", status);
                }
        return seen;
}

/* ------------------------------------------------------------------ */

#define TL_TTL (1500 * MSEC)
#define TL_HOLD (4 * TL_TTL)

static void table_lock(harness_manager *m) {
        struct term x = { 0 };
        struct store_lease_info info;
        struct store *reopened = NULL;
        char example[1024] = "";
        uint64_t refreshes, gap = 0, last_change, t0, reopen_usec, ok_before, ok_after, jobs_timeouts;
        bool stalled_seen = false;
        int reopen;
        PGconn *c;

        term_start(&x, TL_TTL, 0);
        sleep_for(TL_TTL / 2);
        ok_before = atomic_load(&x.jobs.ok);
        CHECK(ok_before > 0, "no job batch before the lock");

        c = raw_connect();
        raw_exec(c, "BEGIN; LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE");
        t0 = last_change = monotonic_usec();
        refreshes = lease_holder_refreshes(x.holder);
        uint64_t refreshes_at_lock = refreshes;

        /* A member opening the store meanwhile (a coordinator started
         * again, a refresher of a new term). */
        sleep_for(TL_TTL / 3);
        reopen_usec = monotonic_usec();
        reopen = store_open(url, &reopened);
        reopen_usec = monotonic_usec() - reopen_usec;
        CHECK(reopen == 0, "opening the store while the jobs table is locked: %s", store_errmsg(NULL));
        reopened = store_close(reopened);

        while (monotonic_usec() - t0 < TL_HOLD) {
                uint64_t n = lease_holder_refreshes(x.holder), now = monotonic_usec();
                if (n != refreshes) {
                        if (now - last_change > gap)
                                gap = now - last_change;
                        refreshes = n;
                        last_change = now;
                }
                stalled_seen |= status_seen(m, "jobs stalled", example, sizeof example);
                sleep_for(5 * MSEC);
        }
        if (monotonic_usec() - last_change > gap)
                gap = monotonic_usec() - last_change;
        jobs_timeouts = atomic_load(&x.jobs.timeouts);
        raw_exec(c, "COMMIT");
        PQfinish(c);
        sleep_for(TL_TTL);
        ok_after = atomic_load(&x.jobs.ok);

        CHECK(store_lease_read(x.store, LEASE, &info) == 0, "read lease: %s", store_errmsg(x.store));
        printf("table-lock: jobs table locked %llu ms (lease %llu ms): %llu lease renewals meanwhile, longest "
               "gap %llu ms (bound %llu ms); %llu job batches timed out, %llu refused; a store opened in "
               "%llu ms (bound %llu ms); lease %s generation %llu -> %llu (%s); %llu batches after the lock\n",
               (unsigned long long) (TL_HOLD / 1000), (unsigned long long) (TL_TTL / 1000),
               (unsigned long long) (refreshes - refreshes_at_lock), (unsigned long long) (gap / 1000),
               (unsigned long long) (2 * TL_TTL / 3000), (unsigned long long) jobs_timeouts,
               (unsigned long long) atomic_load(&x.jobs.stale), (unsigned long long) (reopen_usec / 1000),
               (unsigned long long) (TL_TTL / 3000), info.held ? "held" : "not held",
               (unsigned long long) x.generation, (unsigned long long) info.generation,
               lease_holder_lost(x.holder) ? lease_holder_reason(x.holder) : "never lost",
               (unsigned long long) (ok_after - ok_before));
        printf("table-lock: STATUS= while locked: %s\n", stalled_seen ? example : "(no stalled status)");
        CHECK(!lease_holder_lost(x.holder), "the lease was lost: %s", lease_holder_reason(x.holder));
        CHECK(atomic_load(&x.ended_usec) == 0, "the term ended during the lock");
        CHECK(info.held && info.generation == x.generation && strcmp(info.holder, HOLDER) == 0,
              "the lease moved on: %s generation %llu", info.holder, (unsigned long long) info.generation);
        /* Renewed every refresh interval (a third of the lease) plus the
         * time of the call itself; twice that still leaves the deadline
         * for acting (7/8 of the lease) far off. */
        CHECK(gap <= 2 * TL_TTL / 3, "the lease went %llu ms without a renewal", (unsigned long long) (gap / 1000));
        CHECK(jobs_timeouts > 0, "the lock on the jobs table never held up a batch");
        CHECK(atomic_load(&x.jobs.stale) == 0, "a batch was refused its fence");
        CHECK(reopen_usec <= TL_TTL / 3, "opening the store took %llu ms", (unsigned long long) (reopen_usec / 1000));
        CHECK(stalled_seen, "STATUS= never said the job service stalled");
        CHECK(ok_after > ok_before + 10, "the jobs did not flow again after the lock");
        term_finish(&x);
}

#define AD_TTL (1200 * MSEC)

static void act_deadline(harness_manager *m) {
        struct term x = { 0 };
        uint64_t sent, expiry, ended, last_ok, margin = lease_act_margin(AD_TTL), ok_at_lock;
        long long remaining;
        int64_t main_margin, service_margin;
        char example[1024] = "";
        PGconn *c;

        /* The refresher waits for a lock far longer than the lease. */
        term_start(&x, AD_TTL, 20 * AD_TTL);
        sleep_for(AD_TTL / 2);
        c = raw_connect();
        raw_exec(c, "BEGIN");
        /* The lease row, locked as of now: its expiry no renewal moves. */
        sent = monotonic_usec();
        remaining = raw_exec(c, "SELECT (extract(epoch FROM expires - clock_timestamp()) * 1000000)::bigint"
                                " FROM leases WHERE name = '" LEASE "' FOR NO KEY UPDATE");
        /* No later than the store's expiry, in our clock: the store read
         * its clock after `sent`. */
        expiry = sent + (uint64_t) remaining;
        uint64_t read_took = monotonic_usec() - sent;
        ok_at_lock = atomic_load(&x.jobs.ok);
        while (!atomic_load(&x.ended_usec) && monotonic_usec() < expiry + AD_TTL)
                sleep_for(MSEC);
        ended = atomic_load(&x.ended_usec);
        last_ok = atomic_load(&x.jobs.last_ok_usec);
        raw_exec(c, "ROLLBACK");
        PQfinish(c);
        sleep_for(100 * MSEC);

        main_margin = ended ? (int64_t) expiry - (int64_t) ended : INT64_MIN;
        service_margin = (int64_t) expiry - (int64_t) last_ok;
        printf("act-deadline: lease %llu ms, margin %llu ms; lease row locked with %lld ms left (read in %llu ms); the job "
               "service went on (%llu batches), its last one returned %lld ms before the expiry, the main "
               "loop stopped %lld ms before it (%s); refresher: %llu renewals\n",
               (unsigned long long) (AD_TTL / 1000), (unsigned long long) (margin / 1000), remaining / 1000,
               (unsigned long long) (read_took / 1000),
               (unsigned long long) (atomic_load(&x.jobs.ok) - ok_at_lock), (long long) service_margin / 1000,
               ended ? (long long) main_margin / 1000 : -1LL,
               lease_holder_lost(x.holder) ? lease_holder_reason(x.holder) : "never lost",
               (unsigned long long) lease_holder_refreshes(x.holder));
        CHECK(remaining > (long long) (AD_TTL / 2), "the lease row was locked late (%lld ms left)", remaining / 1000);
        CHECK(atomic_load(&x.jobs.ok) > ok_at_lock, "the fenced batches stopped with the refresher");
        CHECK(ended, "the main loop never stopped");
        CHECK(x.result == LEADER_LEASE_LOST, "leader_run returned %d", x.result);
        /* The term says it is over before it waits for the refresher
         * (still stuck on the lock) to let go. */
        CHECK(status_seen(m, "stepping down", example, sizeof example),
              "STATUS= never said the leader was stepping down");
        CHECK(main_margin >= (int64_t) margin / 2, "the main loop stopped %lld ms before the expiry (margin %llu ms)",
              (long long) main_margin / 1000, (unsigned long long) (margin / 1000));
        CHECK(service_margin >= (int64_t) margin / 2,
              "the job service acted %lld ms before the expiry (margin %llu ms)", (long long) service_margin / 1000,
              (unsigned long long) (margin / 1000));
        /* Whichever noticed first: the main loop, or the service's fenced
         * call refused at the deadline. */
        CHECK(strstr(lease_holder_reason(x.holder), "deadline for acting") ||
                      (strstr(lease_holder_reason(x.holder), "fenced write was rejected") &&
                       strstr(x.jobs.last_error, "time to act ran out")),
              "lost for another reason: %s (service: %s)", lease_holder_reason(x.holder), x.jobs.last_error);
        term_finish(&x);
}

int main(int argc, char **argv) {
        harness_manager m;

        if (argc != 4 || (strcmp(argv[1], "table-lock") != 0 && strcmp(argv[1], "act-deadline") != 0)) {
                fprintf(stderr, "usage: %s table-lock|act-deadline PG_SCRIPT STATE_DIR\n", argv[0]);
                return 2;
        }
        if (pg_server_url(argv[2], argv[3], url, sizeof url) < 0) {
                fprintf(stderr, "no PostgreSQL server recorded in %s\n", argv[3]);
                return 1;
        }
        harness_env_clear();
        if (harness_manager_open(&m, false) < 0) {
                fprintf(stderr, "cannot open the notify socket\n");
                return 1;
        }
        if (strcmp(argv[1], "table-lock") == 0)
                table_lock(&m);
        else
                act_deadline(&m);
        harness_manager_close(&m);
        if (check_failures)
                fprintf(stderr, "%d check(s) failed\n", check_failures);
        return check_failures ? 1 : 0;
}
