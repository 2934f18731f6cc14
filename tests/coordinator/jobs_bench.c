/* SPDX-License-Identifier: MIT */
/*
 * jobs-bench: the job path beside the store's own figures, in one run, for
 * noop jobs, per store (SQLite in a temporary directory; PostgreSQL when
 * --store names one; docs/performance.md, "Jobs", explains every row):
 *   (c) end to end: the coordinator in-process at the first --window, 1, 2
 *       and 4 sdlive-worker processes on its unix socket; the jobs per
 *       store transaction it achieved; worker connections that ended (a
 *       healthy worker is never disconnected);
 *   (a) the store alone: the fenced claim and record transactions of one
 *       job each, issued directly on one connection;
 *   (b) the store alone, batched as the coordinator batched with 4
 *       workers (each transaction records the last batch's RESULTs and
 *       claims the next jobs, over 4 claim requests);
 *   (b') the same at the largest batch the window allows (4 x window);
 * then (c)/(a), (c)/(b), (c)/(b') with 4 workers, (c) with 4 workers at
 * every other --window side by side, a single job's latency at low load
 * (RESULT sent to the next ASSIGN received, window 1: the record and the
 * next claim) and the reap latency of a frozen (SIGSTOPped) worker.
 *
 *   jobs-bench --worker BIN [--jobs N] [--window W[,W...]] [--dir DIR] [--store URL]
 *
 * DIR (default /tmp) holds the SQLite store: put it on the file system you
 * care about (tmpfs and disk differ by the cost of fsync). A PostgreSQL
 * database must hold no unfinished run (a fresh pg-server.sh).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sdlive.h>

#include "coordinator.h"
#include "frame.h"
#include "store.h"

#define WORKERS_MAX 4
#define LATENCY_SAMPLES_MAX 100000
/* The longest one run of the bench may take. */
#define RUN_TIMEOUT_USEC (300 * INT64_C(1000000))

struct bench {
        const char *worker;
        const char *base;
        const char *pg_url; /* NULL: SQLite only */
        unsigned windows[8]; /* the first is the tables'; the others are compared with it */
        size_t n_windows;
        char dir[80], url[512], sock[100];
        char lease[32]; /* bench-PID: a run killed half way leaves no lease in our way */
        struct store *store;
        struct store_fence fence;
        sdlive *d;
};

static int64_t now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* CPU time (user + system, us) of this process's threads, or of its
 * waited-for children. */
static int64_t cpu_us(int who) {
        struct rusage ru;

        if (getrusage(who, &ru) < 0)
                return 0;
        return ((int64_t) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
               ru.ru_stime.tv_usec;
}

/* CPU per job of the last run: this process (coordinator or store
 * alone) and the worker processes. */
static double cpu_self_per_job, cpu_workers_per_job;
/* How long creating the last (c) run's jobs took, before its clock. */
static double create_ms;

static void die(const char *what, const char *why) {
        fprintf(stdout, "jobs-bench: %s: %s\n", what, why);
        exit(1);
}

/* A fresh store (SQLite: a new file; PostgreSQL: the same database, every
 * earlier run complete) with the lease ours. */
static void setup(struct bench *b, bool pg) {
        snprintf(b->dir, sizeof(b->dir), "%s/jobs-bench-XXXXXX", b->base);
        if (!mkdtemp(b->dir))
                die("mkdtemp", strerror(errno));
        snprintf(b->sock, sizeof(b->sock), "%s/coordinator.sock", b->dir);
        if (pg)
                snprintf(b->url, sizeof(b->url), "%s", b->pg_url);
        else
                snprintf(b->url, sizeof(b->url), "sqlite:%s/store.db", b->dir);
        if (store_open(b->url, &b->store) < 0)
                die("store", store_errmsg(NULL));
        snprintf(b->lease, sizeof(b->lease), "bench-%ld", (long) getpid());
        b->fence = (struct store_fence) { .lease = b->lease, .holder = "bench" };
        if (store_lease_acquire(b->store, b->lease, "bench", 3600 * SDLIVE_USEC_PER_SEC, &b->fence.generation) < 0)
                die("lease", store_errmsg(b->store));
}

static void teardown(struct bench *b) {
        char cmd[192];

        (void) store_lease_release(b->store, b->lease, "bench", b->fence.generation);
        store_close(b->store);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", b->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "jobs-bench: could not remove %s\n", b->dir);
}

/* (a) and (b): jobs/s of the fenced claim+record work on one connection,
 * `per` jobs per transaction (1: a claim and a record transaction each),
 * claimed by `requests` claim requests (as many workers' refills). */
static double store_ceiling(struct bench *b, bool pg, uint32_t jobs, unsigned per, unsigned requests) {
        struct store_claim *claims = calloc(per, sizeof(*claims));
        struct store_result *results = calloc(per, sizeof(*results));
        struct store_claim_request req[WORKERS_MAX];
        uint64_t run;
        uint32_t done = 0;
        unsigned held = 0;
        int64_t t0, cpu0;

        if (!claims || !results)
                die("calloc", strerror(ENOMEM));
        setup(b, pg);
        if (store_run_create(b->store, &b->fence, jobs, &run) < 0)
                die("run", store_errmsg(b->store));
        t0 = now_us();
        cpu0 = cpu_us(RUSAGE_SELF);
        if (requests > per)
                requests = per;
        while (done < jobs) {
                struct store_job_batch batch = { .results = results, .n_results = held };
                unsigned got = 0;
                for (unsigned k = 0, at = 0; k < requests; k++) {
                        unsigned want = per / requests + (k < per % requests);
                        req[k] = (struct store_claim_request) { .worker = "bench", .out = claims + at, .want = want };
                        at += want;
                }
                if (per > 1) { /* the coordinator's shape: record and refill at once */
                        batch.claims = req;
                        batch.n_claims = requests;
                } else if (!held) {
                        batch = (struct store_job_batch) { .claims = req, .n_claims = 1 };
                }
                if (store_jobs_batch(b->store, &b->fence, &batch) < 0)
                        die("batch", store_errmsg(b->store));
                done += batch.counted;
                if (batch.n_results)
                        held = 0;
                for (size_t k = 0; k < batch.n_claims; k++)
                        for (unsigned i = 0; i < req[k].got; i++) {
                                const struct store_claim *j = &req[k].out[i];
                                results[held] = (struct store_result) { .run = j->run, .job = j->job,
                                                                        .attempt = j->attempt };
                                memcpy(results[held++].token, j->token, FRAME_TOKEN_SIZE);
                                got++;
                        }
                if (!got && !batch.n_results && done < jobs)
                        die("batch", "nothing left to claim");
        }
        double s = (double) (now_us() - t0) / 1e6;
        cpu_self_per_job = (double) (cpu_us(RUSAGE_SELF) - cpu0) / jobs;
        teardown(b);
        free(claims);
        free(results);
        return jobs / s;
}

static pid_t spawn_worker(const struct bench *b, unsigned i, uint64_t timeout_ms) {
        char identity[32], sock[224], timeout[48], heartbeat[48];
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        snprintf(identity, sizeof(identity), "--identity=bench-%u", i);
        snprintf(sock, sizeof(sock), "--coordinator=%s", b->sock);
        snprintf(timeout, sizeof(timeout), "--coordinator-timeout=%" PRIu64 "ms", timeout_ms);
        snprintf(heartbeat, sizeof(heartbeat), "--heartbeat=%" PRIu64 "ms", timeout_ms / 3);
        if (!freopen("/dev/null", "w", stderr))
                _exit(127);
        execl(b->worker, b->worker, sock, identity, timeout, heartbeat, "--reconnect-max=100ms",
              (char *) NULL);
        _exit(127);
}

static void stop_workers(pid_t *pids, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                kill(pids[i], SIGCONT);
                kill(pids[i], SIGTERM);
        }
        for (unsigned i = 0; i < n; i++)
                waitpid(pids[i], NULL, 0);
}

static struct coordinator *start(struct bench *b, uint64_t timeout_ms, uint32_t jobs, unsigned window) {
        struct coordinator_config cfg = {
                .store_url = b->url,
                .fence = b->fence,
                .unix_path = b->sock,
                .worker_timeout_usec = timeout_ms * SDLIVE_USEC_PER_MSEC,
                .heartbeat_usec = timeout_ms * SDLIVE_USEC_PER_MSEC / 3,
                .window = window,
                .run_jobs = jobs,
        };
        struct coordinator *c;

        if (coordinator_start(&c, b->d, &cfg) < 0)
                die("coordinator", "cannot start");
        return c;
}

/* Waits until the coordinator counted `jobs` RESULTs. A PostgreSQL
 * database keeps its runs: a run an earlier, interrupted bench left
 * unfinished is resumed instead of ours, and ours never comes. */
static void wait_counted(struct coordinator *c, uint64_t jobs, struct coordinator_stats *st) {
        int64_t deadline = now_us() + RUN_TIMEOUT_USEC;

        do {
                usleep(1000);
                coordinator_stats(c, st);
                if (now_us() > deadline)
                        die("run", "not done in time (a run left unfinished in this store by an "
                                   "interrupted bench? use a fresh database)");
        } while (st->counted < jobs);
}

/* (c): jobs/s through `workers` workers at window, and the coordinator's
 * figures once the run was done (connections ended beyond the workers',
 * jobs assigned, store transactions). */
static double end_to_end(struct bench *b, bool pg, unsigned workers, uint32_t jobs, unsigned window,
                         struct coordinator_stats *ret) {
        pid_t pids[WORKERS_MAX];
        struct coordinator *c;
        struct coordinator_stats st;
        int64_t t0, t1, cpu0, children0 = cpu_us(RUSAGE_CHILDREN);
        uint64_t run;

        setup(b, pg);
        /* The run's jobs exist before the clock starts, as in (a), (b) and
         * (b'): the coordinator resumes it (creating a run costs the store
         * about as much per job as (b') spends on it, see create_ms). */
        t0 = now_us();
        if (store_run_create(b->store, &b->fence, jobs, &run) < 0)
                die("run", store_errmsg(b->store));
        create_ms = (double) (now_us() - t0) / 1000;
        c = start(b, 30000, 0, window);
        t0 = now_us();
        cpu0 = cpu_us(RUSAGE_SELF);
        for (unsigned i = 0; i < workers; i++)
                pids[i] = spawn_worker(b, i, 30000);
        wait_counted(c, jobs, &st);
        t1 = now_us();
        cpu_self_per_job = (double) (cpu_us(RUSAGE_SELF) - cpu0) / jobs;
        *ret = st;
        /* A worker that had not connected yet when the run was done ended nothing. */
        ret->connections = st.connections > workers ? st.connections - workers : 0;
        stop_workers(pids, workers);
        cpu_workers_per_job = (double) (cpu_us(RUSAGE_CHILDREN) - children0) / jobs;
        coordinator_stop(c);
        teardown(b);
        return jobs / ((double) (t1 - t0) / 1e6);
}

static int cmp_i64(const void *x, const void *y) {
        int64_t a = *(const int64_t *) x, b = *(const int64_t *) y;
        return (a > b) - (a < b);
}

/* A single job's latency at low load: a worker of our own, window 1, that
 * answers each ASSIGN at once; from its RESULT sent to the next ASSIGN
 * received is the RESULT's record and the next claim. p50 and p99 in us. */
static void latency(struct bench *b, bool pg, uint32_t samples, int64_t *p50, int64_t *p99) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int64_t *t = calloc(samples, sizeof(*t)), sent = 0;
        frame_decoder *dec;
        struct coordinator *c;
        struct coordinator_stats st;
        uint32_t n = 0;
        frame f;
        int fd;

        if (!t || frame_decoder_new(&dec) < 0)
                die("calloc", strerror(ENOMEM));
        setup(b, pg);
        c = start(b, 30000, samples + 1, 1);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", b->sock);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                die("connect", strerror(errno));
        f = (frame) { .type = FRAME_HELLO, .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = "probe" } };
        if (frame_send(fd, &f, 1000) < 0)
                die("send", "HELLO");
        while (n < samples) {
                int r = frame_recv(fd, dec, &f, 5000);
                if (r != 1)
                        die("receive", "no ASSIGN");
                if (f.type != FRAME_ASSIGN)
                        continue;
                if (sent)
                        t[n++] = now_us() - sent;
                frame res = { .type = FRAME_RESULT,
                              .result = { .run = f.assign.run, .job = f.assign.job, .attempt = f.assign.attempt } };
                memcpy(res.result.token, f.assign.token, FRAME_TOKEN_SIZE);
                sent = now_us();
                if (frame_send(fd, &res, 1000) < 0)
                        die("send", "RESULT");
        }
        /* Every RESULT sent, the last one too, is recorded before we go:
         * the run is complete and a later bench on this store starts its own. */
        wait_counted(c, samples + 1, &st);
        close(fd);
        coordinator_stop(c);
        teardown(b);
        qsort(t, samples, sizeof(*t), cmp_i64);
        *p50 = t[samples / 2];
        *p99 = t[samples * 99 / 100];
        free(t);
        frame_decoder_free(dec);
}

/* Milliseconds from SIGSTOP to the coordinator reaping the worker. The
 * worker is busy with a long run when frozen, so the last frame it sent
 * (a RESULT) is at most a job's time older than the SIGSTOP. */
static double reap_latency(struct bench *b, uint64_t timeout_ms, uint32_t warmup) {
        struct coordinator_stats st;
        struct coordinator *c;
        pid_t pid;
        int64_t t0;

        setup(b, false);
        c = start(b, timeout_ms, 100000, b->windows[0]);
        pid = spawn_worker(b, 0, timeout_ms);
        do {
                usleep(1000);
                coordinator_stats(c, &st);
        } while (st.counted < warmup);
        kill(pid, SIGSTOP);
        t0 = now_us();
        do {
                usleep(200);
                coordinator_stats(c, &st);
        } while (st.reaped < 1);
        double ms = (double) (now_us() - t0) / 1000;
        stop_workers(&pid, 1);
        coordinator_stop(c);
        teardown(b);
        return ms;
}

/* The coordinator's average batch: jobs claimed per store transaction,
 * and the share of those transactions' claim requests (one per worker
 * refilled), from the stats of a 4-worker run. */
static unsigned achieved_batch(const struct coordinator_stats *st) {
        uint64_t per = st->batches ? (st->assigned + st->batches / 2) / st->batches : 1;
        return per < 1 ? 1 : per > COORDINATOR_WINDOW_MAX * WORKERS_MAX ? COORDINATOR_WINDOW_MAX * WORKERS_MAX
                                                                        : (unsigned) per;
}

static void store_table(struct bench *b, bool pg, uint32_t jobs) {
        static const unsigned counts[] = { 1, 2, 4 };
        unsigned most = b->windows[0] * WORKERS_MAX, per;
        double ceiling, batched, batched_most, e2e = 0, cpu_e2e, cpu_workers;
        struct coordinator_stats st;
        int64_t p50, p99;

        printf("\n%s, %u noop jobs, window %u\n\n", pg ? "PostgreSQL" : "SQLite", jobs, b->windows[0]);
        printf("| | jobs/s | jobs per transaction | connections ended |\n|---|---:|---:|---:|\n");
        fflush(stdout);
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
                e2e = end_to_end(b, pg, counts[i], jobs, b->windows[0], &st);
                printf("| (c) end to end, %u worker%s | %.0f | %.1f | %" PRIu64 " |\n", counts[i],
                       counts[i] > 1 ? "s" : "", e2e, st.batches ? (double) st.assigned / st.batches : 0,
                       st.connections);
                fflush(stdout);
        }
        per = achieved_batch(&st);
        cpu_e2e = cpu_self_per_job;
        cpu_workers = cpu_workers_per_job;
        double created = create_ms;
        ceiling = store_ceiling(b, pg, jobs, 1, 1);
        batched = store_ceiling(b, pg, jobs, per, WORKERS_MAX);
        batched_most = store_ceiling(b, pg, jobs, most, WORKERS_MAX);
        printf("| (a) store alone: claim + record, 1 job per transaction | %.0f | 1 | |\n", ceiling);
        printf("| (b) store alone, batched as the coordinator batched (4 workers) | %.0f | %u | |\n",
               batched, per);
        printf("| (b') store alone, the largest batch of this window (%u workers x %u) | %.0f | %u | |\n",
               WORKERS_MAX, b->windows[0], batched_most, most);
        printf("\n4 workers: (c)/(a) %.2f; (c)/(b) %.2f; (c)/(b') %.2f\n", e2e / ceiling, e2e / batched,
               e2e / batched_most);
        printf("CPU per job: (c) 4 workers: the coordinator's process %.1f us, the workers %.1f us; "
               "(b') %.1f us\n", cpu_e2e, cpu_workers, cpu_self_per_job);
        printf("Creating the %u jobs of a run, before (c)'s clock as before the others': %.0f ms\n", jobs,
               created);
        if (b->n_windows > 1) {
                printf("\n4 workers by window (side by side, same run)\n\n| window | jobs/s | jobs per "
                       "transaction | connections ended |\n|---:|---:|---:|---:|\n");
                for (size_t i = 0; i < b->n_windows; i++) {
                        double v = end_to_end(b, pg, WORKERS_MAX, jobs, b->windows[i], &st);
                        printf("| %u | %.0f | %.1f | %" PRIu64 " |\n", b->windows[i], v,
                               st.batches ? (double) st.assigned / st.batches : 0, st.connections);
                        fflush(stdout);
                }
        }
        latency(b, pg, jobs / 10 > 2 ? jobs / 10 : 2, &p50, &p99);
        printf("\nOne job at low load (window 1), RESULT sent to the next ASSIGN received (its record "
               "and the next claim): p50 %" PRId64 " us, p99 %" PRId64 " us\n", p50, p99);
        fflush(stdout);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "worker", required_argument, NULL, 'w' },
                { "jobs", required_argument, NULL, 'n' },
                { "window", required_argument, NULL, 'W' },
                { "dir", required_argument, NULL, 'd' },
                { "store", required_argument, NULL, 's' },
                {}
        };
        static const char usage[] =
                "usage: jobs-bench --worker BIN [--jobs N] [--window W[,W...]] [--dir DIR] [--store postgresql:...]\n";
        struct bench b = { .base = "/tmp", .windows = { COORDINATOR_WINDOW_DEFAULT }, .n_windows = 1 };
        const uint64_t timeouts[] = { 300, 1000 };
        unsigned long v;
        uint32_t jobs = 20000;
        char *end;
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'w': b.worker = optarg; break;
                case 'd': b.base = optarg; break;
                case 's': b.pg_url = optarg; break;
                case 'n':
                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno || *end || v == 0 || v > INT32_MAX) {
                                fprintf(stderr, "jobs-bench: bad --jobs=%s\n%s", optarg, usage);
                                return 2;
                        }
                        jobs = (uint32_t) v;
                        break;
                case 'W':
                        b.n_windows = 0;
                        for (char *p = optarg;; p = end + 1) {
                                errno = 0;
                                v = strtoul(p, &end, 10);
                                if (errno || end == p || (*end && *end != ',') || v == 0 ||
                                    v > COORDINATOR_WINDOW_MAX || b.n_windows == sizeof(b.windows) / sizeof(b.windows[0])) {
                                        fprintf(stderr, "jobs-bench: bad --window=%s\n%s", optarg, usage);
                                        return 2;
                                }
                                b.windows[b.n_windows++] = (unsigned) v;
                                if (!*end)
                                        break;
                        }
                        break;
                default:
                        fputs(usage, stderr);
                        return 2;
                }
        }
        if (!b.worker || optind != argc) {
                fputs(usage, stderr);
                return 2;
        }
        if (b.pg_url && strncmp(b.pg_url, "postgresql:", 11) != 0) {
                fprintf(stderr, "jobs-bench: --store must be a postgresql: URL (SQLite always runs)\n");
                return 2;
        }
        if (sdlive_new(&b.d, NULL) < 0)
                die("sdlive_new", "failed");
        signal(SIGPIPE, SIG_IGN);
        /* The coordinator logs every connection; keep the tables readable. */
        if (!freopen("/dev/null", "w", stderr))
                return 1;

        printf("jobs-bench: noop jobs; SQLite under %s%s\n", b.base, b.pg_url ? "; PostgreSQL" : "");
        store_table(&b, false, jobs);
        if (b.pg_url)
                store_table(&b, true, jobs);

        printf("\nReap latency of a SIGSTOPped worker (SQLite; heartbeat = timeout / 3)\n\n");
        printf("| timeout | reaped after | over the timeout |\n|---:|---:|---:|\n");
        for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
                double ms = reap_latency(&b, timeouts[i], jobs < 1000 ? jobs / 2 + 1 : 1000);
                printf("| %" PRIu64 " ms | %.1f ms | %+.1f ms |\n", timeouts[i], ms, ms - (double) timeouts[i]);
                fflush(stdout);
        }
        sdlive_free(b.d);
        return 0;
}
