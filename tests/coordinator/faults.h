/* SPDX-License-Identifier: MIT */
/*
 * The fault-run driver's shared parts (jobs_faults.c has the overview):
 * the processes, waits and logs (faults_proc.c) and the faults injected
 * (faults_inject.c).
 */
#ifndef SDLIVE_TEST_JOBS_FAULTS_H
#define SDLIVE_TEST_JOBS_FAULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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
/* A busy SQLite leader is inside a write transaction much of the time (most
 * of it under the sanitizers), and a pause taken there is taken again: the
 * paused-leader fault gets more tries than the others. */
#define PAUSE_TRIES 8
#define FAULTS_PER_RUN 3
/* A fault that found its run complete is taken again in the next run;
 * runs added at the end for them, at most: */
#define EXTRA_RUNS_MAX 10
#define CARRIED_MAX 16
/* What a leader's coordinator logs when the fence rejected one of its writes. */
#define FENCE_REJECTED "the lease is no longer ours"
/* What a SQLite standby logs when a frozen leader kept the write lock. */
#define STORE_LOCKED "stayed locked"
/* What a standby logs when a streak of failed attempts ends (the first
 * failure of a streak is logged, the ones after it are not). */
#define STORE_RECOVERED "store reachable again"
/* What a leader logs when its term begins, and its verdicts when it ends. */
#define ELECTED "elected: leading with generation"
#define TERM_OVER "coordinator: term over: "

enum fault { KILL_WORKER, STOP_WORKER, WEDGE_WORKER, KILL_LEADER, STOP_LEADER, KILL_LEADER_IN_BATCH, FAULT_KINDS };
extern const char *const fault_names[FAULT_KINDS];
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

struct held {
        uint32_t n;
        uint32_t job[64];
        uint32_t attempt[64];
        const char *worker;
};

struct log_mark {
        const struct proc *p;
        off_t from;
        const char *text;
};

/* faults_proc.c */
extern uint64_t rng_state;
void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
void fail(struct run *r, const char *format, ...) __attribute__((format(printf, 2, 3)));
void add_arg(struct proc *p, const char *format, ...) __attribute__((format(printf, 2, 3)));
int64_t now_ms(void);
void sleep_ms(int ms);
uint64_t rng(void);
void spawn(struct run *r, struct proc *p);
void reap(struct proc *p, int sig);
void make_leader(struct run *r, int i);
void make_worker(struct run *r, unsigned i);
int leader_index(struct run *r, uint64_t *generation);
bool wait_until(struct run *r, int timeout_ms, bool (*cond)(struct run *, void *), void *arg);
bool has_leader(struct run *r, void *arg);
bool run_exists(struct run *r, void *arg);
uint32_t done_count(struct run *r);
/* The run is over: a fault now finds nothing in flight to hit. */
bool run_complete(struct run *r);
bool reached(struct run *r, void *arg);
void scan_held(struct run *r, struct held *h);
/* True once none of the jobs held at the fault is still in flight there. */
bool released(struct run *r, void *arg);
/* Waits until worker w holds at least one job in flight, so that a fault
 * has something to hit; fills h with them. */
bool wait_holding(struct run *r, struct held *h);
/* After a worker froze or wedged at t0, measures how long until the
 * coordinator reaped it (its in-flight jobs requeued). RESULTs it sent just
 * before are let through first, so only jobs it really holds are watched.
 * False when it held none: there was no reap to time. */
bool measure_reap(struct run *r, struct proc *w, int64_t t0, struct held *h);
/* Bytes in p's log so far: where to look for what it logs next. */
off_t log_size(struct run *r, const struct proc *p);
/* True once p's log holds text past offset from. */
bool logged_since(struct run *r, void *arg);
/* Waits for a leader (one may be starting after an earlier fault): its
 * index, or -1 when none came within 10 s. */
int wait_leader(struct run *r, uint64_t *generation);
/* True while some job is in flight: a leader paused now has writes to make
 * when it resumes. */
bool jobs_in_flight(struct run *r, void *arg);

/* faults_inject.c */
/* SIGSTOP the leader until the standby leads, then SIGCONT it: a write it
 * makes must be rejected by the fence. A SQLite leader paused inside a
 * write transaction keeps the store's write lock and nobody can take over
 * (under systemd its watchdog kills it; that is the kill scenario, not
 * this one), and a resumed leader may stop before making any write: then
 * the pause did not take effect; it is taken again with whoever leads. */
bool pause_leader(struct run *r);
/* SIGKILL of the leader while its writer waits inside a batch that has
 * claimed jobs and recorded RESULTs, not yet committed. */
bool kill_leader_in_batch(struct run *r);
/* Injects fault f and sees it take effect. False when the run completed
 * before it could (nothing left to hit); a fault that went wrong fails the
 * run. */
bool inject(struct run *r, enum fault f, unsigned target);

#endif
