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

#include "faults.h"

const char *const fault_names[FAULT_KINDS] = { "kill", "stop", "wedge", "failover", "failover-stop",
                                           "failover-batch" };

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

/* A worker fault that took effect leaves jobs a worker held and never
 * finished: they must be delivered again. A leader's fault alone may not
 * (its workers keep their jobs and report them to the next leader). */
static bool forces_redelivery(const struct planned *plan, unsigned taken) {
        for (unsigned i = 0; i < taken; i++)
                if (plan[i].fault == KILL_WORKER || plan[i].fault == STOP_WORKER ||
                    plan[i].fault == WEDGE_WORKER)
                        return true;
        return false;
}

static void verify(struct run *r, struct totals *t, bool expect_redelivery) {
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
        if (expect_redelivery && info.jobs_redelivered < 1)
                fail(r, "no job was redelivered after a worker's fault: its jobs were never delivered again");
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
        verify(&r, t, forces_redelivery(plan, taken));
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
