/* SPDX-License-Identifier: MIT */
/*
 * Fault runs for at-least-once jobs: two sdlive-cluster instances (one
 * leads and coordinates, one stands by) and W sdlive-worker daemons share
 * a SQLite store; a run of N jobs goes through while this driver injects
 * faults mid-run, then checks the store: every job done, the done count
 * exactly N, no RESULT judged a duplicate in any leader's term (each
 * attempt's RESULT is sent once, so a duplicate means a job was counted by a
 * superseded attempt), at least one job redelivered (the redelivery path
 * ran), no overlap of two leaders' writes.
 *
 *   jobs-faults --cluster BIN --worker BIN --scenario NAME [--runs K]
 *               [--seed S] [--jobs N] [--workers W] [--payload P] [--store URL]
 *
 * Scenarios: kill (SIGKILL a worker; it is restarted as systemd would),
 * stop (SIGSTOP a worker: half-open; reaped within timeout + one poll;
 * SIGCONT later, its late RESULTs are harmless), wedge (the worker's main
 * loop hangs; this driver stands in for the watchdog: SIGKILL and restart),
 * failover (SIGKILL the leader), failover-stop (SIGSTOP the leader until the
 * standby leads, then SIGCONT: at least one of its writes is rejected by the
 * fence), failover-batch (SIGKILL the leader while its coordinator waits
 * inside a batch that claimed jobs and recorded RESULTs but has not
 * committed: SDLIVE_PAUSE_BATCH_FILE), random (1-3 of the five above per
 * run from a seeded generator, with N x 2 x faults jobs; SDLIVE_FAULT_SEED
 * overrides --seed), random-batch (as random, the first fault of every
 * run a failover-batch). Times are scaled: worker timeout 1 s,
 * heartbeats 300 ms, lease 2 s. A fault that did not take effect (the worker
 * held no job, no leader to hit, the paused leader kept the store locked or
 * made no write) is undone and taken again, up to FAULT_TRIES times; then
 * the run fails.
 * --store shares one store (PostgreSQL) across the rounds: each round checks
 * the run it created. Exit status 0 when every run passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store.h"

#define LEASE "cluster"
#define WORKERS_MAX 8
#define TIMEOUT_MS 1000
#define HEARTBEAT_MS 300
/* Reap bound: timeout + one poll period (the heartbeat interval bounds the
 * coordinator's poll), plus scheduling and this driver's own polling. */
#define REAP_SLACK_MS 250
/* Longest wait for a run to progress: a stuck run fails with a message
 * before CTest's timeout kills the driver. */
#define RUN_DEADLINE_MS 45000
#define LEASE_MS 2000
#define ELECTION_POLL_MS 100
#define FAULT_TRIES 3
#define FAULTS_PER_RUN 3
/* A fault that found its run complete is taken again in the next run;
 * runs added at the end for them, at most: */
#define EXTRA_RUNS_MAX 10
#define CARRIED_MAX 16
/* What a leader's coordinator logs when the fence rejected one of its writes. */
#define FENCE_REJECTED "the lease is no longer ours"
/* What a SQLite standby logs when a frozen leader kept the write lock. */
#define STORE_LOCKED "stayed locked"
/* What a leader logs when its term begins, and its verdicts when it ends. */
#define ELECTED "elected: leading with generation"
#define TERM_OVER "coordinator: term over: "

enum fault { KILL_WORKER, STOP_WORKER, WEDGE_WORKER, KILL_LEADER, STOP_LEADER, KILL_LEADER_IN_BATCH, FAULT_KINDS };
static const char *const fault_names[] = { "kill", "stop", "wedge", "failover", "failover-stop",
                                           "failover-batch" };
/* What "random" draws from (its schedules stay what they were); "random-batch"
 * kills the leader inside a batch in every run, plus random faults of these. */
#define RANDOM_KINDS (STOP_LEADER + 1)
/* What a leader's coordinator logs when a batch waits inside its transaction
 * (SDLIVE_PAUSE_BATCH_FILE exists): claims made and RESULTs recorded, not
 * committed. */
#define BATCH_PAUSED "batch paused inside its transaction"

struct proc {
        char name[32];
        pid_t pid;
        char *argv[40];
        int argc;
        bool stopped;
};

struct options {
        const char *cluster, *worker, *scenario, *payload;
        const char *store_url; /* NULL: a SQLite file per round */
        unsigned runs, workers;
        uint32_t jobs;
        uint64_t seed;
};

/* One fault of a run's schedule: injected when the run is (10 + jitter +
 * 25 x its place) percent done. */
struct planned {
        enum fault fault;
        unsigned target, jitter;
};

struct totals {
        unsigned runs, failed;
        struct planned carried[CARRIED_MAX]; /* faults the next run takes again */
        unsigned pending, carried_total;
        uint64_t lost, double_counted, redelivered, reexecuted;
        int64_t reap_max_ms, reap_sum_ms;
        unsigned reaps;
};

struct run {
        const struct options *o;
        char dir[64], url[512], sock[2][96], pause_file[96];
        struct proc leaders[2], workers[WORKERS_MAX];
        struct store *store;
        uint64_t run; /* the run this round created */
        unsigned leaders_killed, batch_kills;
        int64_t reap_max_ms;
        bool failed;
};

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        vprintf(format, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

static void fail(struct run *r, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct run *r, const char *format, ...) {
        va_list ap;

        printf("FAIL: ");
        va_start(ap, format);
        vprintf(format, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
        r->failed = true;
}

/* 64-bit xorshift: the same seed gives the same schedule everywhere. */
static uint64_t rng_state;
static uint64_t rng(void) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static void add_arg(struct proc *p, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void add_arg(struct proc *p, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&p->argv[p->argc++], format, ap) < 0)
                abort();
        va_end(ap);
}

static void spawn(struct run *r, struct proc *p) {
        char log[160];
        pid_t pid;

        snprintf(log, sizeof(log), "%s/%s.log", r->dir, p->name);
        pid = fork();
        if (pid < 0) {
                perror("fork");
                exit(2);
        }
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(127);
                setpgid(0, 0);
                execv(p->argv[0], p->argv);
                _exit(127);
        }
        p->pid = pid;
        p->stopped = false;
}

static void reap(struct proc *p, int sig) {
        if (p->pid <= 0)
                return;
        if (p->stopped)
                kill(p->pid, SIGCONT);
        kill(p->pid, sig);
        if (sig == SIGKILL || sig == SIGTERM) {
                int64_t deadline = now_ms() + 3000;
                while (waitpid(p->pid, NULL, WNOHANG) == 0) {
                        if (now_ms() > deadline) {
                                kill(p->pid, SIGKILL);
                                waitpid(p->pid, NULL, 0);
                                break;
                        }
                        sleep_ms(5);
                }
                p->pid = 0;
        }
        p->stopped = false;
}

static void make_leader(struct run *r, int i) {
        struct proc *p = &r->leaders[i];
        const struct options *o = r->o;

        snprintf(p->name, sizeof(p->name), "leader-%c", 'a' + i);
        add_arg(p, "%s", o->cluster);
        add_arg(p, "--store=%s", r->url);
        add_arg(p, "--node=%s", p->name);
        add_arg(p, "--lease=%dms", LEASE_MS);
        add_arg(p, "--election-poll=%dms", ELECTION_POLL_MS);
        add_arg(p, "--maintenance-interval=1h");
        add_arg(p, "--coordinator-socket=%s", r->sock[i]);
        add_arg(p, "--worker-timeout=%dms", TIMEOUT_MS);
        add_arg(p, "--worker-heartbeat=%dms", HEARTBEAT_MS);
        add_arg(p, "--job-run=%" PRIu32, o->jobs);
        add_arg(p, "--job-payload=%s", o->payload);
}

static void make_worker(struct run *r, unsigned i) {
        struct proc *p = &r->workers[i];

        snprintf(p->name, sizeof(p->name), "worker-%u", i);
        add_arg(p, "%s", r->o->worker);
        add_arg(p, "--coordinator=%s", r->sock[0]);
        add_arg(p, "--coordinator=%s", r->sock[1]);
        add_arg(p, "--identity=%s", p->name);
        add_arg(p, "--coordinator-timeout=%dms", TIMEOUT_MS);
        add_arg(p, "--heartbeat=%dms", HEARTBEAT_MS);
        add_arg(p, "--reconnect-max=300ms");
        add_arg(p, "--wedge-file=%s/wedge-%u", r->dir, i);
}

static int leader_index(struct run *r, uint64_t *generation) {
        struct store_lease_info info;

        if (store_lease_read(r->store, LEASE, &info) < 0 || !info.held)
                return -1;
        if (generation)
                *generation = info.generation;
        for (int i = 0; i < 2; i++)
                if (strcmp(info.holder, r->leaders[i].name) == 0)
                        return i;
        return -1;
}

static bool wait_until(struct run *r, int timeout_ms, bool (*cond)(struct run *, void *), void *arg) {
        int64_t deadline = now_ms() + timeout_ms;

        while (now_ms() < deadline) {
                if (cond(r, arg))
                        return true;
                sleep_ms(5);
        }
        return false;
}

static bool has_leader(struct run *r, void *arg) {
        return leader_index(r, NULL) == *(int *) arg;
}

static bool run_exists(struct run *r, void *arg) {
        struct store_run info;
        uint64_t ids[2];

        /* Runs of earlier rounds on a shared store are finished: the only
         * unfinished one is this round's. */
        if (store_runs_unfinished(r->store, ids, 2) < 1)
                return false;
        r->run = ids[0];
        return store_run_read(r->store, r->run, &info) >= 0;
}

static uint32_t done_count(struct run *r) {
        struct store_run info;
        return store_run_read(r->store, r->run, &info) >= 0 ? info.done_count : 0;
}

/* The run is over: a fault now finds nothing in flight to hit. */
static bool run_complete(struct run *r) {
        return done_count(r) >= r->o->jobs;
}

static bool reached(struct run *r, void *arg) {
        return done_count(r) >= *(uint32_t *) arg;
}

struct held {
        uint32_t n;
        uint32_t job[64];
        uint32_t attempt[64];
        const char *worker;
};

static void scan_held(struct run *r, struct held *h) {
        struct store_job j;

        h->n = 0;
        for (uint32_t i = 0; i < r->o->jobs && h->n < 64; i++)
                if (store_job_read(r->store, r->run, i, &j) >= 0 && j.status == STORE_JOB_ASSIGNED &&
                    strcmp(j.worker, h->worker) == 0) {
                        h->job[h->n] = i;
                        h->attempt[h->n++] = j.attempt;
                }
}

/* True once none of the jobs held at the fault is still in flight there. */
static bool released(struct run *r, void *arg) {
        struct held *h = arg;
        struct store_job j;

        for (uint32_t i = 0; i < h->n; i++)
                if (store_job_read(r->store, r->run, h->job[i], &j) < 0 ||
                    (j.status == STORE_JOB_ASSIGNED && j.attempt == h->attempt[i] &&
                     strcmp(j.worker, h->worker) == 0))
                        return false;
        return true;
}

/* Waits until worker w holds at least one job in flight, so that a fault
 * has something to hit; fills h with them. */
static bool wait_holding(struct run *r, struct held *h) {
        int64_t deadline = now_ms() + 10000;

        do {
                scan_held(r, h);
                if (h->n > 0)
                        return true;
                if (run_complete(r))
                        return false;
                sleep_ms(20);
        } while (now_ms() < deadline);
        return false;
}

/* After a worker froze or wedged at t0, measures how long until the
 * coordinator reaped it (its in-flight jobs requeued). RESULTs it sent just
 * before are let through first, so only jobs it really holds are watched.
 * False when it held none: there was no reap to time. */
static bool measure_reap(struct run *r, struct proc *w, int64_t t0, struct held *h) {
        int64_t took;

        sleep_ms(50);
        scan_held(r, h);
        if (h->n == 0)
                return false;
        if (!wait_until(r, 10000, released, h)) {
                fail(r, "%s: %u in-flight jobs never requeued", w->name, h->n);
                return true;
        }
        took = now_ms() - t0;
        say("  %s reaped after %" PRId64 " ms (%u jobs requeued; bound %d ms)", w->name, took, h->n,
            TIMEOUT_MS + HEARTBEAT_MS + REAP_SLACK_MS);
        if (took > TIMEOUT_MS + HEARTBEAT_MS + REAP_SLACK_MS)
                fail(r, "%s reaped after %" PRId64 " ms, beyond timeout + one poll", w->name, took);
        if (took > r->reap_max_ms)
                r->reap_max_ms = took;
        return true;
}

/* Bytes in p's log so far: where to look for what it logs next. */
static off_t log_size(struct run *r, const struct proc *p) {
        char path[160];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s.log", r->dir, p->name);
        return stat(path, &st) == 0 ? st.st_size : 0;
}

struct log_mark {
        const struct proc *p;
        off_t from;
        const char *text;
};

/* True once p's log holds text past offset from. */
static bool logged_since(struct run *r, void *arg) {
        const struct log_mark *m = arg;
        char path[160], *line = NULL;
        size_t size = 0;
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.log", r->dir, m->p->name);
        f = fopen(path, "re");
        if (!f)
                return false;
        if (fseeko(f, m->from, SEEK_SET) == 0)
                while (!found && getline(&line, &size, f) >= 0)
                        found = strstr(line, m->text) != NULL;
        free(line);
        fclose(f);
        return found;
}

/* Waits for a leader (one may be starting after an earlier fault): its
 * index, or -1 when none came within 10 s. */
static int wait_leader(struct run *r, uint64_t *generation) {
        int64_t deadline = now_ms() + 10000;
        int leader;

        while ((leader = leader_index(r, generation)) < 0 && now_ms() < deadline)
                sleep_ms(20);
        return leader;
}

/* True while some job is in flight: a leader paused now has writes to make
 * when it resumes. */
static bool jobs_in_flight(struct run *r, void *arg) {
        struct store_job j;

        (void) arg;
        if (run_complete(r))
                return false;
        for (uint32_t i = 0; i < r->o->jobs; i++)
                if (store_job_read(r->store, r->run, i, &j) >= 0 && j.status == STORE_JOB_ASSIGNED)
                        return true;
        return false;
}

/* SIGSTOP the leader until the standby leads, then SIGCONT it: a write it
 * makes must be rejected by the fence. A SQLite leader paused inside a
 * write transaction keeps the store's write lock and nobody can take over
 * (under systemd its watchdog kills it; that is the kill scenario, not
 * this one), and a resumed leader may stop before making any write: then
 * the pause did not take effect; it is taken again with whoever leads. */
static bool pause_leader(struct run *r) {
        for (int try = 1; try <= FAULT_TRIES; try++) {
                uint64_t generation, next;
                int leader = wait_leader(r, &generation), other;
                struct proc *paused, *standby;
                struct log_mark locked, rejected;
                int64_t t0, took;

                if (leader < 0) {
                        fail(r, "no leader to pause");
                        return true;
                }
                other = 1 - leader;
                paused = &r->leaders[leader];
                standby = &r->leaders[other];
                if (!wait_until(r, 5000, jobs_in_flight, NULL)) {
                        if (run_complete(r))
                                return false;
                        fail(r, "no job in flight to pause %s on", paused->name);
                        return true;
                }
                locked = (struct log_mark) { standby, log_size(r, standby), STORE_LOCKED };
                rejected = (struct log_mark) { paused, log_size(r, paused), FENCE_REJECTED };
                kill(paused->pid, SIGSTOP);
                paused->stopped = true;
                t0 = now_ms();
                if (!wait_until(r, LEASE_MS + 2 * ELECTION_POLL_MS + 1000, has_leader, &other)) {
                        kill(paused->pid, SIGCONT);
                        paused->stopped = false;
                        if (!logged_since(r, &locked)) {
                                fail(r, "%s did not take over from the paused %s", standby->name,
                                     paused->name);
                                return true;
                        }
                        say("  %s was paused inside a write transaction (the store stayed locked): "
                            "resumed, to be paused again", paused->name);
                        continue;
                }
                took = now_ms() - t0;
                leader_index(r, &next);
                say("  %s leads now, %" PRId64 " ms after the pause (generation %" PRIu64 " -> %" PRIu64 ")",
                    standby->name, took, generation, next);
                kill(paused->pid, SIGCONT);
                paused->stopped = false;
                if (wait_until(r, 3000, logged_since, &rejected)) {
                        say("  %s resumed: its write was rejected by the fence", paused->name);
                        return true;
                }
                say("  %s resumed without a write rejected by the fence: to be paused again", paused->name);
        }
        fail(r, "the paused-leader fault did not take effect in %d tries", FAULT_TRIES);
        return true;
}

/* Injects fault f and sees it take effect. False when the run completed
 * before it could (nothing left to hit); a fault that went wrong fails the
 * run. */
/* SIGKILL of the leader while its writer waits inside a batch that has
 * claimed jobs and recorded RESULTs, not yet committed. */
static bool kill_leader_in_batch(struct run *r) {
        uint64_t generation, next;
        struct log_mark mark;
        int leader, other, fd;

        if (run_complete(r))
                return false;
        leader = wait_leader(r, &generation);
        if (leader < 0) {
                fail(r, "no leader to kill");
                return true;
        }
        other = 1 - leader;
        mark = (struct log_mark) { &r->leaders[leader], log_size(r, &r->leaders[leader]), BATCH_PAUSED };
        fd = open(r->pause_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
                fail(r, "cannot create %s: %s", r->pause_file, strerror(errno));
                return true;
        }
        close(fd);
        if (!wait_until(r, 5000, logged_since, &mark)) {
                unlink(r->pause_file);
                if (run_complete(r))
                        return false;
                fail(r, "%s never paused inside a batch", r->leaders[leader].name);
                return true;
        }
        reap(&r->leaders[leader], SIGKILL);
        unlink(r->pause_file);
        r->leaders_killed++;
        r->batch_kills++;
        say("  %s killed inside a batch (jobs claimed and RESULTs recorded, not committed)",
            r->leaders[leader].name);
        if (!wait_until(r, 10000, has_leader, &other)) {
                fail(r, "%s never took over", r->leaders[other].name);
                return true;
        }
        leader_index(r, &next);
        say("  %s leads now (generation %" PRIu64 " -> %" PRIu64 ")", r->leaders[other].name,
            generation, next);
        spawn(r, &r->leaders[leader]);
        return true;
}

static bool inject(struct run *r, enum fault f, unsigned target) {
        struct proc *w = &r->workers[target % r->o->workers];
        struct held h = { .worker = w->name };
        char path[160];
        uint64_t generation, next;
        int leader, other;

        say("  fault: %s %s at %u/%u done", fault_names[f],
            f >= KILL_LEADER ? "leader" : w->name, done_count(r), r->o->jobs);
        switch (f) {
        case KILL_WORKER:
                if (!wait_holding(r, &h)) {
                        if (run_complete(r))
                                return false;
                        fail(r, "%s never held a job to lose", w->name);
                        break;
                }
                reap(w, SIGKILL);
                if (!wait_until(r, 10000, released, &h))
                        fail(r, "%s: %u jobs in flight when it died never requeued", w->name, h.n);
                sleep_ms(300); /* Restart=on-failure, RestartSec= */
                spawn(r, w);
                break;
        case STOP_WORKER:
                for (int try = 1; try <= FAULT_TRIES; try++) {
                        bool hit;

                        if (!wait_holding(r, &h)) {
                                if (run_complete(r))
                                        return false;
                                fail(r, "%s never held a job to freeze", w->name);
                                break;
                        }
                        kill(w->pid, SIGSTOP);
                        w->stopped = true;
                        hit = measure_reap(r, w, now_ms(), &h);
                        sleep_ms(500);
                        kill(w->pid, SIGCONT);
                        w->stopped = false;
                        if (hit)
                                break;
                        say("  %s held no job when frozen: resumed, to be frozen again", w->name);
                        if (try == FAULT_TRIES)
                                fail(r, "%s held no job in %d freezes", w->name, FAULT_TRIES);
                }
                break;
        case WEDGE_WORKER:
                snprintf(path, sizeof(path), "%s/wedge-%u", r->dir, target % r->o->workers);
                for (int try = 1; try <= FAULT_TRIES; try++) {
                        bool hit;

                        if (!wait_holding(r, &h)) {
                                if (run_complete(r))
                                        return false;
                                fail(r, "%s never held a job to wedge on", w->name);
                                break;
                        }
                        close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
                        hit = measure_reap(r, w, now_ms(), &h);
                        /* Standing in for the watchdog: kill, clear, restart. */
                        reap(w, SIGKILL);
                        unlink(path);
                        spawn(r, w);
                        if (hit)
                                break;
                        say("  %s held no job when wedged: restarted, to be wedged again", w->name);
                        if (try == FAULT_TRIES)
                                fail(r, "%s held no job in %d wedges", w->name, FAULT_TRIES);
                }
                break;
        case KILL_LEADER:
                if (run_complete(r))
                        return false;
                leader = wait_leader(r, &generation);
                if (leader < 0) {
                        fail(r, "no leader to kill");
                        break;
                }
                other = 1 - leader;
                reap(&r->leaders[leader], SIGKILL);
                r->leaders_killed++;
                if (!wait_until(r, 10000, has_leader, &other)) {
                        fail(r, "%s never took over", r->leaders[other].name);
                        break;
                }
                leader_index(r, &next);
                say("  %s leads now (generation %" PRIu64 " -> %" PRIu64 ")", r->leaders[other].name,
                    generation, next);
                spawn(r, &r->leaders[leader]);
                break;
        case STOP_LEADER:
                return pause_leader(r);
        case KILL_LEADER_IN_BATCH:
                return kill_leader_in_batch(r);
        default:
                break;
        }
        return true;
}

/* What the coordinators said about the RESULTs of one run: each leader
 * logs its term's verdicts when the term ends. */
struct verdicts {
        unsigned elections, terms;
        uint64_t counted, duplicates, stale;
};

static void read_verdicts(struct run *r, const struct proc *p, struct verdicts *v) {
        char path[160], *line = NULL, *at;
        unsigned long long assigned, counted, duplicates, stale;
        size_t size = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.log", r->dir, p->name);
        f = fopen(path, "re");
        if (!f)
                return;
        while (getline(&line, &size, f) >= 0) {
                if (strstr(line, ELECTED))
                        v->elections++;
                at = strstr(line, TERM_OVER);
                if (at && sscanf(at + strlen(TERM_OVER), "%llu jobs assigned, %llu counted, %llu duplicate and %llu stale",
                                 &assigned, &counted, &duplicates, &stale) == 4) {
                        v->terms++;
                        v->counted += counted;
                        v->duplicates += duplicates;
                        v->stale += stale;
                }
        }
        free(line);
        fclose(f);
}

/* No RESULT was judged a duplicate. The workers send each attempt's RESULT
 * once, so a duplicate is a superseded attempt's RESULT taken for the
 * job's own: either it came after the job was done, or it counted and the
 * last attempt's RESULT then found the job done (counted by the wrong
 * attempt, while the totals still add up). Runs after the leaders stopped
 * (a term's verdicts are logged when it ends); every term must be
 * accounted for but those of leaders this driver killed. */
static void verify_verdicts(struct run *r) {
        struct verdicts v = { 0 };

        for (int i = 0; i < 2; i++)
                read_verdicts(r, &r->leaders[i], &v);
        say("  verdicts of %u terms (%u elections, %u leaders killed): %" PRIu64 " RESULTs counted, %" PRIu64
            " refused as stale, %" PRIu64 " as duplicates",
            v.terms, v.elections, r->leaders_killed, v.counted, v.stale, v.duplicates);
        if (v.terms == 0 || v.terms + r->leaders_killed < v.elections)
                fail(r, "verdicts missing: %u terms logged their verdicts, %u elections, %u leaders killed", v.terms,
                     v.elections, r->leaders_killed);
        if (v.duplicates)
                fail(r, "%" PRIu64 " RESULTs judged duplicates: a superseded attempt's RESULT was taken for the "
                     "job's own", v.duplicates);
}

static void verify(struct run *r, struct totals *t) {
        struct store_log_summary log;
        struct store_run info;
        struct store_job j;
        uint32_t done = 0, missing = 0;
        uint64_t runs[4];

        if (store_run_read(r->store, r->run, &info) < 0) {
                fail(r, "run %" PRIu64 " unreadable: %s", r->run, store_errmsg(r->store));
                return;
        }
        for (uint32_t i = 0; i < r->o->jobs; i++) {
                if (store_job_read(r->store, r->run, i, &j) < 0 || j.status != STORE_JOB_DONE)
                        missing++;
                else
                        done++;
        }
        if (store_log_summary(r->store, LEASE, &log) < 0) {
                fail(r, "write log summary unreadable: %s", store_errmsg(r->store));
                return;
        }
        say("  run: done_count %u of %u, jobs done %u, missing %u, redelivered %u, executed twice+ %u, "
            "write-log overlaps %" PRIu64 ", unfinished runs %d",
            info.done_count, info.total, done, missing, info.jobs_redelivered, info.jobs_reexecuted,
            log.overlaps, store_runs_unfinished(r->store, runs, 4));
        t->lost += missing;
        if (info.done_count > done)
                t->double_counted += info.done_count - done;
        t->redelivered += info.jobs_redelivered;
        t->reexecuted += info.jobs_reexecuted;
        if (missing)
                fail(r, "%u jobs missing", missing);
        if (info.done_count != r->o->jobs || info.jobs_done != r->o->jobs)
                fail(r, "done count %u (jobs done %u), expected exactly %u", info.done_count,
                     info.jobs_done, r->o->jobs);
        if (info.jobs_redelivered < 1)
                fail(r, "no job was redelivered: the fault did not exercise redelivery");
        if (log.overlaps)
                fail(r, "%" PRIu64 " write-log overlaps: two leaders wrote at once", log.overlaps);
}

/* A fault the run's end left without effect is carried into the next run;
 * more than CARRIED_MAX of them fail the whole scenario. */
static void carry(struct totals *t, struct planned f) {
        t->carried_total++;
        if (t->pending == CARRIED_MAX) {
                say("FAIL: more than %d faults found their run complete", CARRIED_MAX);
                t->failed++;
                return;
        }
        t->carried[t->pending++] = f;
}

/* One run with its faults in order; returns how many of them took effect
 * (the rest found the run complete). */
static unsigned one_run(const struct options *o, unsigned number, const struct planned *plan,
                        unsigned n_faults, struct totals *t) {
        struct run r = { .o = o };
        struct store_run info;
        uint32_t target = o->jobs;
        unsigned taken = 0;
        bool verified = false;
        int first = 0;
        char cmd[128];

        snprintf(r.dir, sizeof(r.dir), "/tmp/jobs-faults-XXXXXX");
        if (!mkdtemp(r.dir)) {
                perror("mkdtemp");
                exit(2);
        }
        if (o->store_url)
                snprintf(r.url, sizeof(r.url), "%s", o->store_url);
        else
                snprintf(r.url, sizeof(r.url), "sqlite:%s/store.db", r.dir);
        for (int i = 0; i < 2; i++)
                snprintf(r.sock[i], sizeof(r.sock[i]), "%s/leader-%c.sock", r.dir, 'a' + i);
        snprintf(r.pause_file, sizeof(r.pause_file), "%s/pause-batch", r.dir);
        setenv("SDLIVE_PAUSE_BATCH_FILE", r.pause_file, 1);
        say("run %u: %u jobs (%s), %u workers, faults:", number, o->jobs, o->payload, o->workers);
        for (unsigned i = 0; i < n_faults; i++)
                say("  - %s at %u%%", fault_names[plan[i].fault], 10 + plan[i].jitter + i * 25);
        if (store_open(r.url, &r.store) < 0) {
                fprintf(stderr, "store: %s\n", store_errmsg(NULL));
                exit(2);
        }

        make_leader(&r, 0);
        make_leader(&r, 1);
        spawn(&r, &r.leaders[0]);
        if (!wait_until(&r, 10000, has_leader, &first) || !wait_until(&r, 10000, run_exists, NULL)) {
                fail(&r, "leader-a never led or created the run");
                goto out;
        }
        if (store_run_read(r.store, r.run, &info) < 0 || info.total != o->jobs) {
                fail(&r, "run %" PRIu64 " is not this round's run of %u jobs", r.run, o->jobs);
                goto out;
        }
        spawn(&r, &r.leaders[1]);
        for (unsigned i = 0; i < o->workers; i++) {
                make_worker(&r, i);
                spawn(&r, &r.workers[i]);
        }
        for (unsigned i = 0; i < n_faults && !r.failed; i++, taken++) {
                uint32_t when = (uint32_t) ((uint64_t) o->jobs * (10 + plan[i].jitter + i * 25) / 100);
                if (!wait_until(&r, RUN_DEADLINE_MS, reached, &when)) {
                        fail(&r, "stuck at %u/%u before fault %u", done_count(&r), o->jobs, i);
                        goto out;
                }
                if (!inject(&r, plan[i].fault, plan[i].target)) {
                        say("  the run was complete before the %s fault took effect: it is taken again "
                            "in the next run", fault_names[plan[i].fault]);
                        break;
                }
        }
        if (!wait_until(&r, RUN_DEADLINE_MS, reached, &target))
                fail(&r, "stuck at %u/%u", done_count(&r), o->jobs);
        sleep_ms(200); /* late RESULTs land, harmlessly */
        verify(&r, t);
        verified = true;
out:
        for (unsigned i = 0; i < o->workers; i++)
                reap(&r.workers[i], SIGTERM);
        /* The standby first: released by a graceful stop, the lease would
         * elect it, and it would create a run of its own in the store. */
        first = leader_index(&r, NULL) == 0 ? 1 : 0;
        reap(&r.leaders[first], SIGTERM);
        reap(&r.leaders[1 - first], SIGTERM);
        if (verified)
                verify_verdicts(&r);
        store_close(r.store);
        t->runs++;
        if (r.reap_max_ms) {
                t->reaps++;
                t->reap_sum_ms += r.reap_max_ms;
                if (r.reap_max_ms > t->reap_max_ms)
                        t->reap_max_ms = r.reap_max_ms;
        }
        if (r.failed) {
                t->failed++;
                say("run %u FAILED; logs kept in %s", number, r.dir);
        } else {
                snprintf(cmd, sizeof(cmd), "rm -rf %s", r.dir);
                if (system(cmd) != 0)
                        say("could not remove %s", r.dir);
                say("run %u passed", number);
        }
        for (int i = 0; i < 2; i++)
                for (int a = 0; a < r.leaders[i].argc; a++)
                        free(r.leaders[i].argv[a]);
        for (unsigned i = 0; i < o->workers; i++)
                for (int a = 0; a < r.workers[i].argc; a++)
                        free(r.workers[i].argv[a]);
        return r.failed ? n_faults : taken;
}

static int scenario_fault(const char *name) {
        for (int f = 0; f < FAULT_KINDS; f++)
                if (strcmp(name, fault_names[f]) == 0)
                        return f;
        return -1;
}

static void usage_exit(void) {
        fprintf(stderr, "usage: jobs-faults --cluster BIN --worker BIN --scenario "
                        "kill|stop|wedge|failover|failover-stop|failover-batch|random|random-batch [--runs K] [--seed S] "
                        "[--jobs N] [--workers W] [--payload P] [--store URL]\n");
        exit(2);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "cluster", required_argument, NULL, 'c' }, { "worker", required_argument, NULL, 'w' },
                { "scenario", required_argument, NULL, 's' }, { "runs", required_argument, NULL, 'r' },
                { "seed", required_argument, NULL, 'S' }, { "jobs", required_argument, NULL, 'n' },
                { "workers", required_argument, NULL, 'W' }, { "payload", required_argument, NULL, 'p' },
                { "store", required_argument, NULL, 'u' },
                {}
        };
        struct options o = { .runs = 1, .workers = 3, .jobs = 1000, .seed = 20261129, .payload = "spin 2000" };
        struct totals t = { 0 };
        const char *env = getenv("SDLIVE_FAULT_SEED");
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'c': o.cluster = optarg; break;
                case 'w': o.worker = optarg; break;
                case 's': o.scenario = optarg; break;
                case 'r': o.runs = (unsigned) strtoul(optarg, NULL, 10); break;
                case 'S': o.seed = strtoull(optarg, NULL, 0); break;
                case 'n': o.jobs = (uint32_t) strtoul(optarg, NULL, 10); break;
                case 'W': o.workers = (unsigned) strtoul(optarg, NULL, 10); break;
                case 'p': o.payload = optarg; break;
                case 'u': o.store_url = optarg; break;
                default: usage_exit();
                }
        }
        if (!o.cluster || !o.worker || !o.scenario || o.runs == 0 || o.jobs < 10 || o.workers < 2 ||
            o.workers > WORKERS_MAX)
                usage_exit();
        if (env && *env)
                o.seed = strtoull(env, NULL, 0);
        rng_state = o.seed ? o.seed : 1;
        signal(SIGPIPE, SIG_IGN);

        int named = -1;
        bool random_batch = strcmp(o.scenario, "random-batch") == 0;
        if (strcmp(o.scenario, "random") != 0 && !random_batch && (named = scenario_fault(o.scenario)) < 0)
                usage_exit();
        for (unsigned run = 1; run <= o.runs || t.pending; run++) {
                struct options ro = o;
                struct planned plan[FAULTS_PER_RUN];
                unsigned n = 0, k, taken;

                if (run > o.runs + EXTRA_RUNS_MAX) {
                        say("FAIL: %u faults still found no run to hit after %u extra runs", t.pending,
                            EXTRA_RUNS_MAX);
                        t.failed++;
                        break;
                }
                while (n < t.pending && n < FAULTS_PER_RUN)
                        plan[n] = t.carried[n], n++;
                memmove(t.carried, t.carried + n, (t.pending - n) * sizeof(t.carried[0]));
                t.pending -= n;
                if (run <= o.runs) {
                        k = named >= 0 ? 1 : 1 + (unsigned) (rng() % FAULTS_PER_RUN);
                        for (unsigned i = 0; i < k; i++) {
                                struct planned f = { (enum fault) named, run % o.workers, 20 };
                                if (named < 0) {
                                        f.fault = (enum fault) (rng() % RANDOM_KINDS);
                                        f.target = (unsigned) (rng() % o.workers);
                                        f.jitter = (unsigned) (rng() % 25);
                                        if (random_batch && i == 0)
                                                f.fault = KILL_LEADER_IN_BATCH;
                                }
                                if (n < FAULTS_PER_RUN)
                                        plan[n++] = f;
                                else
                                        carry(&t, f);
                        }
                }
                ro.jobs = o.jobs * n;
                taken = one_run(&ro, run, plan, n, &t);
                for (unsigned i = taken; i < n; i++)
                        carry(&t, plan[i]);
        }
        say("summary: scenario %s, seed %" PRIu64 ", %u runs, %u failed; faults taken again in a later run "
            "%u; jobs lost: %" PRIu64 ", double-counted: %" PRIu64 "; redelivered %" PRIu64
            ", executed twice+ %" PRIu64 "; reap latency max %" PRId64 " ms%s",
            o.scenario, o.seed, t.runs, t.failed, t.carried_total, t.lost, t.double_counted, t.redelivered,
            t.reexecuted, t.reap_max_ms, t.reaps ? "" : " (no reap timed)");
        return t.failed ? 1 : 0;
}
