/* SPDX-License-Identifier: MIT */
/*
 * Fault runs for at-least-once jobs: two sdlive-cluster instances (one
 * leads and coordinates, one stands by) and W sdlive-worker daemons share
 * a SQLite store; a run of N jobs goes through while this driver injects
 * faults mid-run, then checks the store: every job done, the done count
 * exactly N, at least one job redelivered (the redelivery path ran), no
 * overlap of two leaders' writes.
 *
 *   jobs-faults --cluster BIN --worker BIN --scenario NAME [--runs K]
 *               [--seed S] [--jobs N] [--workers W] [--payload P] [--store URL]
 *
 * Scenarios: kill (SIGKILL a worker; it is restarted as systemd would),
 * stop (SIGSTOP a worker: half-open; reaped within timeout + one poll;
 * SIGCONT later, its late RESULTs are harmless), wedge (the worker's main
 * loop hangs; this driver stands in for the watchdog: SIGKILL and restart),
 * failover (SIGKILL the leader), failover-stop (SIGSTOP the leader until the
 * standby leads, then SIGCONT: its writes are fenced), random (1-3 of the
 * above per run from a seeded generator; SDLIVE_FAULT_SEED overrides
 * --seed). Times are scaled: worker timeout 1 s, heartbeats 300 ms, lease 2 s.
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
#define RUN_DEADLINE_MS 120000

enum fault { KILL_WORKER, STOP_WORKER, WEDGE_WORKER, KILL_LEADER, STOP_LEADER, FAULT_KINDS };
static const char *const fault_names[] = { "kill", "stop", "wedge", "failover", "failover-stop" };

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

struct totals {
        unsigned runs, failed;
        uint64_t lost, double_counted, redelivered, reexecuted;
        int64_t reap_max_ms, reap_sum_ms;
        unsigned reaps;
};

struct run {
        const struct options *o;
        char dir[64], url[512], sock[2][96];
        struct proc leaders[2], workers[WORKERS_MAX];
        struct store *store;
        uint64_t run; /* the run this round created */
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
        add_arg(p, "--lease=2s");
        add_arg(p, "--election-poll=100ms");
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

/* After a worker froze or wedged at t0, measures how long until the
 * coordinator reaped it (its in-flight jobs requeued). RESULTs it sent just
 * before are let through first, so only jobs it really holds are watched. */
static void measure_reap(struct run *r, struct proc *w, int64_t t0, struct held *h) {
        int64_t took;

        sleep_ms(50);
        scan_held(r, h);
        if (h->n == 0) {
                say("  %s held no job at the fault: no reap to time", w->name);
                return;
        }
        if (!wait_until(r, 10000, released, h)) {
                fail(r, "%s: %u in-flight jobs never requeued", w->name, h->n);
                return;
        }
        took = now_ms() - t0;
        say("  %s reaped after %" PRId64 " ms (%u jobs requeued; bound %d ms)", w->name, took, h->n,
            TIMEOUT_MS + HEARTBEAT_MS + REAP_SLACK_MS);
        if (took > TIMEOUT_MS + HEARTBEAT_MS + REAP_SLACK_MS)
                fail(r, "%s reaped after %" PRId64 " ms, beyond timeout + one poll", w->name, took);
        if (took > r->reap_max_ms)
                r->reap_max_ms = took;
}

static void inject(struct run *r, enum fault f, unsigned target) {
        struct proc *w = &r->workers[target % r->o->workers];
        struct held h = { .worker = w->name };
        char path[160];
        uint64_t generation, next;
        int leader, other;

        say("  fault: %s %s at %u/%u done", fault_names[f],
            f >= KILL_LEADER ? "leader" : w->name, done_count(r), r->o->jobs);
        switch (f) {
        case KILL_WORKER:
                reap(w, SIGKILL);
                sleep_ms(300); /* Restart=on-failure, RestartSec= */
                spawn(r, w);
                break;
        case STOP_WORKER:
                kill(w->pid, SIGSTOP);
                w->stopped = true;
                measure_reap(r, w, now_ms(), &h);
                sleep_ms(500);
                kill(w->pid, SIGCONT);
                w->stopped = false;
                break;
        case WEDGE_WORKER:
                snprintf(path, sizeof(path), "%s/wedge-%u", r->dir, target % r->o->workers);
                close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
                measure_reap(r, w, now_ms(), &h);
                /* Standing in for the watchdog: kill, clear, restart. */
                reap(w, SIGKILL);
                unlink(path);
                spawn(r, w);
                break;
        case KILL_LEADER:
        case STOP_LEADER:
                leader = leader_index(r, &generation);
                if (leader < 0) {
                        say("  no leader right now: fault skipped");
                        break;
                }
                other = 1 - leader;
                if (f == KILL_LEADER)
                        reap(&r->leaders[leader], SIGKILL);
                else {
                        kill(r->leaders[leader].pid, SIGSTOP);
                        r->leaders[leader].stopped = true;
                }
                /* A frozen process may hold the SQLite write lock (stopped
                 * mid-transaction): then nobody can take over until it dies,
                 * which is what the watchdog does to it. Stand in for it. */
                if (f == STOP_LEADER && !wait_until(r, 3500, has_leader, &other)) {
                        say("  store still locked by the frozen leader: killing it (the watchdog's part)");
                        reap(&r->leaders[leader], SIGKILL);
                        f = KILL_LEADER;
                }
                if (!wait_until(r, 10000, has_leader, &other)) {
                        fail(r, "%s never took over", r->leaders[other].name);
                        break;
                }
                leader_index(r, &next);
                say("  %s leads now (generation %" PRIu64 " -> %" PRIu64 ")", r->leaders[other].name,
                    generation, next);
                if (f == KILL_LEADER)
                        spawn(r, &r->leaders[leader]);
                else {
                        kill(r->leaders[leader].pid, SIGCONT);
                        r->leaders[leader].stopped = false;
                }
                break;
        default:
                break;
        }
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
        store_log_summary(r->store, LEASE, &log);
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

static void one_run(const struct options *o, unsigned number, const enum fault *faults,
                    const unsigned *targets, const unsigned *at_percent, unsigned n_faults,
                    struct totals *t) {
        struct run r = { .o = o };
        uint32_t target = o->jobs;
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
        say("run %u: %u jobs (%s), %u workers, faults:", number, o->jobs, o->payload, o->workers);
        for (unsigned i = 0; i < n_faults; i++)
                say("  - %s at %u%%", fault_names[faults[i]], at_percent[i]);
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
        spawn(&r, &r.leaders[1]);
        for (unsigned i = 0; i < o->workers; i++) {
                make_worker(&r, i);
                spawn(&r, &r.workers[i]);
        }
        for (unsigned i = 0; i < n_faults && !r.failed; i++) {
                uint32_t when = (uint32_t) ((uint64_t) o->jobs * at_percent[i] / 100);
                if (!wait_until(&r, RUN_DEADLINE_MS, reached, &when)) {
                        fail(&r, "stuck at %u/%u before fault %u", done_count(&r), o->jobs, i);
                        goto out;
                }
                inject(&r, faults[i], targets[i]);
        }
        if (!wait_until(&r, RUN_DEADLINE_MS, reached, &target))
                fail(&r, "stuck at %u/%u", done_count(&r), o->jobs);
        sleep_ms(200); /* late RESULTs land, harmlessly */
        verify(&r, t);
out:
        for (unsigned i = 0; i < o->workers; i++)
                reap(&r.workers[i], SIGTERM);
        for (int i = 0; i < 2; i++)
                reap(&r.leaders[i], SIGTERM);
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
}

static int scenario_fault(const char *name) {
        for (int f = 0; f < FAULT_KINDS; f++)
                if (strcmp(name, fault_names[f]) == 0)
                        return f;
        return -1;
}

static void usage_exit(void) {
        fprintf(stderr, "usage: jobs-faults --cluster BIN --worker BIN --scenario "
                        "kill|stop|wedge|failover|failover-stop|random [--runs K] [--seed S] "
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

        for (unsigned run = 1; run <= o.runs; run++) {
                enum fault faults[3];
                unsigned targets[3], at[3], n = 1;

                if (strcmp(o.scenario, "random") == 0) {
                        n = 1 + (unsigned) (rng() % 3);
                        for (unsigned i = 0; i < n; i++) {
                                faults[i] = (enum fault) (rng() % FAULT_KINDS);
                                targets[i] = (unsigned) (rng() % o.workers);
                                at[i] = 10 + (unsigned) (rng() % 25) + i * 25;
                        }
                } else {
                        int f = scenario_fault(o.scenario);
                        if (f < 0)
                                usage_exit();
                        faults[0] = (enum fault) f;
                        targets[0] = run % o.workers;
                        at[0] = 30;
                }
                one_run(&o, run, faults, targets, at, n, &t);
        }
        say("summary: scenario %s, seed %" PRIu64 ", %u runs, %u failed; jobs lost: %" PRIu64
            ", double-counted: %" PRIu64 "; redelivered %" PRIu64 ", executed twice+ %" PRIu64
            "; reap latency max %" PRId64 " ms%s",
            o.scenario, o.seed, t.runs, t.failed, t.lost, t.double_counted, t.redelivered, t.reexecuted,
            t.reap_max_ms, t.reaps ? "" : " (no reap timed)");
        return t.failed ? 1 : 0;
}
